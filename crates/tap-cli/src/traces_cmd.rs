//! `tap traces list|show`: the ledger's traces, on the control plane (`traces.list`,
//! `traces.get`), from this run and earlier ones.

use crate::durations::{format_us, time_us};
use crate::output::{connect_control, control_fail, note_ledger, print_json, print_table};
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::control::ControlCall;
use tap_protocol::ledger::{SpanStatus, Trace, TraceRef, TracesList, TracesListParams};

/// `tap traces list [filters] [--json]`.
pub async fn list(home: &Path, params: TracesListParams, json: bool) -> ExitCode {
    let client = match connect_control(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let page: TracesList = match client.call(ControlCall::TracesList(params)).await {
        Ok(p) => p,
        Err(e) => return control_fail(e),
    };
    note_ledger(&page.ledger);
    let more = page.next_before_us.is_some();
    if json {
        print_json(&page.traces);
        if more {
            eprintln!("tap: older traces not listed (raise --limit or narrow with --since)");
        }
        return ExitCode::SUCCESS;
    }
    if page.traces.is_empty() {
        println!("No traces.");
        return ExitCode::SUCCESS;
    }
    let rows: Vec<[String; 7]> = page
        .traces
        .iter()
        .map(|t| {
            let status = match (t.status, &t.error_code) {
                (SpanStatus::Ok, _) => "ok".to_string(),
                (SpanStatus::Error, Some(code)) => format!("✗ {code}"),
                (SpanStatus::Error, None) => "✗ error".to_string(),
            };
            let reached = match (&t.provider, &t.tool) {
                (Some(p), Some(tool)) => format!("{p}/{tool}"),
                (Some(p), None) => p.clone(),
                (None, Some(tool)) => format!("-/{tool}"),
                (None, None) => "-".into(),
            };
            [
                time_us(t.start_us),
                format_us(t.duration_us),
                status,
                t.name.clone(),
                t.session_id.clone().unwrap_or_else(|| "-".into()),
                reached,
                t.trace_id.clone(),
            ]
        })
        .collect();
    let header = [
        "TIME",
        "DURATION",
        "STATUS",
        "NAME",
        "SESSION",
        "PROVIDER/TOOL",
        "TRACE",
    ]
    .map(String::from);
    print_table(&header, &rows);
    if more {
        println!("(older traces not listed: raise --limit or narrow with --since)");
    }
    ExitCode::SUCCESS
}

/// `tap traces show TRACE_ID [--json]`.
pub async fn show(home: &Path, trace_id: &str, json: bool) -> ExitCode {
    let client = match connect_control(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let call = ControlCall::TracesGet(TraceRef {
        trace_id: trace_id.trim().to_ascii_lowercase(),
    });
    let trace: Trace = match client.call(call).await {
        Ok(t) => t,
        Err(e) => return control_fail(e),
    };
    if json {
        print_json(&trace);
    } else {
        print!(
            "{}",
            crate::waterfall::render(&trace, crate::waterfall::BAR_WIDTH)
        );
    }
    ExitCode::SUCCESS
}

//! `tap traces list|show`: the ledger's traces, on the control plane (`traces.list`,
//! `traces.get`), from this run and earlier ones.

use crate::durations::{self, format_us, time_us};
use crate::output::{connect_control, control_fail, note_ledger, print_json, print_table};
use clap::Subcommand;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use tap_protocol::control::ControlCall;
use tap_protocol::ledger::{SpanStatus, Trace, TraceRef, TracesList, TracesListParams};

#[derive(Subcommand)]
pub enum TracesCommand {
    /// Traces, newest first: time, duration, status, name, session, provider/tool, id.
    List {
        /// Only traces in this session.
        #[arg(long)]
        session: Option<String>,
        /// Only traces that reached this provider (by name).
        #[arg(long, value_name = "NAME")]
        provider: Option<String>,
        /// Only calls of this tool.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Only calls from sessions of this client (an MCP client's name, `copilot-cli`, …).
        #[arg(long)]
        client: Option<String>,
        /// Only traces whose root span has this name (`push`, `tool.call`, …).
        #[arg(long)]
        name: Option<String>,
        /// Only traces that succeeded or failed.
        #[arg(long, value_enum)]
        status: Option<StatusArg>,
        /// Only traces that started in the last DURATION (`10m`, `2h`, `3d`).
        #[arg(long, value_name = "DURATION", value_parser = durations::parse)]
        since: Option<Duration>,
        /// Only traces that took at least DURATION (`250ms`, `2s`).
        #[arg(long, value_name = "DURATION", value_parser = durations::parse)]
        min_duration: Option<Duration>,
        /// At most N traces (default 100, at most 1000).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: Option<u32>,
        /// Print a JSON array of the traces.
        #[arg(long)]
        json: bool,
    },
    /// One trace as a waterfall: spans under their parents, timed bars, errors, events.
    Show {
        /// The trace id (32 hex digits, from `tap traces list`).
        trace_id: String,
        /// Print the trace's spans as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `--status` of `tap traces list`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum StatusArg {
    Ok,
    Error,
}

/// Runs `tap traces …`.
pub async fn run(home: &Path, command: TracesCommand) -> ExitCode {
    match command {
        TracesCommand::List {
            session,
            provider,
            tool,
            client,
            name,
            status,
            since,
            min_duration,
            limit,
            json,
        } => {
            let params = TracesListParams {
                session_id: session,
                provider,
                tool,
                client,
                name,
                status: status.map(|s| match s {
                    StatusArg::Ok => SpanStatus::Ok,
                    StatusArg::Error => SpanStatus::Error,
                }),
                min_duration_us: min_duration.map(durations::micros),
                since_us: since.map(durations::since_us),
                before_us: None,
                limit,
            };
            list(home, params, json).await
        }
        TracesCommand::Show { trace_id, json } => show(home, &trace_id, json).await,
    }
}

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

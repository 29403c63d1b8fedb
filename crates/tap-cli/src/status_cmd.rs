use crate::output::{client_fail, connect, print_json};
use std::path::Path;
use std::process::ExitCode;

/// Labels and names get at least this many columns, so short ones still line up in a column.
const LABEL_MIN_WIDTH: usize = 12;

/// `tap status [--json]`.
pub async fn run(home: &Path, json: bool) -> ExitCode {
    let client = match connect(home, "tap-status").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let status = match client.status().await {
        Ok(s) => s,
        Err(e) => return client_fail(e),
    };
    if json {
        print_json(&status);
        return ExitCode::SUCCESS;
    }
    println!(
        "Tap gateway {} at {}, up {} s",
        status.version,
        status.address,
        status.uptime_ms / 1000
    );
    match &status.history {
        Some(h) if h.durable => println!("History: {} ({} bytes)", h.path, h.bytes),
        Some(h) => println!(
            "History: IN MEMORY ONLY (lost at stop): {}",
            h.reason
                .as_deref()
                .unwrap_or("the history file cannot be used")
        ),
        None => {}
    }
    // Columns as wide as their longest value: ids and labels are chosen by hosts.
    let width = |values: Vec<usize>, min: usize| values.into_iter().max().unwrap_or(0).max(min);
    println!("\nSessions ({}):", status.sessions.len());
    let id_w = width(status.sessions.iter().map(|s| s.id.len()).collect(), 0);
    let label_w = width(
        status
            .sessions
            .iter()
            .map(|s| s.label.as_deref().map_or(1, str::len))
            .collect(),
        LABEL_MIN_WIDTH,
    );
    for s in &status.sessions {
        println!(
            "  {:<id_w$}  {:<label_w$}  {:?}  tools: {}{}",
            s.id,
            s.label.as_deref().unwrap_or("-"),
            s.state,
            if s.tools.is_empty() {
                "-".to_string()
            } else {
                s.tools.join(", ")
            },
            if s.host_detached {
                "  (host disconnected)"
            } else {
                ""
            }
        );
    }
    println!("\nProviders ({}):", status.providers.len());
    let id_w = width(status.providers.iter().map(|p| p.id.len()).collect(), 0);
    let name_w = width(
        status
            .providers
            .iter()
            .map(|p| p.name.as_deref().map_or(1, str::len))
            .collect(),
        LABEL_MIN_WIDTH,
    );
    let state_w = width(status.providers.iter().map(|p| p.state.len()).collect(), 0);
    let session_w = width(
        status
            .providers
            .iter()
            .map(|p| p.session.as_deref().map_or(1, str::len))
            .collect(),
        0,
    );
    for p in &status.providers {
        println!(
            "  {:<id_w$}  {:<name_w$}  {:<state_w$}  session: {:<session_w$}  tools: {}  in flight: {}",
            p.id,
            p.name.as_deref().unwrap_or("-"),
            p.state,
            p.session.as_deref().unwrap_or("-"),
            p.tools.len(),
            p.in_flight
        );
    }
    ExitCode::SUCCESS
}

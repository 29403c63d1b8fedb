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
    if let Some(line) = copilot_token_line(&status.address) {
        println!("{line}");
    }
    if let Some(lines) = crate::approvals_cmd::waiting_lines(home).await {
        println!("{lines}");
    }
    if let Some(line) = crate::pins_cmd::held_line(home).await {
        println!("{line}");
    }
    if let Some(line) = crate::approvals_cmd::policy_problem_line(home).await {
        println!("{line}");
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

/// Who holds the Copilot token file that the spec's providers read: this gateway, another
/// one (they reach that one), or a gateway that no longer runs (stale: the next gateway
/// started takes it over). `None` without a Copilot home.
fn copilot_token_line(address: &str) -> Option<String> {
    use tap_gateway::{copilot_token_holding as holding, CopilotTokenHolding as Holding};
    let file = tap_client::default_copilot_home()?
        .join("extensions")
        .join("tap")
        .join(".provider-token");
    let me = address.strip_prefix("ws://").unwrap_or(address);
    let whose = match holding(&file) {
        Holding::Free => "not written (no gateway holds it)".to_string(),
        Holding::Live(h) if h.address == me => "held by this gateway".to_string(),
        Holding::Live(h) => format!(
            "held by the gateway at {} (pid {}); spec providers that read it reach that one",
            h.address, h.pid
        ),
        Holding::Gone(h) => format!(
            "STALE: left by a gateway that is no longer running (pid {} at {}); the next gateway started takes it over",
            h.pid, h.address
        ),
        Holding::Unknown => "held by another gateway (it did not record itself)".to_string(),
    };
    Some(format!("Copilot token file: {}: {whose}", file.display()))
}

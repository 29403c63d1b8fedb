use crate::output::{client_fail, connect, print_json};
use std::path::Path;
use std::process::ExitCode;

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
    println!("\nSessions ({}):", status.sessions.len());
    for s in &status.sessions {
        println!(
            "  {}  {:<20} {:?}  tools: {}{}",
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
    for p in &status.providers {
        println!(
            "  {}  {:<20} {:<10} session: {:<24} tools: {}  in flight: {}",
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

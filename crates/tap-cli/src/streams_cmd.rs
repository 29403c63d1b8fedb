use crate::output::{client_fail, connect, print_json};
use std::path::Path;
use std::process::ExitCode;

/// `tap streams history --session ID [STREAM] [--json]`.
pub async fn history(
    home: &Path,
    session: &str,
    stream: Option<&str>,
    last: Option<usize>,
    json: bool,
) -> ExitCode {
    let client = match connect(home, "tap-streams").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.streams_history(session, stream, last).await {
        Ok(r) => r,
        Err(e) => return client_fail(e),
    };
    if json {
        print_json(&reply.streams);
        return ExitCode::SUCCESS;
    }
    if reply.streams.values().all(Vec::is_empty) {
        let which = stream.map(|s| format!(" of {s}")).unwrap_or_default();
        println!("No events{which} in session {session}.");
    }
    for (key, events) in &reply.streams {
        let noun = if events.len() == 1 { "event" } else { "events" };
        println!("{key} ({} {noun})", events.len());
        for e in events {
            let level = e
                .level
                .map(|l| format!("{l:?}").to_lowercase())
                .unwrap_or_default();
            println!("  {}  {:<8} {}", e.ts, level, e.event);
        }
    }
    ExitCode::SUCCESS
}

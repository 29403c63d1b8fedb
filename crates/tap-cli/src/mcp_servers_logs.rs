//! `tap mcp logs NAME [--session ID] [--follow]`: the last lines a server wrote to stderr,
//! as the running gateway keeps them (`stderrTail` of `mcpServers.list`), and with
//! `--follow` every line it writes from then on, until Ctrl-C or the gateway goes away.
//!
//! New lines come from the gateway's log (`logs.follow`), where each stderr line is a record
//! of target `tap_gateway::mcp_servers` with the fields `server`, `session` (a project
//! server's) and `stream = "stderr"`: the control plane pushes them as they are logged, so
//! nothing polls. The log is followed before the tail is asked for, and the gateway keeps a
//! line in the tail before it logs it, so no line falls between the two (one written in that
//! instant may be shown twice).

use crate::mcp_servers_cmd::{gateway, listed, live_one, no_gateway, Outcome};
use crate::output::{control_fail, fail};
use std::path::Path;
use std::process::ExitCode;
use tap_client::ControlClient;
use tap_protocol::control::{ControlCall, ControlEvent};
use tap_protocol::logs::{LogLevel, LogRecord, LogsParams, LogsRecent};
use tap_protocol::mcp_servers::McpServerInfo;

/// The log target of a server's stderr lines (the gateway's `mcp_servers::LOG_TARGET`).
const TARGET: &str = "tap_gateway::mcp_servers";

/// `tap mcp logs`.
pub(crate) async fn logs(home: &Path, name: &str, session: Option<&str>, follow: bool) -> Outcome {
    if !follow {
        let list = listed(home).await?;
        let info = found(live_one(&list.servers, name, session)?, name)?;
        print_tail(info);
        return Ok(ExitCode::SUCCESS);
    }
    let mut client = match gateway(home).await {
        Some(Ok(client)) => client,
        Some(Err(why)) => return Err(fail("DISCONNECTED", why)),
        None => return Err(no_gateway()),
    };
    let params = LogsParams {
        limit: Some(0),
        level: Some(LogLevel::Info),
    };
    let log: LogsRecent = client
        .call(ControlCall::LogsFollow(params))
        .await
        .map_err(control_fail)?;
    let list = listed(home).await?;
    let info = found(live_one(&list.servers, name, session)?, name)?;
    print_tail(info);
    if !log.enabled {
        return Err(fail(
            "NOT_FOUND",
            "this gateway keeps no log to follow new lines in (the process hosting it installed none)",
        ));
    }
    follow_lines(&mut client, info).await
}

fn found<'a>(info: Option<&'a McpServerInfo>, name: &str) -> Result<&'a McpServerInfo, ExitCode> {
    info.ok_or_else(|| {
        fail(
            "NOT_FOUND",
            format!("the running gateway has no MCP server '{name}' (`tap mcp list` shows them)"),
        )
    })
}

fn print_tail(info: &McpServerInfo) {
    if info.stderr_tail.is_empty() {
        eprintln!(
            "tap: MCP server '{}' has written nothing to stderr (or is not a stdio server).",
            info.name
        );
    }
    for line in &info.stderr_tail {
        println!("{line}");
    }
}

/// Prints the server's new stderr lines until a signal (exit 0) or the gateway's end.
async fn follow_lines(client: &mut ControlClient, info: &McpServerInfo) -> Outcome {
    let stop = crate::signals::shutdown_token();
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => return Ok(ExitCode::SUCCESS),
            event = client.next_event() => event,
        };
        match event.map(|e| e.event) {
            Some(ControlEvent::Log { record }) if is_stderr_of(&record, info) => {
                println!("{}", record.message);
            }
            Some(ControlEvent::FollowLagged { missed, .. }) => {
                eprintln!("tap: this connection fell behind the gateway's log and missed {missed} records; some lines may be missing.");
            }
            Some(_) => {}
            None => {
                return Err(fail(
                    "DISCONNECTED",
                    format!(
                        "the gateway closed the connection (it stopped?): no more lines from '{}'",
                        info.name
                    ),
                ))
            }
        }
    }
}

/// Whether `record` is a line `info`'s server wrote to stderr.
fn is_stderr_of(record: &LogRecord, info: &McpServerInfo) -> bool {
    let field = |name: &str| {
        record
            .fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.value.as_str())
    };
    record.target == TARGET
        && field("stream") == Some("stderr")
        && field("server") == Some(info.name.as_str())
        && field("session") == info.session_id.as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::logs::LogField;

    fn record(fields: &[(&str, &str)]) -> LogRecord {
        LogRecord {
            seq: 1,
            ts: String::new(),
            level: LogLevel::Info,
            target: TARGET.into(),
            message: "a line".into(),
            fields: fields
                .iter()
                .map(|(n, v)| LogField {
                    name: n.to_string(),
                    value: v.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn only_the_instances_stderr_lines_are_followed() {
        let user: McpServerInfo = serde_json::from_value(serde_json::json!({
            "name": "good", "scope": "user", "configPath": "/h/mcp.json",
            "transport": "stdio", "target": "python good.py", "secretNames": [],
            "state": "ready", "tools": [], "restarts": 0, "stderrTail": [], "warnings": []
        }))
        .unwrap();
        let mut project = user.clone();
        project.session_id = Some("s-1".into());
        let line = record(&[("server", "good"), ("stream", "stderr")]);
        assert!(is_stderr_of(&line, &user));
        assert!(!is_stderr_of(&line, &project));
        let in_session = record(&[("server", "good"), ("session", "s-1"), ("stream", "stderr")]);
        assert!(is_stderr_of(&in_session, &project));
        assert!(!is_stderr_of(&in_session, &user));
        // Its lifecycle and its log notifications are not stderr lines; nor are others'.
        assert!(!is_stderr_of(&record(&[("server", "good")]), &user));
        assert!(!is_stderr_of(
            &record(&[("server", "other"), ("stream", "stderr")]),
            &user
        ));
    }
}

//! How `tap mcp list|get|…` show MCP servers to a person. The layout is not a contract
//! (`--json` is). Nothing here prints an `env` or header value: the gateway's answers carry
//! their names only, and the configuration is shown through `mcp_servers_file::redacted`.

use crate::mcp_servers_file::Scope;
use crate::output::print_table;
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;
use tap_gateway::mcp_servers::config::ServerSpec;
use tap_protocol::mcp_servers::{McpScope, McpServerInfo, McpServerState, McpTransport};

/// The `state` of a configured server when no gateway runs it.
pub const NOT_RUNNING: &str = "notRunning";

/// An enum's wire name (`ready`, `stdio`).
fn wire<T: serde::Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// Each warning on stderr.
pub fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("tap: warning: {w}");
    }
}

/// `ready (pid 4242, 12 tools)`, `parked (3 restarts): last error: …`.
pub fn state_line(info: &McpServerInfo) -> String {
    let mut line = wire(info.state);
    let mut details = Vec::new();
    if let Some(pid) = info.pid {
        details.push(format!("pid {pid}"));
    }
    if info.state == McpServerState::Ready {
        details.push(plural(info.tools.len(), "tool"));
    }
    if info.restarts > 0 {
        details.push(plural(info.restarts as usize, "restart"));
    }
    if !details.is_empty() {
        let _ = write!(line, " ({})", details.join(", "));
    }
    if let Some(e) = &info.last_error {
        let _ = write!(line, ": last error: {}", one_line(e));
    }
    line
}

/// Resident memory as `812 KiB`, `38.2 MiB`, `1.20 GiB`; `-` when there is none (not
/// running, a remote server, not Linux).
pub fn memory(bytes: Option<u64>) -> String {
    const KIB: f64 = 1024.0;
    match bytes {
        None => "-".into(),
        Some(b) if (b as f64) < KIB * KIB => format!("{} KiB", b / 1024),
        Some(b) if (b as f64) < KIB * KIB * KIB => format!("{:.1} MiB", b as f64 / (KIB * KIB)),
        Some(b) => format!("{:.2} GiB", b as f64 / (KIB * KIB * KIB)),
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Text on one line of a table.
fn one_line(text: &str) -> String {
    text.trim_end().replace("\r\n", " ⏎ ").replace('\n', " ⏎ ")
}

/// A configured server no gateway runs, in the shape of `mcpServers.list`'s entries
/// (`state` is `notRunning` or `disabled`).
pub fn not_running_info(spec: &ServerSpec, scope: Scope, path: &Path) -> Value {
    let info = McpServerInfo {
        name: spec.name.clone(),
        scope: match scope {
            Scope::User => McpScope::User,
            Scope::Project => McpScope::Project,
        },
        session_id: None,
        config_path: path.display().to_string(),
        transport: spec.transport.kind(),
        target: spec.transport.target(),
        secret_names: spec.transport.secret_names(),
        state: McpServerState::Disabled,
        pid: None,
        memory_bytes: None,
        provider_id: None,
        server_info: None,
        tools: Vec::new(),
        ready_since: None,
        restarts: 0,
        last_error: None,
        failures: 0,
        failing: false,
        stderr_tail: Vec::new(),
        warnings: Vec::new(),
        sign_in: None,
    };
    let mut value = serde_json::to_value(info).expect("serializable");
    if spec.enabled {
        value["state"] = NOT_RUNNING.into();
    }
    value
}

/// The servers (`mcpServers.list` entries as JSON), one per line.
pub fn print_servers(servers: &[Value]) {
    let header = [
        "NAME",
        "SCOPE",
        "SESSION",
        "TRANSPORT",
        "STATE",
        "PID",
        "MEMORY",
        "TOOLS",
        "LAST ERROR",
    ]
    .map(String::from);
    let text = |v: &Value, key: &str| -> String {
        match &v[key] {
            Value::String(s) => one_line(s),
            Value::Number(n) => n.to_string(),
            _ => "-".into(),
        }
    };
    let rows: Vec<[String; 9]> = servers
        .iter()
        .map(|s| {
            let state = text(s, "state");
            let running = state != NOT_RUNNING && state != wire(McpServerState::Disabled);
            let tools = match &s["tools"] {
                Value::Array(t) if running => t.len().to_string(),
                _ => "-".into(),
            };
            [
                text(s, "name"),
                text(s, "scope"),
                text(s, "sessionId"),
                text(s, "transport"),
                if state == NOT_RUNNING {
                    "not running".into()
                } else {
                    state
                },
                text(s, "pid"),
                memory(s["memoryBytes"].as_u64()),
                tools,
                text(s, "lastError"),
            ]
        })
        .collect();
    print_table(&header, &rows);
}

/// What the running gateway says of one server, as indented lines.
pub fn describe_live(info: &McpServerInfo) -> String {
    let mut out = String::new();
    let session = info
        .session_id
        .as_deref()
        .map(|s| format!(" for session {s}"))
        .unwrap_or_default();
    let _ = writeln!(out, "In the running gateway{session}:");
    let mut row = |key: &str, value: String| {
        let _ = writeln!(out, "  {key:<12} {value}");
    };
    row("state:", state_line(info));
    row("memory:", memory(info.memory_bytes));
    row(
        "transport:",
        format!("{} {}", wire(info.transport), info.target),
    );
    if !info.secret_names.is_empty() {
        let what = match info.transport {
            McpTransport::Stdio => "env:",
            McpTransport::Http | McpTransport::Sse => "headers:",
        };
        row(
            what,
            format!("{} (values not shown)", info.secret_names.join(", ")),
        );
    }
    if let Some(s) = &info.server_info {
        row("server:", s.clone());
    }
    if let Some(since) = &info.ready_since {
        row("ready since:", since.clone());
    }
    if let Some(id) = &info.provider_id {
        row("provider:", id.clone());
    }
    row(
        "tools:",
        if info.tools.is_empty() {
            "-".into()
        } else {
            info.tools.join(", ")
        },
    );
    for w in &info.warnings {
        row("warning:", one_line(w));
    }
    if !info.stderr_tail.is_empty() {
        row(
            "stderr:",
            format!(
                "{} (`tap mcp logs {}`)",
                plural(info.stderr_tail.len(), "line"),
                info.name
            ),
        );
    }
    out
}

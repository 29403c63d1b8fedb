//! MCP servers as providers (`docs/mcp-servers.md`): real servers (the fixtures in
//! `tests/mcp/servers/`, and `@modelcontextprotocol/server-everything` from npm) run by a
//! gateway in this process, called by a real MCP client (PyPI `mcp`) through the MCP
//! facade, and watched through the control plane (`mcpServers.list`).

mod asks_stream;
mod calls;
mod health;
mod hostile;
mod legacy_sse;
mod project;
mod remote;
mod search_cost;
mod secrets;
mod sign_in;

use serde_json::{json, Value};
use tap_gateway::GatewayConfig;
use tap_testkit::mcp::{test_python, workspace_root};
use tap_testkit::{eventually, TestGateway};

/// A fixture server's entry: `python tests/mcp/servers/<script> ARGS…`.
pub fn fixture(script: &str, args: &[&str]) -> Value {
    let path = workspace_root().join("tests/mcp/servers").join(script);
    let mut argv = vec![path.display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    json!({"command": test_python(), "args": argv})
}

/// `@modelcontextprotocol/server-everything` over stdio.
pub fn everything() -> Value {
    let path = workspace_root()
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    json!({"command": "node", "args": [path.display().to_string(), "stdio"]})
}

/// Quick restarts, parked after two quick failures, `initialize` within 800 ms: for
/// servers that are meant to fail.
pub fn impatient(c: &mut GatewayConfig) {
    c.project_restart = tap_gateway::RestartPolicy {
        backoff: std::time::Duration::from_millis(10),
        backoff_max: std::time::Duration::from_millis(20),
        stable_run: std::time::Duration::from_secs(60),
        max_quick_failures: 2,
    };
    c.mcp_initialize_timeout = std::time::Duration::from_millis(800);
}

/// A gateway whose user `mcp.json` holds `servers`, configured further by `tweak`.
pub async fn gateway_with(servers: Value, tweak: impl FnOnce(&mut GatewayConfig)) -> TestGateway {
    TestGateway::start_with(|c| {
        write_user_file(&c.data_dir, &servers);
        tweak(c);
    })
    .await
}

pub fn write_user_file(data_dir: &std::path::Path, servers: &Value) {
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::write(
        data_dir.join("mcp.json"),
        serde_json::to_vec_pretty(&json!({"mcpServers": servers})).unwrap(),
    )
    .unwrap();
}

/// `mcpServers.list`'s entry for `name` once `ready(entry)` holds.
pub async fn server_when(gw: &TestGateway, name: &str, ready: impl Fn(&Value) -> bool) -> Value {
    eventually(&format!("MCP server '{name}'"), || {
        let list = serde_json::to_value(gw.handle.gateway().mcp_servers_list()).unwrap();
        let found = list["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["name"] == name)
            .filter(|s| ready(s))
            .cloned();
        async move { found }
    })
    .await
}

/// The entry once its state is `state`.
pub async fn server_in(gw: &TestGateway, name: &str, state: &str) -> Value {
    server_when(gw, name, |s| s["state"] == state).await
}

//! The MCP facade with real MCP clients (PyPI `mcp`, both generations) over Streamable
//! HTTP, against a gateway in this process and raw providers on real sockets.

mod client_state;
mod fast_path;
mod fast_session_path;
mod goal_skill;
mod http_refusals;
mod profiles;
mod queued_on_attach;
mod resources;
mod search_surface;
mod sessions;
mod tools;

use serde_json::json;
use serde_json::Value;
use tap_testkit::{eventually, tool, McpClient, Provider, TestGateway};

/// Both MCP generations: the `initialize` one and the stateless 2026-07-28 one.
pub const MODES: [&str; 2] = ["legacy", "2026-07-28"];

pub fn url(gw: &TestGateway, session: &str) -> String {
    format!("http://{}/mcp/{session}", gw.handle.gateway().address())
}

/// A Python MCP client on `/mcp/<session>`, authenticated.
pub async fn client(gw: &TestGateway, session: &str, mode: &str) -> McpClient {
    let token = gw.handle.gateway().host_token().to_string();
    let (mut c, ready) =
        McpClient::python_http(&url(gw, session), &token, mode, gw.dir.path()).await;
    let want = if mode == "legacy" { "2025-11-25" } else { mode };
    assert_eq!(ready["protocol"], want, "{ready}");
    // The stateless generation names its session with its first request, not at connect.
    c.tool_names().await;
    c
}

/// The id of the session labelled `label` (the facade registered it on first use).
pub async fn session_id(gw: &TestGateway, label: &str) -> String {
    eventually(&format!("session '{label}'"), || async {
        gw.handle
            .gateway()
            .status()
            .sessions
            .into_iter()
            .find(|s| s.label.as_deref() == Some(label))
            .map(|s| s.id)
    })
    .await
}

/// A client of session "work" and a provider `provider` bound to it with one tool `name`,
/// which the client lists; with the session's id.
pub async fn client_with_tool(
    gw: &TestGateway,
    mode: &str,
    provider: &str,
    name: &str,
) -> (McpClient, Provider, String) {
    let mut c = client(gw, "work", mode).await;
    let session = session_id(gw, "work").await;
    let p = gw.bound(provider, &session, json!([tool(name)])).await;
    wait_listed(&mut c, name).await;
    (c, p, session)
}

/// Waits until the client lists `tool` (after the debounced tool-set publication).
pub async fn wait_listed(c: &mut McpClient, tool: &str) -> Vec<String> {
    for _ in 0..200 {
        let names = c.tool_names().await;
        if names.iter().any(|n| n == tool) {
            return names;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("'{tool}' never listed");
}

/// The text blocks of a `result` observation, joined.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `meta` with a `traceparent` of trace `trace`, so a call's spans can be found.
pub fn traced(meta: &Value, trace: &str) -> Value {
    let mut meta = meta.clone();
    meta["traceparent"] = json!(format!("00-{trace}-b7ad6b7169203331-01"));
    meta
}

/// Each `(trace, path)`: the call of that trace was served by `path` (`endpoint` or
/// `rmcp`), as its `tool.call` span says (`mcp.path`).
pub async fn assert_served_by(gw: &TestGateway, cases: &[(&str, &str)]) {
    gw.handle.gateway().flush_history().await;
    let (mut control, _) = tap_testkit::Control::authed(gw).await;
    for (trace, want) in cases {
        let spans = control.ok("traces.get", json!({"traceId": trace})).await;
        let root = &spans["spans"][0];
        assert_eq!(root["attributes"]["mcp.path"], *want, "{trace}: {spans}");
    }
}

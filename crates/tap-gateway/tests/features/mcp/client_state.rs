//! An MCP session's host as `tap_get_session_state` shows it to the agent: the PyPI `mcp`
//! client's own `clientInfo` and whether it declared elicitation in its `initialize` (one
//! client that does not, one that does), and no modes to change (MCP has none).

use super::{session_id, text_of, url};
use serde_json::{json, Value};
use tap_testkit::{McpClient, TestGateway};

/// `tap_get_session_state` called by `c`, its answer parsed.
async fn state(c: &mut McpClient) -> Value {
    c.send(json!({"op": "call", "id": "s", "tool": "tap_get_session_state", "args": {}}))
        .await;
    let r = c.expect("result").await;
    assert_eq!(r["isError"], false, "{r}");
    match &r["structured"] {
        Value::Null => serde_json::from_str(&text_of(&r)).unwrap(),
        s => s.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_clients_info_and_elicitation_capability_are_in_its_session_state() {
    let gw = TestGateway::start().await;
    let token = gw.handle.gateway().host_token().to_string();

    let (mut plain, _) =
        McpClient::python_http(&url(&gw, "plain"), &token, "legacy", gw.dir.path()).await;
    plain.tool_names().await;
    let s = state(&mut plain).await;
    assert_eq!(s["sessionId"], session_id(&gw, "plain").await.as_str());
    assert_eq!(s["host"]["kind"], "mcp", "{s}");
    // The PyPI client's default clientInfo (mcp.client.session.DEFAULT_CLIENT_INFO).
    assert_eq!(s["host"]["capabilities"]["client"]["name"], "mcp", "{s}");
    assert_eq!(
        s["host"]["capabilities"]["client"]["version"], "0.1.0",
        "{s}"
    );
    assert_eq!(s["host"]["capabilities"]["ui"]["elicitation"], false, "{s}");
    assert_eq!(s["host"]["canChangeMode"], false, "{s}");

    let (mut asking, _) =
        McpClient::python_http_eliciting(&url(&gw, "asking"), &token, None, gw.dir.path()).await;
    asking.tool_names().await;
    let s = state(&mut asking).await;
    assert_eq!(s["sessionId"], session_id(&gw, "asking").await.as_str());
    assert_eq!(s["host"]["capabilities"]["ui"]["elicitation"], true, "{s}");
    assert_eq!(s["host"]["capabilities"]["client"]["name"], "mcp", "{s}");
}

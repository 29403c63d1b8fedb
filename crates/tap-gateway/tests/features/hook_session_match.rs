//! Hook rules that match on who asks (a gateway extension to the spec's `match`):
//! `match.profile` (the profile the session was opened with) and `match.client` (the MCP
//! session name, or the session host's `hostName`). Real providers register the rules;
//! real session hosts and a real MCP request ask.

use crate::mcp::{session_id, url};
use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{PrecheckDecision, SessionRegister, ToolDecision};
use tap_testkit::*;

/// A provider `name` bound to `session` offering `t`, with `rules`.
async fn guard(gw: &TestGateway, name: &str, session: &str, rules: &Value) -> Provider {
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session,
                  "tools": [tool("t")], "hooks": {"onPreToolUse": rules}}),
    )
    .await;
    assert_eq!(p.expect("hello.ack").await["sessionId"], session);
    p
}

async fn register(host: &HostClient, profile: Option<&str>) -> String {
    host.register_session(SessionRegister {
        label: Some("s".into()),
        profile: profile.map(str::to_string),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

async fn precheck(host: &HostClient, session: &str, tool: &str) -> ToolDecision {
    tokio::time::timeout(PATIENCE, host.precheck(session, tool, json!({})))
        .await
        .expect("no tool.decision")
        .expect("precheck refused")
}

/// A host named `name` on `/session`.
async fn host_named(gw: &TestGateway, name: &str) -> HostClient {
    let url = format!("{}/session", gw.url());
    HostClient::connect(&url, gw.handle.gateway().host_token(), name, None)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_profile_rule_applies_only_to_sessions_opened_with_that_profile() {
    let gw = TestGateway::start().await;
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"web": {}, "docs": {}}}"#,
    )
    .unwrap();
    let rules = json!([
        {"match": {"tool": "t", "profile": "web"}, "action": "deny", "reason": "not on web"},
        // No tool: the agent's own tools too, in web sessions only.
        {"match": {"profile": "web"}, "action": "context", "content": "web session"},
    ]);
    let host = gw.host().await;
    let web = register(&host, Some("web")).await;
    let docs = register(&host, Some("docs")).await;
    let plain = register(&host, None).await;
    let mut guards = Vec::new();
    for (i, s) in [&web, &docs, &plain].into_iter().enumerate() {
        guards.push(guard(&gw, &format!("guard{i}"), s, &rules).await);
    }
    let d = precheck(&host, &web, "t").await;
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
    assert_eq!(d.reason.as_deref(), Some("not on web"));
    let d = precheck(&host, &web, "shell").await;
    assert_eq!(d.decision, PrecheckDecision::Context, "{d:?}");
    assert_eq!(d.context.as_deref(), Some("web session"));
    for s in [&docs, &plain] {
        for tool in ["t", "shell"] {
            let d = precheck(&host, s, tool).await;
            assert_eq!(d.decision, PrecheckDecision::Allow, "{s} {tool}: {d:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_rule_applies_to_that_hosts_sessions_and_that_mcp_session_name() {
    let gw = TestGateway::start().await;
    let rules = json!([
        {"match": {"tool": "t", "client": "copilot"}, "action": "deny", "reason": "not in copilot"},
        {"match": {"tool": "t", "client": "claude-code"}, "action": "deny", "reason": "not in claude-code"},
    ]);
    let copilot = host_named(&gw, "copilot").await;
    let in_copilot = register(&copilot, None).await;
    let other = gw.host().await; // hostName "test-host"
    let in_other = register(&other, None).await;
    let _g1 = guard(&gw, "guard1", &in_copilot, &rules).await;
    let mut g2 = guard(&gw, "guard2", &in_other, &rules).await;

    let d = precheck(&copilot, &in_copilot, "t").await;
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
    assert_eq!(d.reason.as_deref(), Some("not in copilot"));
    let d = precheck(&other, &in_other, "t").await;
    assert_eq!(d.decision, PrecheckDecision::Allow, "{d:?}");
    // Allowed: the call goes through to the provider.
    let call = tokio::spawn(async move { other.invoke(&in_other, "t", json!({})).await });
    let asked = g2.expect_next("tool.call").await;
    g2.send(json!({"type": "tool.result", "id": asked["id"], "data": "ran"}))
        .await;
    assert!(call.await.unwrap().unwrap().error.is_none());

    // The session `tap mcp --session claude-code` (what `tap connect claude-code` writes)
    // opens: the first request registers it, the rule then denies its call.
    let first = mcp_call(&gw, "claude-code", "t").await;
    assert!(first.contains("Unknown tool 't'"), "{first}");
    let in_claude = session_id(&gw, "claude-code").await;
    let mut g3 = guard(&gw, "guard3", &in_claude, &rules).await;
    let denied = mcp_call(&gw, "claude-code", "t").await;
    assert!(
        denied.contains("A hook rule denied 't': not in claude-code"),
        "{denied}"
    );
    let seen = until_fence(&mut g3).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
}

#[tokio::test]
async fn a_profile_or_client_that_is_not_a_string_is_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    for rule in [
        json!({"match": {"profile": 5}, "action": "deny", "reason": "r"}),
        json!({"match": {"client": ["copilot"]}, "action": "deny", "reason": "r"}),
    ] {
        let (mut p, _) = gw.authed().await;
        p.send(
            json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": s.id,
                      "hooks": {"onPreToolUse": [rule]}}),
        )
        .await;
        let e = p.expect_error("INVALID_JSON").await;
        assert_eq!(e["replyTo"], "hello", "{e}");
    }
}

/// A stateless MCP `tools/call` (2026-07-28) on `/mcp/<session>` with the host token: the
/// answer's body.
async fn mcp_call(gw: &TestGateway, session: &str, tool: &str) -> String {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    reqwest::Client::new()
        .post(url(gw, session))
        .bearer_auth(gw.handle.gateway().host_token())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}, "_meta": meta}}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

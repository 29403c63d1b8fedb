//! Spec section "Error responses" (Protocol rules): `error` with `code`, `message`,
//! `replyTo`, and `providerId` / `sessionId` when applicable (spec decision 33; `requestId`
//! for updates, decision 16).

use crate::common::*;

#[tokio::test]
async fn an_error_has_code_message_and_reply_to() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    let e = hello_refused(&mut p, hello("p", "def456", json!({})), "INVALID_SESSION").await;
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("def456")),
        "the message names the session: {e}"
    );
}

#[tokio::test]
async fn errors_before_auth_carry_no_provider_id() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "no.such.type"})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert!(e.get("providerId").is_none(), "{e}");
    assert!(e.get("sessionId").is_none(), "{e}");
}

#[tokio::test]
async fn errors_carry_the_provider_id_once_authenticated() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "no.such.type"})).await;
    let before_hello = p.expect_error("UNKNOWN_TYPE").await;
    let id = before_hello["providerId"]
        .as_str()
        .expect("providerId")
        .to_string();
    assert!(before_hello.get("sessionId").is_none(), "{before_hello}");
    p.send(hello("p", &s.id, json!({}))).await;
    let ack = expect_bound(&mut p, &s.id).await;
    assert_eq!(ack["providerId"], id.as_str(), "the same id in hello.ack");
    assert!(host
        .status()
        .await
        .unwrap()
        .providers
        .iter()
        .any(|p| p.id == id));
}

#[tokio::test]
async fn errors_carry_the_session_id_when_bound() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, ack) = bind(&gw, "p", &s.id, json!({})).await;
    p.send(json!({"type": "push", "level": "keep", "event": ""}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    assert_eq!(e["providerId"], ack["providerId"], "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
}

#[tokio::test]
async fn a_failed_hello_names_the_session_it_asked_for() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    let e = hello_refused(&mut p, hello("p", "def456", json!({})), "INVALID_SESSION").await;
    assert_eq!(e["sessionId"], "def456", "{e}");
}

#[tokio::test]
async fn tool_conflict_names_the_tool_and_the_provider_holding_it() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _holder = bound(&gw, "browser-tab-a", &s.id, json!([tool("screenshot")])).await;
    let (mut p, ack) = bind(&gw, "other", &s.id, json!({})).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("screenshot")]}))
        .await;
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert_eq!(e["replyTo"], "tools.update", "{e}");
    assert_eq!(e["providerId"], ack["providerId"], "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
    assert_eq!(e["requestId"], "r", "{e}");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("screenshot") && m.contains("browser-tab-a"),
        "{e}"
    );
}

#[tokio::test]
async fn errors_for_updates_carry_their_request_id() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for m in [
        json!({"type": "tools.update", "requestId": "r1", "tools": [tool("bad name")]}),
        json!({"type": "hooks.update", "requestId": "r2",
               "onPreToolUse": [{"match": {"args": "("}, "action": "deny"}]}),
        json!({"type": "context.update", "requestId": "r3", "sessionId": "elsewhere"}),
        json!({"type": "filter.set", "requestId": "r4", "stream": "s@someone-else", "rules": []}),
    ] {
        p.send(m.clone()).await;
        let e = p.expect("error").await;
        assert_eq!(e["requestId"], m["requestId"], "{e}");
        assert_eq!(e["replyTo"], m["type"], "{e}");
    }
}

#[tokio::test]
async fn errors_are_sent_for_any_invalid_message_and_nothing_else_happens() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    p.send(json!({"type": "tools.update", "tools": [tool("t"), tool("t")]}))
        .await;
    p.expect_error("TOOL_CONFLICT").await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["t"]);
}

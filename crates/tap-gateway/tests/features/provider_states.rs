//! The provider connection state machine after auth: what is accepted in which state.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_protocol::host::HostEvent;

/// Every session-scoped request, each valid on its own, so the only thing wrong with it
/// is that the connection is not bound yet.
fn session_scoped_messages(session: &str) -> Vec<Value> {
    vec![
        json!({"type": "push", "level": "surface", "event": "e"}),
        json!({"type": "tools.update", "requestId": "u-1", "tools": [tool("a")]}),
        json!({"type": "stream.query", "queryId": "q-1"}),
        json!({"type": "shutdown.ready", "sessionId": session}),
        json!({"type": "session.ready", "sessionId": session}),
        json!({"type": "hooks.update", "requestId": "h-1"}),
        json!({"type": "context.update", "requestId": "x-1", "context": "c"}),
        json!({"type": "filter.set", "requestId": "f-1", "stream": "s", "rules": []}),
    ]
}

/// Answers to gateway requests. They are correlated by globally unique ids, so one that
/// matches nothing is a late answer and is ignored in every state.
fn answers() -> Vec<Value> {
    vec![
        json!({"type": "tool.result", "id": "c-1", "data": "x"}),
        json!({"type": "tool.progress", "id": "c-1", "message": "working"}),
        json!({"type": "gate.result", "callId": "g-1", "decision": "allow"}),
        json!({"type": "transform.result", "callId": "t-1", "content": "c"}),
    ]
}

#[tokio::test]
async fn session_scoped_messages_before_hello_are_invalid_session() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    for msg in session_scoped_messages(&session.id) {
        p.send(msg.clone()).await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["replyTo"], msg["type"], "{e}");
        assert!(e["providerId"].as_str().unwrap().starts_with("p-"), "{e}");
        assert!(e.get("sessionId").is_none(), "not bound: {e}");
    }
    // Nothing of that reached the session; the connection is still usable.
    p.send(
        json!({"type": "hello", "name": "late", "protocolVersion": 2,
                  "session": session.id, "tools": [tool("t")]}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "push", "level": "surface", "event": "now bound"}))
        .await;
    let HostEvent::Delivery(d) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        d.event, "now bound",
        "the pre-hello push must not have been delivered"
    );
}

#[tokio::test]
async fn session_scoped_messages_after_a_failed_rebind_are_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([tool("t")])).await;
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2,
                  "session": "no-such-session", "tools": [tool("t")]}))
        .await;
    p.expect_error("INVALID_SESSION").await;
    p.send(json!({"type": "push", "level": "keep", "event": "e"}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "push");
}

#[tokio::test]
async fn auth_twice_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "auth");
    p.send(json!({"type": "auth.confirm", "code": "123456"}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "auth.confirm");
    // Also when bound, and the connection survives.
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": session.id}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["sessionId"], session.id.as_str());
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;
}

#[tokio::test]
async fn unknown_type_after_auth_is_unknown_type_and_the_connection_stays() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "tool.frobnicate", "id": "x"})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "tool.frobnicate", "{e}");
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": session.id}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "tool.frobnicate"})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "tool.frobnicate", "{e}");
    assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;
}

#[tokio::test]
async fn invalid_known_message_after_auth_is_invalid_json_and_the_connection_stays() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    // `level` missing; `tools` of the wrong type.
    p.send(json!({"type": "push", "event": "e"})).await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    p.send(json!({"type": "tools.update", "tools": "nope"}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "tools.update", "{e}");
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;
}

#[tokio::test]
async fn filter_set_and_context_update_share_the_ack_revision() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([tool("t")])).await;
    // context.update is implemented (see tests/transforms.rs): acked, revision 1.
    p.send(json!({"type": "context.update", "requestId": "r-ctx", "context": "hi"}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "r-ctx");
    assert_eq!(ack["revision"], 1);
    let msg = json!({"type": "filter.set", "requestId": "r-filter", "stream": "p",
                     "rules": [{"match": "x", "outcome": "drop"}]});
    p.send(msg.clone()).await;
    // filter.set is implemented (see tests/stream_filters.rs): same revision counter.
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], msg["requestId"], "{ack}");
    assert_eq!(ack["sessionId"], session.id.as_str(), "{ack}");
    assert_eq!(ack["revision"], 2, "{ack}");
    // Still bound and working.
    p.send(json!({"type": "tools.update", "requestId": "u", "tools": [tool("t2")]}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "u");
}

#[tokio::test]
async fn unmatched_answers_are_ignored_before_hello_and_while_bound() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    for a in answers() {
        p.send(a).await;
    }
    // The first thing said is the refusal of the next request: the answers produced nothing.
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");

    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": session.id}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    for a in answers() {
        p.send(a).await;
    }
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], "q");
}

#[tokio::test]
async fn session_ready_while_bound_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    p.send(json!({"type": "session.ready", "sessionId": session.id}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "session.ready");
}

#[tokio::test]
async fn goodbye_closes_the_connection_and_removes_the_providers_tools() {
    let gw = TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw
        .bound("leaver", &session.id, json!([tool("bye_a"), tool("bye_b")]))
        .await;
    let _other = gw.bound("stayer", &session.id, json!([tool("stay")])).await;
    let status = host.status().await.unwrap();
    let s = status.sessions.iter().find(|s| s.id == session.id).unwrap();
    let mut names = s.tools.clone();
    names.sort();
    assert_eq!(names, ["bye_a", "bye_b", "stay"]);

    p.send(json!({"type": "goodbye", "reason": "done"})).await;
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "{after:?}");

    // Disconnect handling runs before the socket closes, so this is already settled.
    let status = host.status().await.unwrap();
    let s = status.sessions.iter().find(|s| s.id == session.id).unwrap();
    assert_eq!(s.tools, ["stay"]);
    assert!(
        status
            .providers
            .iter()
            .all(|p| p.name.as_deref() != Some("leaver")),
        "{:?}",
        status.providers
    );
    // And the host is told through a new tool-set revision.
    let HostEvent::SessionTools(t) = next_host_event(
        &mut host,
        |e| matches!(e, HostEvent::SessionTools(t) if t.tools.len() == 1),
    )
    .await
    else {
        unreachable!()
    };
    assert_eq!(t.session_id, session.id);
    assert_eq!(t.tools[0].name, "stay");
    assert_eq!(t.tools[0].provider, "stayer");
}

#[tokio::test]
async fn goodbye_before_hello_closes_the_connection() {
    let gw = TestGateway::start().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "goodbye"})).await;
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "{after:?}");
}

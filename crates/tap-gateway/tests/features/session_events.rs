//! `hello.subscribe` and `session.event` forwarding (spec: "session.event", "Event payload
//! shapes").

use tap_testkit::*;

use serde_json::{json, Value};

/// A provider bound to `session` with `subscribe`; `hello.ack` and `started` consumed.
async fn subscribed(gw: &TestGateway, name: &str, session: &str, subscribe: Value) -> Provider {
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "hello", "name": name, "protocolVersion": 2,
                  "session": session, "subscribe": subscribe}))
        .await;
    p.expect("hello.ack").await;
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    p
}

/// Proves nothing else is queued for `p`: a `stream.query` answer comes next.
async fn nothing_pending(p: &mut Provider) {
    p.send(json!({"type": "stream.query", "queryId": "fence"}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], "fence");
}

#[tokio::test]
async fn subscribed_event_is_forwarded_with_session_event_and_data() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = subscribed(&gw, "listener", &session.id, json!(["user.message"])).await;
    host.session_event(
        &session.id,
        "user.message",
        json!({"content": "fix the auth bug"}),
    )
    .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(
        e,
        json!({"type": "session.event", "sessionId": session.id, "event": "user.message",
               "data": {"content": "fix the auth bug"}})
    );
}

#[tokio::test]
async fn only_subscribed_event_names_are_forwarded() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut users = subscribed(&gw, "users", &session.id, json!(["user.message"])).await;
    let mut tools = subscribed(
        &gw,
        "tools",
        &session.id,
        json!(["tool.execution_complete", "assistant.intent"]),
    )
    .await;
    let mut none = gw.bound("none", &session.id, json!([])).await;
    host.session_event(&session.id, "user.message", json!({"content": "hi"}))
        .unwrap();
    let done = json!({"tool": "t", "args": {}, "result": {"type": "success", "output": "ok"},
                      "durationMs": 5});
    host.session_event(&session.id, "tool.execution_complete", done.clone())
        .unwrap();
    host.session_event(&session.id, "assistant.intent", json!({"intent": "read"}))
        .unwrap();

    assert_eq!(users.expect("session.event").await["event"], "user.message");
    nothing_pending(&mut users).await;
    // Events arrive in the order the host reported them; the user message never came.
    let first = tools.expect("session.event").await;
    assert_eq!(first["event"], "tool.execution_complete");
    assert_eq!(first["data"], done);
    assert_eq!(
        tools.expect("session.event").await["event"],
        "assistant.intent"
    );
    nothing_pending(&mut tools).await;
    nothing_pending(&mut none).await;
}

#[tokio::test]
async fn unknown_event_names_are_accepted_in_subscribe() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = subscribed(&gw, "future", &session.id, json!(["assistant.reasoning"])).await;
    host.session_event(&session.id, "assistant.reasoning", json!({"text": "hmm"}))
        .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(e["event"], "assistant.reasoning");
    assert_eq!(e["data"]["text"], "hmm");
}

#[tokio::test]
async fn events_of_another_session_are_not_forwarded() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let (host2, s2) = gw.host_with_session().await;
    let mut p = subscribed(&gw, "one", &s1.id, json!(["user.message"])).await;
    host2
        .session_event(&s2.id, "user.message", json!({"content": "elsewhere"}))
        .unwrap();
    // The other host's event is handled before this status round trip completes.
    host2.status().await.unwrap();
    host.session_event(&s1.id, "user.message", json!({"content": "here"}))
        .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(e["sessionId"], s1.id.as_str());
    assert_eq!(e["data"]["content"], "here");
}

#[tokio::test]
async fn rebinding_replaces_the_subscriptions() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = subscribed(&gw, "p", &session.id, json!(["user.message"])).await;
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2,
                  "session": session.id, "subscribe": ["assistant.message"]}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    host.session_event(&session.id, "user.message", json!({"content": "a"}))
        .unwrap();
    host.session_event(&session.id, "assistant.message", json!({"content": "b"}))
        .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(e["event"], "assistant.message");
    assert_eq!(e["data"]["content"], "b");
}

#[tokio::test]
async fn external_providers_get_tool_events_only() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = paired(&gw).await.0;
    p.send(
        json!({"type": "hello", "name": "page", "protocolVersion": 2,
                  "session": session.id, "subscribe": ["user.message"]}),
    )
    .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "hello");
    p.send(
        json!({"type": "hello", "name": "page", "protocolVersion": 2,
                  "session": session.id, "subscribe": ["tool.execution_complete"]}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    host.session_event(&session.id, "user.message", json!({"content": "secret"}))
        .unwrap();
    host.session_event(
        &session.id,
        "tool.execution_complete",
        json!({"tool": "t", "args": {}, "result": {"type": "success"}, "durationMs": 1}),
    )
    .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(e["event"], "tool.execution_complete");
    nothing_pending(&mut p).await;
}

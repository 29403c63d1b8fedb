//! Spec section "Session scope enforcement" (Protocol rules): a session-scoped
//! provider→gateway message whose `sessionId` is outside the provider's authorized set
//! gets `INVALID_SESSION` — one test per message of the spec's list. `session.ready` is
//! `UNAUTHORIZED` for every provider not bound to "all" (spec decision 2). Unbound
//! providers have an empty set (decision 7; see connection_states.rs).

use crate::common::*;

/// A provider bound to one session while another session exists; returns both ids.
async fn setup() -> (TestGateway, HostClient, Provider, String, String) {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "other").await;
    let p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    (gw, host, p, s.id, other.id)
}

async fn refused(msg: impl Fn(&str) -> Value) {
    let (_gw, _host, mut p, mine, other) = setup().await;
    let m = msg(&other);
    p.send(m.clone()).await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], m["type"], "{e}");
    assert_eq!(e["sessionId"], mine.as_str(), "{e}");
    // The same message for the bound session is fine.
    p.send(msg(&mine)).await;
    for m in until_fence(&mut p).await {
        assert_ne!(m["type"], "error", "{m}");
    }
}

#[tokio::test]
async fn push_outside_the_authorized_sessions_is_invalid_session() {
    refused(|s| json!({"type": "push", "sessionId": s, "level": "keep", "event": "e"})).await;
}

#[tokio::test]
async fn tools_update_outside_the_authorized_sessions_is_invalid_session() {
    refused(
        |s| json!({"type": "tools.update", "requestId": "r", "sessionId": s, "tools": [tool("t")]}),
    )
    .await;
}

#[tokio::test]
async fn hooks_update_outside_the_authorized_sessions_is_invalid_session() {
    refused(
        |s| json!({"type": "hooks.update", "requestId": "r", "sessionId": s, "onPreToolUse": []}),
    )
    .await;
}

#[tokio::test]
async fn context_update_outside_the_authorized_sessions_is_invalid_session() {
    refused(
        |s| json!({"type": "context.update", "requestId": "r", "sessionId": s, "context": "c"}),
    )
    .await;
}

#[tokio::test]
async fn filter_set_outside_the_authorized_sessions_is_invalid_session() {
    refused(|s| json!({"type": "filter.set", "requestId": "r", "sessionId": s, "stream": "x", "rules": []}))
        .await;
}

#[tokio::test]
async fn stream_query_outside_the_authorized_sessions_is_invalid_session() {
    refused(|s| json!({"type": "stream.query", "queryId": "q", "sessionId": s})).await;
}

#[tokio::test]
async fn shutdown_ready_outside_the_authorized_sessions_is_invalid_session() {
    let (_gw, host, mut p, mine, other) = setup().await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &mine);
    expect_shutdown(&mut p, &mine).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": other}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "shutdown.ready", "{e}");
    assert!(!end.is_finished(), "the wrong session released nothing");
    p.send(json!({"type": "shutdown.ready", "sessionId": mine}))
        .await;
    ended(end).await;
}

#[tokio::test]
async fn session_ready_from_a_provider_not_bound_to_all_is_unauthorized() {
    let (_gw, _host, mut p, mine, other) = setup().await;
    for s in [&other, &mine] {
        p.send(json!({"type": "session.ready", "sessionId": s}))
            .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], "session.ready", "{e}");
    }
}

#[tokio::test]
async fn a_paired_provider_is_held_to_its_session_too() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "other").await;
    let mut p = paired_bound(&gw, "ext", &s.id, json!({})).await;
    for m in [
        json!({"type": "push", "sessionId": other.id, "level": "keep", "event": "e"}),
        json!({"type": "tools.update", "requestId": "r", "sessionId": other.id, "tools": []}),
        json!({"type": "stream.query", "queryId": "q", "sessionId": other.id}),
        json!({"type": "filter.set", "requestId": "f", "sessionId": other.id, "stream": "x", "rules": []}),
    ] {
        p.send(m.clone()).await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["replyTo"], m["type"], "{e}");
    }
}

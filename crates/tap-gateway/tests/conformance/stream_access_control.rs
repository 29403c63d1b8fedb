//! Spec section "Stream access control" (Protocol rules): every provider queries its own
//! streams; cross-provider reads need internal trust (the in-process transport, decision
//! A1); `filter.set` works on own streams only, at every trust level. Spec decisions 24, S5.

use crate::common::*;

async fn pushed(
    gw: &TestGateway,
    name: &str,
    session: &str,
    stream: &str,
    events: &[&str],
) -> Provider {
    let mut p = bound(gw, name, session, json!([])).await;
    for e in events {
        p.send(json!({"type": "push", "stream": stream, "level": "keep", "event": e}))
            .await;
    }
    fence(&mut p).await;
    p
}

#[tokio::test]
async fn a_provider_queries_its_own_streams_by_name_or_by_default() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = pushed(&gw, "me", &s.id, "log", &["a", "b"]).await;
    p.send(json!({"type": "stream.query", "queryId": "named", "streams": ["log", "log@me"]}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["streams"]["log"][0]["event"], "b", "{h}");
    assert_eq!(h["streams"]["log@me"][1]["event"], "a", "{h}");
    p.send(json!({"type": "stream.query", "queryId": "all"}))
        .await;
    let h = p.expect("stream.history").await;
    let keys: Vec<&String> = h["streams"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 1, "{h}");
}

#[tokio::test]
async fn a_project_provider_cannot_read_another_providers_stream() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = pushed(&gw, "other", &s.id, "secret", &["x"]).await;
    let mut p = bound(&gw, "me", &s.id, json!([])).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["secret@other"]}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");
}

#[tokio::test]
async fn an_external_provider_cannot_read_another_providers_stream() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = pushed(&gw, "other", &s.id, "secret", &["x"]).await;
    let mut p = paired_bound(&gw, "me", &s.id, json!({})).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["secret@other"]}))
        .await;
    p.expect_error("UNAUTHORIZED").await;
}

#[tokio::test]
async fn an_internal_provider_may_read_another_providers_stream() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = pushed(&gw, "other", &s.id, "secret", &["x", "y"]).await;
    let mut p = internal(&gw, "me", &s.id, json!({})).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["secret@other"], "last": 1}));
    let h = p.expect("stream.history").await;
    assert_eq!(
        h["streams"]["secret@other"],
        json!([{"ts": h["streams"]["secret@other"][0]["ts"], "event": "y", "level": "keep"}])
    );
}

#[tokio::test]
async fn filter_set_on_another_providers_stream_is_unauthorized_even_for_internal_providers() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = pushed(&gw, "other", &s.id, "s", &[]).await;
    let mut p = internal(&gw, "me", &s.id, json!({})).await;
    p.send(json!({"type": "filter.set", "requestId": "f", "stream": "s@other", "rules": []}));
    assert_eq!(p.expect_error("UNAUTHORIZED").await["requestId"], "f");
}

#[tokio::test]
async fn a_query_mixing_own_and_foreign_streams_is_refused_whole() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = pushed(&gw, "other", &s.id, "secret", &["x"]).await;
    let mut p = pushed(&gw, "me", &s.id, "log", &["mine"]).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["log", "secret@other"]}))
        .await;
    p.expect_error("UNAUTHORIZED").await;
    fence(&mut p).await; // no partial stream.history
}

#[tokio::test]
async fn filter_set_on_another_providers_stream_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut other = pushed(&gw, "other", &s.id, "s", &[]).await;
    let mut p = bound(&gw, "me", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "stream": "s@other",
                  "rules": [{"match": ".*", "outcome": "drop"}]}),
    )
    .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["requestId"], "f", "{e}");
    // The other provider's pushes are untouched.
    other
        .send(json!({"type": "push", "stream": "s", "level": "keep", "event": "kept"}))
        .await;
    fence(&mut other).await;
    assert_eq!(stored(&host, &s.id, "s@other").await, ["kept"]);
}

#[tokio::test]
async fn filter_set_on_an_own_stream_by_qualified_name_is_accepted() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "me", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "stream": "s@me",
                  "rules": [{"match": "noise", "outcome": "drop"}]}),
    )
    .await;
    p.expect("ack").await;
    for e in ["noise 1", "signal"] {
        p.send(json!({"type": "push", "stream": "s", "level": "keep", "event": e}))
            .await;
    }
    fence(&mut p).await;
    assert_eq!(stored(&host, &s.id, "s@me").await, ["signal"]);
}

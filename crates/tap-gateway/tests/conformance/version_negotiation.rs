//! Spec section "Version negotiation" (Protocol rules): `protocolVersion` in `hello` and
//! `hello.ack`, `UNSUPPORTED_VERSION` closing the connection, unknown fields and unknown
//! message types not disconnecting (Core Profile "Forward compatibility": the gateway
//! answers an unknown provider→gateway type with `UNKNOWN_TYPE`).

use crate::common::*;

#[tokio::test]
async fn hello_ack_carries_protocol_version_2() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "v", &s.id, json!({})).await;
    assert_eq!(ack["protocolVersion"], 2, "{ack}");
}

async fn unsupported(version: Value) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(hello("v", &s.id, json!({ "protocolVersion": version })))
        .await;
    let e = p.expect_error("UNSUPPORTED_VERSION").await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    assert!(e["providerId"].is_string(), "{e}");
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "nothing after the fatal error: {after:?}");
}

#[tokio::test]
async fn unsupported_version_1_is_error_then_close() {
    unsupported(json!(1)).await;
}

#[tokio::test]
async fn unsupported_version_3_is_error_then_close() {
    unsupported(json!(3)).await;
}

#[tokio::test]
async fn unsupported_version_leaves_nothing_registered() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(hello(
        "v",
        &s.id,
        json!({"protocolVersion": 3, "tools": [tool("t")]}),
    ))
    .await;
    p.expect_error("UNSUPPORTED_VERSION").await;
    p.expect_closed().await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    assert_eq!(
        code(&invoke_unanswered(&host, &s.id, "t").await),
        Some("NOT_FOUND")
    );
}

#[tokio::test]
async fn hello_without_protocol_version_is_invalid_json_and_not_fatal() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "hello", "name": "v", "session": s.id}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    p.send(hello("v", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn unknown_fields_are_ignored_in_every_provider_message() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let future = json!({"nested": {"x": [1, 2]}});
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": gw.token(), "futureField": future}))
        .await;
    p.expect("sessions").await;
    p.send(hello(
        "fwd",
        &s.id,
        json!({"tools": [{"name": "t", "description": "d", "parameters": {}, "futureToolField": 1}],
               "futureHelloField": future}),
    ))
    .await;
    expect_bound(&mut p, &s.id).await;

    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.progress", "id": call["id"], "message": "m", "pct": 50}))
        .await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": 7, "futureResultField": true}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!(7)), "{r:?}");

    p.send(json!({"type": "push", "level": "surface", "event": "e", "futurePushField": 1}))
        .await;
    assert_eq!(next_delivery(&mut host).await.event, "e");
    p.send(json!({"type": "tools.update", "requestId": "u", "tools": [tool("t2")], "x": 1}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "u");
    p.send(json!({"type": "context.update", "requestId": "c", "context": "ctx", "x": 1}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "c");
    p.send(json!({"type": "hooks.update", "requestId": "h", "onPreToolUse": [], "x": 1}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "h");
    p.send(json!({"type": "filter.set", "requestId": "f", "stream": "s", "rules": [], "x": 1}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "f");
    p.send(json!({"type": "stream.query", "queryId": "q", "x": 1}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "q");
    fence(&mut p).await;
    p.send(json!({"type": "goodbye", "x": 1})).await;
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn unknown_message_type_does_not_disconnect_in_any_state() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = connect(&gw).await;
    // AwaitAuth
    fence(&mut p).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
    // AwaitHello
    fence(&mut p).await;
    p.send(hello("u", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
    // Bound
    p.send(json!({"type": "tool.frobnicate", "id": "x"})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "tool.frobnicate", "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
    p.send(json!({"type": "stream.query", "queryId": "still"}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "still");
}

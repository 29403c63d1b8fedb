//! Spec section "Error recovery guide" (Protocol rules → Error responses): one test per
//! row — whether the code is fatal, and that the recovery the table advises works.

use crate::common::*;
use tap_protocol::limits::{MAX_MESSAGE_BYTES, MAX_PUSHES_PER_SECOND};

#[tokio::test]
async fn auth_failed_is_fatal_and_the_right_token_on_a_new_connection_works() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": "ptk-wrong"})).await;
    p.expect_error("AUTH_FAILED").await;
    assert!(p.expect_closed().await.is_empty(), "the connection closes");
    let (_p, sessions) = authed(&gw).await;
    assert_eq!(sessions["type"], "sessions");
}

#[tokio::test]
async fn unsupported_version_is_fatal_and_version_2_on_a_new_connection_works() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(hello("p", &s.id, json!({"protocolVersion": 1})))
        .await;
    p.expect_error("UNSUPPORTED_VERSION").await;
    assert!(p.expect_closed().await.is_empty(), "the connection closes");
    bind(&gw, "p", &s.id, json!({})).await;
}

#[tokio::test]
async fn invalid_session_is_not_fatal_and_hello_after_sessions_updated_works() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, sessions) = authed(&gw).await;
    assert!(session_ids(&sessions).is_empty());
    hello_refused(&mut p, hello("p", "later", json!({})), "INVALID_SESSION").await;
    host.register_session(SessionRegister {
        session_id: Some("later".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let updated = p.expect("sessions.updated").await;
    assert_eq!(session_ids(&updated), ["later"]);
    p.send(hello("p", "later", json!({}))).await;
    expect_bound(&mut p, "later").await;
}

#[tokio::test]
async fn duplicate_instance_is_not_fatal_and_a_new_instance_works() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _holder = bind(&gw, "b", &s.id, json!({"instance": "one"})).await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("b", &s.id, json!({"instance": "one"})),
        "DUPLICATE_INSTANCE",
    )
    .await;
    p.send(hello("b", &s.id, json!({"instance": "two"}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn duplicate_instance_is_not_fatal_and_the_reconnect_token_works() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut holder, ack) = bind(&gw, "b", &s.id, json!({"instance": "one"})).await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("b", &s.id, json!({"instance": "one"})),
        "DUPLICATE_INSTANCE",
    )
    .await;
    p.send(hello(
        "b",
        &s.id,
        json!({"instance": "one", "reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    expect_bound(&mut p, &s.id).await;
    holder.expect_closed().await;
}

#[tokio::test]
async fn tool_conflict_is_not_fatal_and_renaming_with_tools_update_works() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _holder = bound(&gw, "a", &s.id, json!([tool("shared")])).await;
    let mut p = bound(&gw, "b", &s.id, json!([tool("mine")])).await;
    p.send(json!({"type": "tools.update", "requestId": "1", "tools": [tool("shared")]}))
        .await;
    p.expect_error("TOOL_CONFLICT").await;
    p.send(json!({"type": "tools.update", "requestId": "2", "tools": [tool("b_shared")]}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "2");
    let r = call_and_answer(&host, &mut p, &s.id, "b_shared", json!("ok")).await;
    assert_eq!(r.data, Some(json!("ok")));
}

#[tokio::test]
async fn tool_conflict_in_hello_is_not_fatal_and_a_renamed_hello_works() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _holder = bound(&gw, "a", &s.id, json!([tool("shared")])).await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("b", &s.id, json!({"tools": [tool("shared")]})),
        "TOOL_CONFLICT",
    )
    .await;
    p.send(hello("b", &s.id, json!({"tools": [tool("b_shared")]})))
        .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn payload_too_large_is_not_fatal_and_a_smaller_retry_works() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "surface",
                  "event": "x".repeat(MAX_MESSAGE_BYTES)}))
        .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    p.send(json!({"type": "push", "level": "surface", "event": "small"}))
        .await;
    assert_eq!(next_delivery(&mut host).await.event, "small");
}

#[tokio::test(start_paused = true)]
async fn rate_limited_is_not_fatal_and_a_retry_after_1_second_works() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for i in 0..MAX_PUSHES_PER_SECOND {
        p.send(json!({"type": "push", "level": "surface", "event": format!("e{i}")}))
            .await;
    }
    p.send(json!({"type": "push", "level": "surface", "event": "over"}))
        .await;
    p.expect_error("RATE_LIMITED").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    p.send(json!({"type": "push", "level": "surface", "event": "retried"}))
        .await;
    fence(&mut p).await;
    for i in 0..MAX_PUSHES_PER_SECOND {
        assert_eq!(next_delivery(&mut host).await.event, format!("e{i}"));
    }
    assert_eq!(next_delivery(&mut host).await.event, "retried");
}

#[tokio::test]
async fn unauthorized_is_not_fatal() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = bound(&gw, "other", &s.id, json!([])).await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "stream.query", "queryId": "q1", "streams": ["s@other"]}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");
    p.send(json!({"type": "stream.query", "queryId": "q2", "streams": ["s"]}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "q2");
}

#[tokio::test]
async fn invalid_json_is_not_fatal_and_the_fixed_message_works() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send_raw(r#"{"type": "push", "level": "surface", "event": "x""#)
        .await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "push", "level": "surface", "event": "fixed"}))
        .await;
    assert_eq!(next_delivery(&mut host).await.event, "fixed");
}

#[tokio::test]
async fn unknown_type_is_not_fatal() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.add", "tools": []})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "tools.add", "{e}");
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "q");
}

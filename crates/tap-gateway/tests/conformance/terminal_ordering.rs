//! Spec section "Terminal message ordering for tool calls" (Protocol rules), with the Core
//! Profile's "Tool call terminal semantics" (rule 4, the malformed-result rule, spec
//! decision 21) and "Disconnect cleanup". Decisions 17 and 18: unknown-id results are
//! ignored silently; a caller's cancel resolves `CANCELLED` at once, a timeout `TIMEOUT`.

use crate::common::*;
use tap_protocol::limits::MAX_TOOL_RESULT_BYTES;

#[tokio::test]
async fn the_first_tool_result_wins_and_a_later_one_for_the_same_id_is_ignored() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    answer(&mut p, &call, json!("first")).await;
    answer(&mut p, &call, json!("second")).await;
    p.send(
        json!({"type": "tool.result", "id": call["id"], "error": "late", "errorCode": "INTERNAL"}),
    )
    .await;
    fence(&mut p).await; // ignored silently: no error
    assert_eq!(result_of(rx).await.data, Some(json!("first")));
    // No second tool.result reaches the host.
    let r = call_and_answer(&host, &mut p, &s.id, "t", json!("next")).await;
    assert_eq!(r.data, Some(json!("next")));
    while let Ok(Some(e)) = tokio::time::timeout(Duration::from_millis(50), host.next_event()).await
    {
        assert!(!matches!(e, HostEvent::ToolResult(_)), "{e:?}");
    }
}

#[tokio::test]
async fn after_tool_cancel_the_providers_cancelled_result_is_accepted_silently() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    host.cancel(&call_id).unwrap();
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["reason"], "cancelled");
    p.send(json!({"type": "tool.result", "id": call["id"], "error": "Cancelled", "errorCode": "CANCELLED"}))
        .await;
    fence(&mut p).await;
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
}

#[tokio::test]
async fn after_tool_cancel_a_non_cancelled_result_is_ignored() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    host.cancel(&call_id).unwrap();
    p.expect("tool.cancel").await;
    answer(&mut p, &call, json!("too late")).await;
    fence(&mut p).await;
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("CANCELLED"), "{r:?}");
    assert_eq!(r.data, None);
}

#[tokio::test(start_paused = true)]
async fn after_a_timeout_the_caller_gets_timeout_and_a_late_result_is_ignored() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([timed_tool("slow", 1_000)])).await;
    let rx = invoke(&host, &s.id, "slow", json!({}));
    let call = p.expect("tool.call").await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["reason"], "timeout");
    assert_eq!(code(&result_of(rx).await), Some("TIMEOUT"));
    answer(&mut p, &call, json!("late")).await;
    fence(&mut p).await;
}

#[tokio::test]
async fn a_provider_disconnect_fails_its_in_flight_calls_disconnected() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("a"), tool("b")])).await;
    let ra = invoke(&host, &s.id, "a", json!({}));
    let rb = invoke(&host, &s.id, "b", json!({}));
    p.expect("tool.call").await;
    p.expect("tool.call").await;
    drop(p);
    assert_eq!(code(&result_of(ra).await), Some("DISCONNECTED"));
    assert_eq!(code(&result_of(rb).await), Some("DISCONNECTED"));
}

#[tokio::test]
async fn calls_in_flight_at_disconnect_are_not_replayed_on_reconnect() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "p", &s.id, json!({"tools": [tool("t")]})).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    old.expect("tool.call").await;
    drop(old);
    assert_eq!(code(&result_of(rx).await), Some("DISCONNECTED"));
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"tools": [tool("t")], "reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    fence(&mut new).await; // no replayed tool.call
}

// ---------------------------------------------------------------- Core: malformed results

#[tokio::test]
async fn malformed_json_with_one_pending_call_fails_that_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    p.expect("tool.call").await;
    p.send_raw("{\"type\": \"tool.result\", ").await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "tool.result", "{e}");
    assert_eq!(code(&result_of(rx).await), Some("INVALID_JSON"));
    fence(&mut p).await; // still connected
}

#[tokio::test]
async fn an_invalid_tool_result_naming_a_pending_id_fails_that_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("a"), tool("b")])).await;
    let ra = invoke(&host, &s.id, "a", json!({}));
    let ca = p.expect("tool.call").await;
    let rb = invoke(&host, &s.id, "b", json!({}));
    let cb = p.expect("tool.call").await;
    // `error` must be a string: invalid, but it names b's id.
    p.send(json!({"type": "tool.result", "id": cb["id"], "error": 42}))
        .await;
    p.expect_error("INVALID_JSON").await;
    assert_eq!(code(&result_of(rb).await), Some("INVALID_JSON"));
    answer(&mut p, &ca, json!("a")).await;
    assert_eq!(result_of(ra).await.data, Some(json!("a")));
}

#[tokio::test]
async fn malformed_json_with_several_pending_calls_disconnects_and_fails_them_all_disconnected() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("a"), tool("b")])).await;
    let ra = invoke(&host, &s.id, "a", json!({}));
    let rb = invoke(&host, &s.id, "b", json!({}));
    p.expect("tool.call").await;
    p.expect("tool.call").await;
    p.send_raw("not json at all").await;
    let seen = p.expect_closed().await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["code"], "INVALID_JSON");
    assert_eq!(code(&result_of(ra).await), Some("DISCONNECTED"));
    assert_eq!(code(&result_of(rb).await), Some("DISCONNECTED"));
}

#[tokio::test]
async fn an_oversized_tool_result_fails_its_call_with_payload_too_large() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    answer(&mut p, &call, json!("x".repeat(MAX_TOOL_RESULT_BYTES))).await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "tool.result", "{e}");
    assert_eq!(code(&result_of(rx).await), Some("PAYLOAD_TOO_LARGE"));
    fence(&mut p).await;
}

#[tokio::test]
async fn malformed_json_with_no_pending_call_is_only_an_error() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    p.send_raw("][").await;
    p.expect_error("INVALID_JSON").await;
    fence(&mut p).await;
}

#[tokio::test]
async fn an_unknown_type_or_invalid_non_result_message_does_not_fail_pending_calls() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.frobnicate"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
    p.send(json!({"type": "push", "level": "loud", "event": "e"}))
        .await;
    p.expect_error("INVALID_JSON").await;
    answer(&mut p, &call, json!("fine")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("fine")));
}

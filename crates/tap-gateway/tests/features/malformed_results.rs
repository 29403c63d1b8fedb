//! The malformed-result rule: a broken frame from a bound provider that may have been a
//! `tool.result` must not leave a call pending forever.
use tap_testkit::*;

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::HostEvent;
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// Starts a call and returns its result receiver and the `tool.call` the provider got.
async fn start(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
) -> (oneshot::Receiver<HostEvent>, Value) {
    let (_, rx) = host.start_invoke(session, "work", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    (rx, call)
}

async fn answer(p: &mut Provider, call: &Value, data: Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
}

/// A call that succeeds end to end: the provider is still connected and bound.
async fn still_works(host: &HostClient, p: &mut Provider, session: &str) {
    let (rx, call) = start(host, p, session).await;
    answer(p, &call, json!("ok")).await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!("ok")), "{r:?}");
}

#[tokio::test]
async fn invalid_json_with_one_pending_call_fails_that_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;
    let (rx, _call) = start(&host, &mut p, &s.id).await;

    p.send_raw(r#"{"type": "tool.result", "id": "#).await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "tool.result");
    assert_eq!(e["sessionId"], s.id.as_str());
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::InvalidJson), "{r:?}");
    assert_eq!(r.data, None);

    still_works(&host, &mut p, &s.id).await;
}

#[tokio::test]
async fn an_invalid_result_naming_a_pending_id_fails_that_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;
    let (rx1, call1) = start(&host, &mut p, &s.id).await;
    let (rx2, call2) = start(&host, &mut p, &s.id).await;

    // Mistyped `error`: a tool.result that does not decode, but names call 1.
    p.send(json!({"type": "tool.result", "id": call1["id"], "error": {"not": "a string"}}))
        .await;
    p.expect_error("INVALID_JSON").await;
    let r = result_of(rx1).await;
    assert_eq!(r.error_code, Some(ErrorCode::InvalidJson), "{r:?}");

    // Even with two calls pending, only the named one failed; the provider stays.
    answer(&mut p, &call2, json!("two")).await;
    let r = result_of(rx2).await;
    assert_eq!(r.data, Some(json!("two")), "{r:?}");
    still_works(&host, &mut p, &s.id).await;
}

#[tokio::test]
async fn invalid_json_with_several_pending_calls_disconnects_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;
    let (rx1, _) = start(&host, &mut p, &s.id).await;
    let (rx2, _) = start(&host, &mut p, &s.id).await;

    p.send_raw("this is not json").await;
    let seen = p.expect_closed().await;
    assert!(
        seen.iter()
            .any(|m| m["type"] == "error" && m["code"] == "INVALID_JSON"),
        "no INVALID_JSON error before the close: {seen:?}"
    );
    for rx in [rx1, rx2] {
        let r = result_of(rx).await;
        assert_eq!(r.error_code, Some(ErrorCode::Disconnected), "{r:?}");
    }
}

#[tokio::test]
async fn invalid_json_with_no_pending_call_is_just_an_error() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;

    p.send_raw("{{{").await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["sessionId"], s.id.as_str());

    still_works(&host, &mut p, &s.id).await;
}

#[tokio::test]
async fn an_unknown_type_with_calls_pending_does_not_fail_them() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;
    let (rx1, call1) = start(&host, &mut p, &s.id).await;
    let (rx2, call2) = start(&host, &mut p, &s.id).await;

    p.send(json!({"type": "tool.resultt", "id": call1["id"], "data": "typo"}))
        .await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "tool.resultt");

    answer(&mut p, &call1, json!("one")).await;
    answer(&mut p, &call2, json!("two")).await;
    assert_eq!(result_of(rx1).await.data, Some(json!("one")));
    assert_eq!(result_of(rx2).await.data, Some(json!("two")));
}

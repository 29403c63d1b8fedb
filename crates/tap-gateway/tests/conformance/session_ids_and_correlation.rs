//! Spec section "Session IDs and correlation IDs" (Protocol rules): `id` / `callId`
//! values are globally unique; every session-scoped gateway→provider message carries
//! `sessionId`; provider→gateway responses need none (correlated by id), except
//! `shutdown.ready`, which carries it.

use crate::common::*;
use std::collections::HashSet;

#[tokio::test]
async fn tool_call_ids_are_globally_unique_across_sessions() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut a = bound(&gw, "a", &s1.id, json!([tool("t")])).await;
    let mut b = bound(&gw, "b", &s2.id, json!([tool("t")])).await;
    let mut ids = HashSet::new();
    for _ in 0..5 {
        for (p, s) in [(&mut a, &s1.id), (&mut b, &s2.id)] {
            let rx = invoke(&host, s, "t", json!({}));
            let call = p.expect("tool.call").await;
            assert!(
                ids.insert(call["id"].as_str().unwrap().to_string()),
                "{call}"
            );
            answer(p, &call, json!(null)).await;
            result_of(rx).await;
        }
    }
    assert_eq!(ids.len(), 10);
}

#[tokio::test]
async fn gate_and_transform_call_ids_are_globally_unique() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let host = Arc::new(host);
    let extra = json!({
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "gate", "gateId": "g"}],
                  "transforms": {"x": {"action": "callback"}}}});
    let (mut a, _) = bind(&gw, "a", &s1.id, extra.clone()).await;
    let (mut b, _) = bind(&gw, "b", &s2.id, extra).await;
    let mut ids = HashSet::new();
    for _ in 0..3 {
        for (p, s) in [(&mut a, s1.id.clone()), (&mut b, s2.id.clone())] {
            let h = host.clone();
            let s2 = s.clone();
            let task = tokio::spawn(async move { h.precheck(&s2, "shell", json!({})).await });
            let check = p.expect("gate.check").await;
            assert!(
                ids.insert(check["callId"].as_str().unwrap().to_string()),
                "{check}"
            );
            p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
                .await;
            task.await.unwrap().unwrap();
            let h = host.clone();
            let task =
                tokio::spawn(
                    async move { h.apply_prompt(&s, "p", sections(&[("x", "x0")])).await },
                );
            let req = p.expect("transform.request").await;
            assert!(
                ids.insert(req["callId"].as_str().unwrap().to_string()),
                "{req}"
            );
            p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "x1"}))
                .await;
            task.await.unwrap().unwrap();
        }
    }
    assert_eq!(ids.len(), 12);
}

#[tokio::test]
async fn session_lifecycle_carries_session_id() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(hello("p", &s.id, json!({}))).await;
    p.expect("hello.ack").await;
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["sessionId"], s.id.as_str(), "{started}");
    host.set_state(&s.id, BusyState::Busy).unwrap();
    host.set_state(&s.id, BusyState::Idle).unwrap();
    let idle = p.expect("session.lifecycle").await;
    assert_eq!(
        (idle["state"].as_str(), idle["sessionId"].as_str()),
        (Some("idle"), Some(s.id.as_str()))
    );
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    let pending = expect_shutdown(&mut p, &s.id).await;
    assert_eq!(pending["sessionId"], s.id.as_str());
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
}

#[tokio::test]
async fn session_event_carries_session_id() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({"subscribe": ["user.message"]})).await;
    host.session_event(&s.id, "user.message", json!({"content": "hi"}))
        .unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
}

#[tokio::test]
async fn tool_call_and_tool_cancel_carry_session_id() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["sessionId"], s.id.as_str(), "{call}");
    host.cancel(&call_id).unwrap();
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"], "{cancel}");
    assert_eq!(cancel["sessionId"], s.id.as_str(), "{cancel}");
    result_of(rx).await;
}

#[tokio::test]
async fn gate_check_carries_session_id() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "gate", "gateId": "g"}]}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move { h.precheck(&sid, "shell", json!({})).await });
    let check = p.expect("gate.check").await;
    assert_eq!(check["sessionId"], s.id.as_str(), "{check}");
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn transform_request_carries_session_id() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"hooks": {"transforms": {"x": {"action": "callback"}}}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task =
        tokio::spawn(async move { h.apply_prompt(&sid, "p", sections(&[("x", "x0")])).await });
    let req = p.expect("transform.request").await;
    assert_eq!(req["sessionId"], s.id.as_str(), "{req}");
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "x1"}))
        .await;
    assert_eq!(task.await.unwrap().unwrap().sections["x"], "x1");
}

#[tokio::test]
async fn responses_are_correlated_by_id_without_session_id() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut a = bound(&gw, "a", &s1.id, json!([tool("t")])).await;
    let mut b = bound(&gw, "b", &s2.id, json!([tool("t")])).await;
    let rx1 = invoke(&host, &s1.id, "t", json!({}));
    let rx2 = invoke(&host, &s2.id, "t", json!({}));
    let c1 = a.expect("tool.call").await;
    let c2 = b.expect("tool.call").await;
    // Answered in the opposite order, without sessionId: each reaches its own caller.
    b.send(json!({"type": "tool.result", "id": c2["id"], "data": "two"}))
        .await;
    a.send(json!({"type": "tool.result", "id": c1["id"], "data": "one"}))
        .await;
    assert_eq!(result_of(rx1).await.data, Some(json!("one")));
    assert_eq!(result_of(rx2).await.data, Some(json!("two")));
}

#[tokio::test]
async fn shutdown_ready_carries_session_id() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    // Without sessionId it is malformed and releases nothing.
    p.send(json!({"type": "shutdown.ready"})).await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "shutdown.ready", "{e}");
    assert!(!end.is_finished());
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    assert_eq!(ended(end).await.session_id, s.id);
}

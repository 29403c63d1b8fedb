//! Session hosts that drop and come back: within the grace they resume their sessions
//! and get what they missed; after it, their sessions end.
use tap_testkit::*;

use serde_json::json;
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::Gateway;
use tap_protocol::host::HostEvent;

/// Polls the gateway's status until `cond` holds, failing after [`PATIENCE`].
async fn wait_until(
    gw: &Gateway,
    what: &str,
    cond: impl Fn(&tap_protocol::host::GatewayStatus) -> bool,
) {
    tap_testkit::wait_until(what, || std::future::ready(cond(&gw.status()))).await
}

async fn wait_detached(gw: &Gateway, session: &str) {
    wait_until(gw, "the host is detached", |s| {
        s.sessions
            .iter()
            .any(|x| x.id == session && x.host_detached)
    })
    .await;
}

async fn resume(gw: &TestGateway, token: String) -> HostClient {
    HostClient::connect(
        &format!("{}/session", gw.url()),
        gw.handle.gateway().host_token(),
        "test-host",
        Some(token),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_host_that_resumes_within_the_grace_keeps_its_sessions_and_gets_missed_deliveries() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let token = host.welcome().resume_token.clone();
    let host_id = host.welcome().host_id.clone();
    assert!(host.welcome().resumed.is_empty());

    drop(host);
    wait_detached(gw.handle.gateway(), &s.id).await;
    p.send(json!({"type": "push", "level": "surface", "event": "while you were away"}))
        .await;
    // A round trip on the provider's connection: the push has been handled.
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;

    let mut host = resume(&gw, token).await;
    assert_eq!(host.welcome().host_id, host_id);
    assert_eq!(host.welcome().resumed, vec![s.id.clone()]);
    let d = next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    assert_eq!(d.event, "while you were away");
    assert_eq!(d.session_id, s.id);

    // The session never ended: the provider heard nothing in between (its next message
    // is a call from the resumed host), and the session is attached again.
    let (_, rx) = host.start_invoke(&s.id, "echo", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "back"}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("back")));
    let status = host.status().await.unwrap();
    assert_eq!(status.sessions.len(), 1);
    assert!(!status.sessions[0].host_detached);
}

#[tokio::test]
async fn a_tool_result_that_finished_while_away_is_replayed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;
    let token = host.welcome().resume_token.clone();
    let (call_id, _rx) = host.start_invoke(&s.id, "slow", json!({})).unwrap();
    let call = p.expect("tool.call").await;

    drop(host);
    wait_detached(gw.handle.gateway(), &s.id).await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": {"answer": 42}}))
        .await;
    // The call has finished at the gateway before the host comes back.
    wait_until(gw.handle.gateway(), "the call is answered", |st| {
        st.providers.iter().all(|p| p.in_flight == 0)
    })
    .await;

    let mut host = resume(&gw, token).await;
    assert_eq!(host.welcome().resumed, vec![s.id.clone()]);
    let r = next_host_event(&mut host, |e| matches!(e, HostEvent::ToolResult(_))).await;
    let HostEvent::ToolResult(r) = r else {
        unreachable!()
    };
    assert_eq!(r.call_id, call_id);
    assert_eq!(r.data, Some(json!({"answer": 42})));
    assert_eq!(r.error_code, None);
}

#[tokio::test]
async fn a_host_that_does_not_resume_in_time_ends_its_sessions() {
    let gw = TestGateway::start_with(|c| c.host_resume_grace = Duration::from_millis(100)).await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let token = host.welcome().resume_token.clone();
    let host_id = host.welcome().host_id.clone();

    drop(host);
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending");
    assert_eq!(pending["sessionId"], s.id.as_str());
    let updated = p.expect("sessions.updated").await;
    assert_eq!(updated["active"], json!([]));
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    wait_until(gw.handle.gateway(), "the session is gone", |st| {
        st.sessions.is_empty()
    })
    .await;

    // Too late to resume: the token no longer names a host.
    let late = resume(&gw, token).await;
    assert!(late.welcome().resumed.is_empty());
    assert_ne!(late.welcome().host_id, host_id);
}

#[tokio::test]
async fn a_host_without_sessions_that_disconnects_has_its_calls_cancelled() {
    let gw = TestGateway::start().await;
    let (owner, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;
    let caller = gw.host().await;
    let (_, _rx) = caller.start_invoke(&s.id, "slow", json!({})).unwrap();
    let call = p.expect("tool.call").await;

    drop(caller);
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["sessionId"], s.id.as_str());
    assert_eq!(cancel["reason"], "cancelled");

    // The session (owned by the other host) is untouched.
    let (_, rx) = owner.start_invoke(&s.id, "slow", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("ok")));
}

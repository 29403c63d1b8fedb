//! The session lifecycle as providers and hosts see it: registration, ending with a
//! shutdown deadline, teardown, busy/idle, and who may do what to a session.
use tap_testkit::*;

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tap_client::{ClientError, HostClient};
use tap_protocol::host::{BusyState, HostEvent, SessionEnded, SessionRegister};
use tap_protocol::ErrorCode;
use tokio::task::JoinHandle;

/// Far enough away that reaching it would fail the test by [`PATIENCE`] first.
const FAR_DEADLINE: Duration = Duration::from_secs(60);

async fn far_deadline_gateway() -> TestGateway {
    TestGateway::start_with(|c| c.shutdown_deadline = FAR_DEADLINE).await
}

fn session_ids(msg: &Value) -> Vec<String> {
    msg["active"]
        .as_array()
        .expect("'active' list")
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// Ends `session` from a task, so the test can act as the provider meanwhile.
fn end_in_background(host: &Arc<HostClient>, session: &str) -> JoinHandle<SessionEnded> {
    let host = host.clone();
    let session = session.to_string();
    tokio::spawn(async move { host.end_session(&session).await.unwrap() })
}

async fn ended(task: JoinHandle<SessionEnded>) -> SessionEnded {
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("the session did not end")
        .unwrap()
}

/// The provider's view of a session ending: `shutdown.pending`, then `sessions.updated`
/// without it. Returns the `shutdown.pending` message.
async fn expect_shutdown(p: &mut Provider, session: &str) -> Value {
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    assert_eq!(pending["sessionId"], session);
    let updated = p.expect("sessions.updated").await;
    assert!(!session_ids(&updated).contains(&session.to_string()));
    pending
}

fn refused_with(r: Result<impl std::fmt::Debug, ClientError>, code: ErrorCode) {
    match r {
        Err(ClientError::Refused(e)) => assert_eq!(e.code, code, "{e:?}"),
        other => panic!("expected a {code} refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn registering_a_session_tells_every_provider() {
    let gw = TestGateway::start().await;
    let (host, s0) = gw.host_with_session().await;
    let mut bound = gw.bound("bound", &s0.id, json!([tool("t")])).await;
    let (mut waiting, sessions) = gw.authed().await;
    assert_eq!(session_ids(&sessions), vec![s0.id.clone()]);

    let s1 = host
        .register_session(SessionRegister {
            label: Some("second".into()),
            cwd: Some("/work/two".into()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    for p in [&mut bound, &mut waiting] {
        let updated = p.expect("sessions.updated").await;
        assert_eq!(session_ids(&updated), vec![s0.id.clone(), s1.id.clone()]);
        let new = &updated["active"][1];
        assert_eq!(new["label"], "second");
        assert_eq!(new["cwd"], "/work/two");
        assert_eq!(new["foreground"], true);
        // The newest foreground session takes the foreground from the others.
        assert_eq!(updated["active"][0]["foreground"], false);
    }
}

#[tokio::test]
async fn ending_a_session_sends_shutdown_pending_to_bound_providers_and_sessions_updated_without_it(
) {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let other = host
        .register_session(SessionRegister::default())
        .await
        .unwrap();
    let mut p = gw.bound("leaving", &s.id, json!([tool("a")])).await;
    let mut elsewhere = gw.bound("staying", &other.id, json!([tool("b")])).await;
    let (mut waiting, _) = gw.authed().await;
    let host = Arc::new(host);

    let end = end_in_background(&host, &s.id);
    let pending = expect_shutdown(&mut p, &s.id).await;
    assert_eq!(pending["deadline"], FAR_DEADLINE.as_millis() as u64);
    // Providers not bound to it only hear that the session list changed.
    for q in [&mut elsewhere, &mut waiting] {
        let updated = q.expect("sessions.updated").await;
        assert_eq!(session_ids(&updated), vec![other.id.clone()]);
    }

    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    let e = ended(end).await;
    assert_eq!(e.session_id, s.id);
    assert!(e.request_id.is_some());
}

#[tokio::test]
async fn a_goodbye_lets_the_session_end_before_the_deadline() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("a")])).await;
    let host = Arc::new(host);

    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    // Teardown waits for the provider: a round trip on the host connection later, the
    // session has still not ended.
    host.status().await.unwrap();
    assert!(
        !end.is_finished(),
        "the session ended before the provider answered"
    );

    p.send(json!({"type": "goodbye", "reason": "done"})).await;
    p.expect_closed().await;
    // Well before the 60 s deadline (PATIENCE is 10 s).
    let e = ended(end).await;
    assert_eq!(e.session_id, s.id);
    assert_eq!(e.reason, "ended by its host");
    assert!(host.status().await.unwrap().sessions.is_empty());
}

#[tokio::test]
async fn shutdown_ready_lets_the_session_end_before_the_deadline() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("a")])).await;
    let host = Arc::new(host);

    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    host.status().await.unwrap();
    assert!(
        !end.is_finished(),
        "the session ended before the provider answered"
    );

    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    let e = ended(end).await;
    assert_eq!(e.session_id, s.id);

    // The provider is still connected, now unbound.
    let status = host.status().await.unwrap();
    assert!(status.sessions.is_empty());
    assert_eq!(status.providers.len(), 1);
    assert_eq!(status.providers[0].state, "unbound");
    assert_eq!(status.providers[0].session, None);
}

#[tokio::test]
async fn a_silent_provider_is_torn_down_at_the_deadline() {
    let deadline = Duration::from_millis(100);
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = deadline).await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("silent", &s.id, json!([tool("a")])).await;

    let started = tokio::time::Instant::now();
    let e = tokio::time::timeout(PATIENCE, host.end_session(&s.id))
        .await
        .expect("the session did not end at its deadline")
        .unwrap();
    // A lower bound only: teardown cannot come before the deadline when nobody answers.
    assert!(started.elapsed() >= deadline);
    assert_eq!(e.session_id, s.id);
    let pending = expect_shutdown(&mut p, &s.id).await;
    assert_eq!(pending["deadline"], 100);

    // Torn down: the provider is connected but no longer bound.
    p.send(json!({"type": "push", "level": "keep", "event": "anyone?"}))
        .await;
    let err = p.expect_error("INVALID_SESSION").await;
    assert_eq!(err["replyTo"], "push");
}

#[tokio::test]
async fn teardown_cancels_calls_still_in_flight_in_the_session() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;
    let host = Arc::new(host);
    let (call_id, rx) = host.start_invoke(&s.id, "slow", json!({})).unwrap();
    let call = p.expect("tool.call").await;

    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["sessionId"], s.id.as_str());
    assert_eq!(cancel["reason"], "session ended");
    let r = result_of(rx).await;
    assert_eq!(r.call_id, call_id);
    assert_eq!(r.error_code, Some(ErrorCode::Cancelled), "{r:?}");
    ended(end).await;
}

#[tokio::test]
async fn after_teardown_the_provider_can_hello_into_another_session() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let host = Arc::new(host);

    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;

    let next = host
        .register_session(SessionRegister::default())
        .await
        .unwrap();
    let updated = p.expect("sessions.updated").await;
    assert_eq!(session_ids(&updated), vec![next.id.clone()]);
    p.send(
        json!({"type": "hello", "name": "prov", "protocolVersion": 2,
                  "session": next.id, "tools": [tool("echo")]}),
    )
    .await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], next.id.as_str());
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started");

    let (_, rx) = host.start_invoke(&next.id, "echo", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["sessionId"], next.id.as_str());
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "again"}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("again")));
}

#[tokio::test]
async fn going_idle_after_busy_tells_bound_providers() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;

    // Idle → idle and idle → busy say nothing: the next thing the provider hears is a
    // call made after them on the same host connection.
    host.set_state(&s.id, BusyState::Idle).unwrap();
    host.set_state(&s.id, BusyState::Busy).unwrap();
    let (_, rx) = host.start_invoke(&s.id, "echo", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": 1}))
        .await;
    result_of(rx).await;

    host.set_state(&s.id, BusyState::Idle).unwrap();
    let idle = p.expect("session.lifecycle").await;
    assert_eq!(idle["state"], "idle");
    assert_eq!(idle["sessionId"], s.id.as_str());
}

#[tokio::test]
async fn host_chosen_session_ids_are_used_and_duplicates_refused() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, _) = gw.authed().await;
    let register = |id: &str| SessionRegister {
        session_id: Some(id.to_string()),
        ..Default::default()
    };
    let s = host.register_session(register("my-session")).await.unwrap();
    assert_eq!(s.id, "my-session");
    let updated = p.expect("sessions.updated").await;
    assert_eq!(session_ids(&updated), vec!["my-session".to_string()]);

    refused_with(
        host.register_session(register("my-session")).await,
        ErrorCode::InvalidSession,
    );
    // Another host cannot take the id either.
    let other = gw.host().await;
    refused_with(
        other.register_session(register("my-session")).await,
        ErrorCode::InvalidSession,
    );
    let status = host.status().await.unwrap();
    assert_eq!(status.sessions.len(), 1);
}

#[tokio::test]
async fn the_session_id_all_is_refused() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    refused_with(
        host.register_session(SessionRegister {
            session_id: Some("all".into()),
            ..Default::default()
        })
        .await,
        ErrorCode::InvalidSession,
    );
    refused_with(
        host.register_session(SessionRegister {
            session_id: Some(String::new()),
            ..Default::default()
        })
        .await,
        ErrorCode::InvalidSession,
    );
    assert!(host.status().await.unwrap().sessions.is_empty());
}

#[tokio::test]
async fn a_host_cannot_end_or_report_state_for_another_hosts_session() {
    let gw = TestGateway::start().await;
    let (owner, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let mut intruder = gw.host().await;

    refused_with(intruder.end_session(&s.id).await, ErrorCode::Unauthorized);

    intruder.set_state(&s.id, BusyState::Busy).unwrap();
    let e = next_host_event(&mut intruder, |e| matches!(e, HostEvent::Error(_))).await;
    let HostEvent::Error(e) = e else {
        unreachable!()
    };
    assert_eq!(e.code, ErrorCode::Unauthorized);
    assert_eq!(e.reply_to.as_deref(), Some("session.state"));

    // Nothing happened to the session: still listed, still idle, provider still bound.
    let status = owner.status().await.unwrap();
    assert_eq!(status.sessions.len(), 1);
    assert_eq!(status.sessions[0].state, BusyState::Idle);
    assert_eq!(status.providers[0].state, "bound");
    // And the provider heard nothing (no shutdown.pending): its next message is a call.
    let (_, rx) = owner.start_invoke(&s.id, "echo", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": 1}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!(1)));
}

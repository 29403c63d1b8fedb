//! `tap_set_session_mode` (issue 40, host-asks contract section 2) over a real `/session`
//! socket: refused when the host lists no modes or not that one; otherwise always asked
//! (answered here through the façade the control plane calls), and once approved the host
//! gets `session.mode.set` and its `session.mode.result` is the tool's result.

use serde_json::json;
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::GatewayEvent;
use tap_protocol::approvals::{AnswerScope, ApprovalApprove, ApprovalDeny, WaitingCall};
use tap_protocol::host::{
    HostCapabilities, HostClient as Runtime, HostEvent, SessionModeResult, SessionModeSet,
    SessionRegister,
};
use tap_testkit::*;

const TOOL: &str = "tap_set_session_mode";

/// A session on `host` whose host can switch to `modes`.
async fn session(host: &HostClient, modes: &[&str]) -> String {
    host.register_session(SessionRegister {
        label: Some("agent".into()),
        capabilities: Some(HostCapabilities {
            modes: modes.iter().map(|m| m.to_string()).collect(),
            client: Some(Runtime {
                name: "copilot-cli".into(),
                version: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

async fn next_waiting(events: &mut tokio::sync::broadcast::Receiver<GatewayEvent>) -> WaitingCall {
    loop {
        if let GatewayEvent::ApprovalWaiting(c) = events.recv().await.unwrap() {
            return *c;
        }
    }
}

async fn mode_set(host: &mut HostClient) -> SessionModeSet {
    match next_host_event(host, |e| matches!(e, HostEvent::SessionModeSet(_))).await {
        HostEvent::SessionModeSet(m) => m,
        _ => unreachable!(),
    }
}

fn approve(id: &str, scope: AnswerScope) -> ApprovalApprove {
    ApprovalApprove {
        id: id.into(),
        scope,
        minutes: None,
        args_pattern: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_without_modes_or_for_a_mode_the_host_does_not_list() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let none = session(&host, &[]).await;
    let some = session(&host, &["interactive", "plan"]).await;
    let r = result_of(invoke(&host, &none, TOOL, json!({"mode": "plan"}))).await;
    let e = r.error.unwrap();
    assert!(
        e.contains("This session's host (test-host) cannot change mode"),
        "{e}"
    );
    let r = result_of(invoke(&host, &some, TOOL, json!({"mode": "autopilot"}))).await;
    let e = r.error.unwrap();
    assert!(e.contains("can switch to: interactive, plan"), "{e}");
    // Refused before anyone is asked.
    assert!(gw.handle.gateway().approvals_list().waiting.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asked_every_time_approved_the_host_switches_denied_it_hears_nothing() {
    let gw = TestGateway::start().await;
    let mut events = gw.handle.gateway().subscribe();
    let mut host = gw.host().await;
    let s = session(&host, &["interactive", "plan"]).await;
    let rx = invoke(&host, &s, TOOL, json!({"mode": "plan"}));
    let w = next_waiting(&mut events).await;
    assert_eq!((w.tool.as_str(), w.session_id.as_str()), (TOOL, s.as_str()));
    // A session-wide answer acts as once: no grant, the next call is asked again.
    gw.handle
        .gateway()
        .approvals_approve(&approve(&w.id, AnswerScope::Session))
        .unwrap();
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());
    let m = mode_set(&mut host).await;
    assert_eq!(
        (m.session_id.as_str(), m.mode.as_str()),
        (s.as_str(), "plan")
    );
    host.mode_result(SessionModeResult {
        request_id: m.request_id,
        ok: true,
        mode: Some("plan".into()),
        message: None,
    })
    .unwrap();
    let r = result_of(rx).await;
    assert_eq!(
        r.data,
        Some(json!({"mode": "plan", "changed": true})),
        "{r:?}"
    );

    // Asked again; the host says no: its reason is the tool's error.
    let rx = invoke(&host, &s, TOOL, json!({"mode": "interactive"}));
    let w = next_waiting(&mut events).await;
    gw.handle
        .gateway()
        .approvals_approve(&approve(&w.id, AnswerScope::Call))
        .unwrap();
    let m = mode_set(&mut host).await;
    host.mode_result(SessionModeResult {
        request_id: m.request_id,
        ok: false,
        mode: None,
        message: Some("a turn is running".into()),
    })
    .unwrap();
    let e = result_of(rx).await.error.unwrap();
    assert!(
        e.contains("did not switch to 'interactive': a turn is running"),
        "{e}"
    );

    // Denied: the host hears nothing.
    let rx = invoke(&host, &s, TOOL, json!({"mode": "interactive"}));
    let w = next_waiting(&mut events).await;
    gw.handle
        .gateway()
        .approvals_deny(&ApprovalDeny {
            id: w.id.clone(),
            remember: None,
            minutes: None,
        })
        .unwrap();
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("DENIED"));
    assert!(r.error.unwrap().contains("did not approve"));
    let seen = host_events_so_far(&mut host).await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, HostEvent::SessionModeSet(_))),
        "{seen:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_host_that_never_answers_ends_the_call_at_the_named_timeout() {
    let gw = TestGateway::start().await;
    let mut events = gw.handle.gateway().subscribe();
    let mut host = gw.host().await;
    let s = session(&host, &["plan"]).await;
    let rx = invoke(&host, &s, TOOL, json!({"mode": "plan"}));
    let w = next_waiting(&mut events).await;
    gw.handle
        .gateway()
        .approvals_approve(&approve(&w.id, AnswerScope::Call))
        .unwrap();
    mode_set(&mut host).await;
    let asked_at = tokio::time::Instant::now();
    // Not `result_of`: the wait is the gateway's, on this paused clock.
    let r = match rx.await.unwrap() {
        HostEvent::ToolResult(r) => r,
        other => panic!("{other:?}"),
    };
    assert!(
        asked_at.elapsed() >= Duration::from_secs(10),
        "{:?}",
        asked_at.elapsed()
    );
    assert_eq!(code(&r), Some("TIMEOUT"), "{r:?}");
    assert!(r.error.unwrap().contains("did not say within 10 s"));
}

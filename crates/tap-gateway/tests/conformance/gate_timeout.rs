//! Spec section "Gate timeout behavior: fail closed" (Protocol rules): no `gate.result`
//! within 5 s denies, unless the rule says `failOpen`; a provider disconnecting with a
//! pending `gate.check` denies; a pending `transform.request` falls back to `current` on
//! disconnect. Spec decision H6 (disconnect denies even with `failOpen`; reason texts).

use crate::common::*;
use tap_protocol::limits::GATE_TIMEOUT;
use tokio::task::JoinHandle;

fn gate_rule(fail_open: bool) -> Value {
    json!({"hooks": {"onPreToolUse": [
        {"match": {"tool": "shell"}, "action": "gate", "gateId": "check-before-push", "failOpen": fail_open}
    ]}})
}

fn precheck_task(host: &Arc<HostClient>, session: &str) -> JoinHandle<ToolDecision> {
    let host = host.clone();
    let session = session.to_string();
    tokio::spawn(async move {
        host.precheck(
            &session,
            "shell",
            json!({"command": "git push origin main"}),
        )
        .await
        .expect("precheck refused")
    })
}

async fn decision(task: JoinHandle<ToolDecision>) -> ToolDecision {
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("no decision")
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn no_gate_result_within_5s_denies() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(false)).await;
    let asked = tokio::time::Instant::now();
    let task = precheck_task(&host, &s.id);
    p.expect("gate.check").await;
    let d = decision(task).await;
    assert!(
        asked.elapsed() >= GATE_TIMEOUT,
        "decided after {:?}",
        asked.elapsed()
    );
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
    assert_eq!(
        d.reason.as_deref(),
        Some("Gate provider 'ci-watcher' did not respond in time.")
    );
}

#[tokio::test(start_paused = true)]
async fn a_gate_result_just_before_5s_decides() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(false)).await;
    let task = precheck_task(&host, &s.id);
    let check = p.expect("gate.check").await;
    tokio::time::sleep(GATE_TIMEOUT - Duration::from_millis(100)).await;
    p.send(
        json!({"type": "gate.result", "gateId": "check-before-push", "callId": check["callId"],
                  "decision": "allow"}),
    )
    .await;
    let d = decision(task).await;
    assert_eq!(d.decision, PrecheckDecision::Allow, "{d:?}");
}

#[tokio::test(start_paused = true)]
async fn a_fail_open_gate_allows_on_timeout() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(true)).await;
    let task = precheck_task(&host, &s.id);
    p.expect("gate.check").await;
    let d = decision(task).await;
    assert_eq!(d.decision, PrecheckDecision::Allow, "{d:?}");
}

#[tokio::test(start_paused = true)]
async fn a_gate_result_after_the_timeout_is_ignored() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(false)).await;
    let task = precheck_task(&host, &s.id);
    let check = p.expect("gate.check").await;
    assert_eq!(decision(task).await.decision, PrecheckDecision::Deny);
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    fence(&mut p).await;
}

#[tokio::test]
async fn a_provider_disconnecting_with_a_pending_gate_check_denies() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(false)).await;
    let task = precheck_task(&host, &s.id);
    p.expect("gate.check").await;
    drop(p);
    let d = decision(task).await;
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
    assert_eq!(
        d.reason.as_deref(),
        Some("Gate provider 'ci-watcher' disconnected before answering.")
    );
}

#[tokio::test]
async fn a_disconnect_with_a_pending_gate_check_denies_even_when_fail_open() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(&gw, "ci-watcher", &s.id, gate_rule(true)).await;
    let task = precheck_task(&host, &s.id);
    p.expect("gate.check").await;
    drop(p);
    assert_eq!(decision(task).await.decision, PrecheckDecision::Deny);
}

#[tokio::test(start_paused = true)]
async fn a_disconnect_with_a_pending_transform_request_leaves_the_section_unchanged() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "tx",
        &s.id,
        json!({"hooks": {"transforms": {"custom_instructions": {"action": "callback"}}}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let asked = tokio::time::Instant::now();
    let task = tokio::spawn(async move {
        h.apply_prompt(
            &sid,
            "p",
            sections(&[("custom_instructions", "current text")]),
        )
        .await
        .unwrap()
    });
    let req = p.expect("transform.request").await;
    assert_eq!(req["current"], "current text");
    drop(p);
    let applied = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    assert_eq!(applied.sections["custom_instructions"], "current text");
    assert!(
        asked.elapsed() < tap_protocol::limits::TRANSFORM_TIMEOUT,
        "a disconnect does not wait for the 2 s timeout: {:?}",
        asked.elapsed()
    );
}

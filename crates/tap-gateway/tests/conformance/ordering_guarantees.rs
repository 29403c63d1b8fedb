//! Spec section "Ordering guarantees" (Protocol rules): per-connection FIFO, per-call
//! terminal semantics, the revision barrier (after `ack` revision N every dispatch uses
//! revision N state; also stated in "Update acknowledgments") and the rebind barrier.
//! "No total ordering across sessions" permits interleaving and asserts nothing.

use crate::common::*;

#[tokio::test]
async fn messages_on_one_connection_are_processed_in_send_order() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for i in 0..50 {
        let level = if i % 5 == 0 { "surface" } else { "keep" };
        p.send(json!({"type": "push", "stream": "s", "level": level, "event": format!("e{i}")}))
            .await;
    }
    fence(&mut p).await;
    let kept = stored(&host, &s.id, "s@p").await;
    let expected: Vec<String> = (0..50).rev().map(|i| format!("e{i}")).collect();
    assert_eq!(kept, expected);
    for i in (0..50).step_by(5) {
        assert_eq!(next_delivery(&mut host).await.event, format!("e{i}"));
    }
}

#[tokio::test]
async fn the_gateways_messages_on_one_connection_arrive_in_order() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rxs: Vec<_> = (0..20)
        .map(|n| invoke(&host, &s.id, "t", json!({ "n": n })))
        .collect();
    for n in 0..20 {
        let call = p.expect("tool.call").await;
        assert_eq!(call["args"]["n"], n, "{call}");
        answer(&mut p, &call, json!(n)).await;
    }
    for (n, rx) in rxs.into_iter().enumerate() {
        assert_eq!(result_of(rx).await.data, Some(json!(n)));
    }
}

#[tokio::test]
async fn progress_sent_before_a_result_reaches_the_caller_before_the_result() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("slow")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "slow", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    for i in 0..3 {
        p.send(json!({"type": "tool.progress", "id": call["id"], "message": format!("{i}0%")}))
            .await;
    }
    answer(&mut p, &call, json!("done")).await;
    for i in 0..3 {
        let HostEvent::ToolProgress(pr) =
            next_host_event(&mut host, |e| matches!(e, HostEvent::ToolProgress(_))).await
        else {
            unreachable!()
        };
        assert_eq!(
            (pr.call_id.as_str(), pr.message.clone()),
            (call_id.as_str(), format!("{i}0%"))
        );
    }
    assert_eq!(result_of(rx).await.data, Some(json!("done")));
}

#[tokio::test]
async fn only_the_first_terminal_outcome_of_a_call_is_accepted() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    host.cancel(&call_id).unwrap();
    p.expect("tool.cancel").await;
    answer(&mut p, &call, json!("after the gateway's CANCELLED")).await;
    fence(&mut p).await;
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
}

// ---------------------------------------------------------------- revision barrier

#[tokio::test]
async fn after_a_tools_update_ack_a_removed_tool_is_never_dispatched() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("old"), tool("kept")])).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("kept")]}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 1);
    assert_eq!(
        code(&invoke_unanswered(&host, &s.id, "old").await),
        Some("NOT_FOUND")
    );
    fence(&mut p).await; // no tool.call for it
}

#[tokio::test(start_paused = true)]
async fn after_a_tools_update_ack_the_session_host_has_been_sent_the_new_tool_set() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("old")])).await;
    let before = tools_published(&mut host, &s.id, &["old"]).await.revision;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("new")]}))
        .await;
    p.expect("ack").await;
    let status = host.status().await.unwrap();
    let session = status.sessions.iter().find(|x| x.id == s.id).unwrap();
    assert!(
        session.tool_revision > before,
        "acknowledged before the host got revision {}",
        before + 1
    );
    assert_eq!(
        tools_published(&mut host, &s.id, &["new"]).await.revision,
        session.tool_revision
    );
}

#[tokio::test]
async fn after_a_tools_update_ack_an_added_tool_is_dispatched() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("new")]}))
        .await;
    p.expect("ack").await;
    let r = call_and_answer(&host, &mut p, &s.id, "new", json!("fresh")).await;
    assert_eq!(r.data, Some(json!("fresh")));
}

#[tokio::test(start_paused = true)]
async fn after_a_tools_update_ack_the_new_timeout_applies() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([timed_tool("t", 60_000)])).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [timed_tool("t", 1_000)]}))
        .await;
    p.expect("ack").await;
    let started = tokio::time::Instant::now();
    let rx = invoke(&host, &s.id, "t", json!({}));
    p.expect("tool.call").await;
    assert_eq!(p.expect("tool.cancel").await["reason"], "timeout");
    assert_eq!(code(&result_of(rx).await), Some("TIMEOUT"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn after_a_hooks_update_ack_prechecks_use_the_new_rules() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "hooks.update", "requestId": "r",
                  "onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny", "reason": "rev 1"}]}))
        .await;
    p.expect("ack").await;
    let d = precheck(&host, &s.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (PrecheckDecision::Deny, Some("rev 1"))
    );
    p.send(json!({"type": "hooks.update", "requestId": "r2", "onPreToolUse": []}))
        .await;
    p.expect("ack").await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
}

#[tokio::test]
async fn after_a_hooks_update_ack_prompts_use_the_new_transforms() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "hooks.update", "requestId": "r",
                  "transforms": {"x": {"action": "append", "content": "rev 1"}}}))
        .await;
    p.expect("ack").await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "base")]).await.sections["x"],
        "base\nrev 1"
    );
    p.send(json!({"type": "hooks.update", "requestId": "r2", "transforms": {"x": null}}))
        .await;
    p.expect("ack").await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "base")]).await.sections["x"],
        "base"
    );
}

#[tokio::test]
async fn after_a_context_update_ack_prompts_use_the_new_context() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({"context": "rev 0"})).await;
    p.send(json!({"type": "context.update", "requestId": "r", "context": "rev 1"}))
        .await;
    p.expect("ack").await;
    assert_eq!(apply(&host, &s.id, &[]).await.context, ["rev 1"]);
}

#[tokio::test]
async fn after_a_filter_set_ack_pushes_use_the_new_filter() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "r", "stream": "s",
                  "rules": [{"match": "noise", "outcome": "drop"}]}),
    )
    .await;
    p.expect("ack").await;
    p.send(json!({"type": "push", "stream": "s", "level": "keep", "event": "noise"}))
        .await;
    fence(&mut p).await;
    assert!(stored(&host, &s.id, "s@p").await.is_empty());
}

// ---------------------------------------------------------------- rebind barrier

#[tokio::test]
async fn a_rebind_removes_the_old_binding_before_the_new_hello_ack() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s1.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(hello("p", &s2.id, json!({"tools": [tool("t")]})))
        .await;
    // The old session's call is cancelled before the new binding is acknowledged.
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(
        (cancel["id"].clone(), cancel["reason"].clone()),
        (call["id"].clone(), json!("rebind"))
    );
    assert_eq!(cancel["sessionId"], s1.id.as_str());
    expect_bound(&mut p, &s2.id).await;
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
    // Nothing of the old binding is dispatched any more.
    assert_eq!(
        code(&invoke_unanswered(&host, &s1.id, "t").await),
        Some("NOT_FOUND")
    );
    fence(&mut p).await;
    let r = call_and_answer(&host, &mut p, &s2.id, "t", json!("new")).await;
    assert_eq!(r.data, Some(json!("new")));
}

#[tokio::test]
async fn a_rebind_cancels_pending_gate_checks_of_the_old_binding() {
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
    let task = tokio::spawn(async move { h.precheck(&sid, "shell", json!({})).await.unwrap() });
    let check = p.expect("gate.check").await;
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
    // The old binding's gate is gone: its answer no longer counts, and fail closed.
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    let d = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
}

#[tokio::test]
async fn a_rebind_cancels_pending_transform_requests_of_the_old_binding() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
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
    let task = tokio::spawn(async move {
        h.apply_prompt(&sid, "p", sections(&[("x", "x0")]))
            .await
            .unwrap()
    });
    let req = p.expect("transform.request").await;
    p.send(hello("p", &s2.id, json!({}))).await;
    expect_bound(&mut p, &s2.id).await;
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "stale"}))
        .await;
    let a = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    assert_eq!(
        a.sections["x"], "x0",
        "the old binding's answer does not count"
    );
}

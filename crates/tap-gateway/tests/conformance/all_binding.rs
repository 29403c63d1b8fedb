//! Spec section `"all" binding and session churn` (Protocol rules), with the multi-session
//! table's `"all"` cell and `session.ready`. Only internal providers may bind to "all"
//! (capability matrix; spec decisions 2 and A1): they use the in-process transport. Spec
//! decisions A2–A5: all sessions or none at `hello`; `session.ready` answered by
//! `started`; which session a message means; per-session shutdown.

use crate::common::*;

async fn with_sessions(gw: &TestGateway, n: usize) -> (HostClient, Vec<String>) {
    let host = gw.host().await;
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(second_session(&host, &format!("s{i}")).await.id);
    }
    (host, ids)
}

#[tokio::test]
async fn a_project_provider_binding_to_all_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("p", "all", json!({"tools": [tool("t")]})),
        "UNAUTHORIZED",
    )
    .await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn an_external_provider_binding_to_all_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _, _) = paired(&gw).await;
    hello_refused(&mut p, hello("p", "all", json!({})), "UNAUTHORIZED").await;
}

#[tokio::test]
async fn tools_and_context_are_registered_in_every_active_session_at_hello() {
    let gw = TestGateway::start().await;
    let (host, ids) = with_sessions(&gw, 2).await;
    let (mut p, _) = Internal::connect(&gw).await;
    let (ack, started) = p
        .hello(
            "everywhere",
            "all",
            json!({"tools": [tool("t")], "context": "ctx"}),
        )
        .await;
    assert_eq!(ack["sessionId"], "all", "{ack}");
    assert_eq!(started, ids);
    for s in &ids {
        assert_eq!(session_tool_names(&host, s).await, ["t"]);
        assert_eq!(apply(&host, s, &[]).await.context, ["ctx"]);
        let rx = invoke(&host, s, "t", json!({}));
        let call = p.expect("tool.call").await;
        assert_eq!(call["sessionId"], s.as_str(), "{call}");
        p.send(json!({"type": "tool.result", "id": call["id"], "data": s}));
        assert_eq!(result_of(rx).await.data, Some(json!(s)));
    }
}

#[tokio::test]
async fn a_tool_conflict_in_any_session_fails_the_whole_hello() {
    let gw = TestGateway::start().await;
    let (host, ids) = with_sessions(&gw, 2).await;
    let _holder = bound(&gw, "holder", &ids[1], json!([tool("t")])).await;
    let (mut p, _) = Internal::connect(&gw).await;
    p.send(hello(
        "everywhere",
        "all",
        json!({"tools": [tool("t"), tool("u")]}),
    ));
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert!(
        e["message"].as_str().unwrap().contains(&ids[1]),
        "names the session: {e}"
    );
    assert!(
        session_tool_names(&host, &ids[0]).await.is_empty(),
        "registered nowhere"
    );
}

#[tokio::test]
async fn a_new_session_gets_sessions_updated_and_nothing_registered_before_session_ready() {
    let gw = TestGateway::start().await;
    let (host, _ids) = with_sessions(&gw, 1).await;
    let mut p = internal(
        &gw,
        "everywhere",
        "all",
        json!({"tools": [tool("t")], "context": "ctx",
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    let new = second_session(&host, "new").await;
    let updated = p.expect("sessions.updated").await;
    assert!(session_ids(&updated).contains(&new.id), "{updated}");
    assert!(session_tool_names(&host, &new.id).await.is_empty());
    assert_eq!(
        code(&invoke_unanswered(&host, &new.id, "t").await),
        Some("NOT_FOUND")
    );
    assert!(apply(&host, &new.id, &[]).await.context.is_empty());
    assert_eq!(
        precheck(&host, &new.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    p.fence().await;
}

#[tokio::test]
async fn session_ready_registers_tools_hooks_and_context_and_is_answered_with_started() {
    let gw = TestGateway::start().await;
    let (host, _ids) = with_sessions(&gw, 1).await;
    let mut p = internal(
        &gw,
        "everywhere",
        "all",
        json!({"tools": [tool("t")], "context": "ctx",
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    let new = second_session(&host, "new").await;
    p.expect("sessions.updated").await;
    p.send(json!({"type": "session.ready", "sessionId": new.id}));
    let started = p.expect("session.lifecycle").await;
    assert_eq!(
        (started["state"].as_str(), started["sessionId"].as_str()),
        (Some("started"), Some(new.id.as_str()))
    );
    assert_eq!(session_tool_names(&host, &new.id).await, ["t"]);
    assert_eq!(apply(&host, &new.id, &[]).await.context, ["ctx"]);
    assert_eq!(
        precheck(&host, &new.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
    // A repeated session.ready is ignored.
    p.send(json!({"type": "session.ready", "sessionId": new.id}));
    p.fence().await;
}

#[tokio::test]
async fn fail_closed_gate_rules_are_deferred_until_session_ready() {
    let gw = TestGateway::start().await;
    let (host, _ids) = with_sessions(&gw, 1).await;
    let host = Arc::new(host);
    let mut p = internal(
        &gw,
        "gatekeeper",
        "all",
        json!({"hooks": {"onPreToolUse": [
        {"match": {"tool": "shell"}, "action": "gate", "gateId": "g"}]}}),
    )
    .await;
    let new = second_session(&host, "new").await;
    p.expect("sessions.updated").await;
    assert_eq!(
        precheck(&host, &new.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    p.fence().await; // not asked
    p.send(json!({"type": "session.ready", "sessionId": new.id}));
    p.expect("session.lifecycle").await;
    let h = host.clone();
    let sid = new.id.clone();
    let task = tokio::spawn(async move { h.precheck(&sid, "shell", json!({})).await.unwrap() });
    let check = p.expect("gate.check").await;
    assert_eq!(check["sessionId"], new.id.as_str());
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "deny", "reason": "no"}));
    assert_eq!(task.await.unwrap().decision, PrecheckDecision::Deny);
}

#[tokio::test]
async fn session_ready_for_an_unknown_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, _ids) = with_sessions(&gw, 1).await;
    let mut p = internal(&gw, "everywhere", "all", json!({})).await;
    p.send(json!({"type": "session.ready", "sessionId": "no-such-session"}));
    assert_eq!(
        p.expect_error("INVALID_SESSION").await["replyTo"],
        "session.ready"
    );
}

#[tokio::test]
async fn an_ending_session_sends_shutdown_pending_for_it_and_the_provider_stays_for_the_others() {
    let gw = far_deadline_gateway().await;
    let (host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "everywhere", "all", json!({"tools": [tool("t")]})).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &ids[0]);
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(
        (pending["state"].as_str(), pending["sessionId"].as_str()),
        (Some("shutdown.pending"), Some(ids[0].as_str()))
    );
    assert_eq!(pending["deadline"], FAR.as_millis() as u64);
    p.expect("sessions.updated").await;
    host.status().await.unwrap();
    assert!(!end.is_finished(), "waits for shutdown.ready");
    p.send(json!({"type": "shutdown.ready", "sessionId": ids[0]}));
    ended(end).await;
    let rx = invoke(&host, &ids[1], "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "still here"}));
    assert_eq!(result_of(rx).await.data, Some(json!("still here")));
    let status = host.status().await.unwrap();
    assert_eq!(status.providers[0].session.as_deref(), Some("all"));
}

#[tokio::test]
async fn a_session_ending_before_session_ready_sends_no_shutdown_pending() {
    let gw = far_deadline_gateway().await;
    let (host, _ids) = with_sessions(&gw, 1).await;
    let mut p = internal(&gw, "everywhere", "all", json!({})).await;
    let new = second_session(&host, "new").await;
    p.expect("sessions.updated").await;
    let e = tokio::time::timeout(PATIENCE, host.end_session(&new.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(e.session_id, new.id, "nobody to wait for");
    let updated = p.expect("sessions.updated").await;
    assert!(!session_ids(&updated).contains(&new.id));
    p.fence().await;
}

#[tokio::test]
async fn a_push_needs_a_session_id_or_broadcast() {
    let gw = TestGateway::start().await;
    let (mut host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "pusher", "all", json!({})).await;
    p.send(json!({"type": "push", "level": "surface", "event": "where?"}));
    assert_eq!(p.expect_error("INVALID_SESSION").await["replyTo"], "push");
    p.send(json!({"type": "push", "sessionId": ids[1], "level": "surface", "event": "here"}));
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.session_id.as_str(), d.event.as_str()),
        (ids[1].as_str(), "here")
    );
}

#[tokio::test]
async fn a_broadcast_push_reaches_every_registered_session() {
    let gw = TestGateway::start().await;
    let (mut host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "pusher", "all", json!({})).await;
    p.send(json!({"type": "push", "broadcast": true, "level": "surface", "event": "to all"}));
    p.fence().await;
    let mut reached = vec![
        next_delivery(&mut host).await.session_id,
        next_delivery(&mut host).await.session_id,
    ];
    reached.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(reached, want);
}

#[tokio::test]
async fn a_session_id_the_provider_has_not_readied_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (host, _ids) = with_sessions(&gw, 1).await;
    let mut p = internal(&gw, "pusher", "all", json!({})).await;
    let new = second_session(&host, "new").await;
    p.expect("sessions.updated").await;
    p.send(json!({"type": "push", "sessionId": new.id, "level": "keep", "event": "early"}));
    p.expect_error("INVALID_SESSION").await;
}

#[tokio::test]
async fn a_stream_query_needs_a_session_id() {
    let gw = TestGateway::start().await;
    let (_host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "reader", "all", json!({})).await;
    p.send(json!({"type": "stream.query", "queryId": "q"}));
    assert_eq!(
        p.expect_error("INVALID_SESSION").await["replyTo"],
        "stream.query"
    );
    p.send(json!({"type": "stream.query", "queryId": "q", "sessionId": ids[0]}));
    p.expect("stream.history").await;
}

#[tokio::test]
async fn an_update_without_session_id_is_acked_once_per_session() {
    let gw = TestGateway::start().await;
    let (host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "everywhere", "all", json!({})).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("t")]}));
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let ack = p.expect("ack").await;
        assert_eq!(
            (ack["requestId"].as_str(), ack["revision"].as_u64()),
            (Some("r"), Some(1)),
            "{ack}"
        );
        sessions.push(ack["sessionId"].as_str().unwrap().to_string());
    }
    sessions.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(sessions, want);
    for s in &ids {
        assert_eq!(session_tool_names(&host, s).await, ["t"]);
    }
}

#[tokio::test]
async fn an_update_with_session_id_changes_that_session_only() {
    let gw = TestGateway::start().await;
    let (host, ids) = with_sessions(&gw, 2).await;
    let mut p = internal(&gw, "everywhere", "all", json!({"tools": [tool("t")]})).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "sessionId": ids[1], "tools": [tool("only_two")]}));
    assert_eq!(p.expect("ack").await["sessionId"], ids[1].as_str());
    assert_eq!(session_tool_names(&host, &ids[0]).await, ["t"]);
    assert_eq!(session_tool_names(&host, &ids[1]).await, ["only_two"]);
}

#[tokio::test]
async fn an_update_before_any_session_is_acked_for_all() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let mut p = internal(&gw, "early", "all", json!({})).await;
    p.send(json!({"type": "context.update", "requestId": "c", "context": "later"}));
    let ack = p.expect("ack").await;
    assert_eq!(
        (ack["sessionId"].as_str(), ack["revision"].as_u64()),
        (Some("all"), Some(1))
    );
    let s = second_session(&host, "s").await;
    p.expect("sessions.updated").await;
    p.send(json!({"type": "session.ready", "sessionId": s.id}));
    p.expect("session.lifecycle").await;
    assert_eq!(apply(&host, &s.id, &[]).await.context, ["later"]);
}

//! Spec section "Messages: Gateway → Provider" with its summary table (13 types): the
//! fields of each message, the `session.event` payload table (passed through unchanged,
//! decision S6), the three `session.lifecycle` states, and "Rebinding" steps 1–5.
//! `error` and `ack` fields are in error_responses.rs and update_acknowledgments.rs.

use crate::common::*;

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[tokio::test]
async fn auth_pairing_carries_only_a_prompt() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let m = p.expect("auth.pairing").await;
    assert_eq!(keys(&m), ["prompt", "type"]);
}

#[tokio::test]
async fn sessions_lists_active_sessions_and_a_token_only_after_pairing() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, sessions) = authed(&gw).await;
    assert_eq!(keys(&sessions), ["active", "type"]);
    assert_eq!(sessions["active"][0]["id"], s.id.as_str());
    assert_eq!(sessions["active"][0]["label"], "test");
    assert_eq!(sessions["active"][0]["cwd"], "/tmp");
    let (_q, sessions, _) = paired(&gw).await;
    assert!(
        sessions["token"]
            .as_str()
            .is_some_and(|t| t.starts_with("ext-")),
        "{sessions}"
    );
}

#[tokio::test]
async fn sessions_updated_has_the_shape_of_sessions() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, _) = authed(&gw).await;
    let s = second_session(&host, "x").await;
    let u = p.expect("sessions.updated").await;
    assert_eq!(keys(&u), ["active", "type"]);
    assert_eq!(keys(&u["active"][0]), ["cwd", "foreground", "id", "label"]);
    assert_eq!(u["active"][0]["id"], s.id.as_str());
}

#[tokio::test]
async fn hello_ack_carries_version_provider_id_session_reconnect_token_and_persist_dir() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "my-provider", &s.id, json!({})).await;
    assert_eq!(ack["protocolVersion"], 2);
    assert!(ack["providerId"].as_str().is_some_and(|x| !x.is_empty()));
    assert_eq!(ack["sessionId"], s.id.as_str());
    assert!(ack["reconnectToken"].is_string());
    let dir = ack["persistDir"]
        .as_str()
        .expect("persistDir for a local (project) provider");
    assert!(std::path::Path::new(dir).is_dir(), "{dir}");
}

#[tokio::test]
async fn tool_call_carries_id_session_id_tool_and_args_as_given() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("my_tool")])).await;
    let args = json!({"query": "find active users", "nested": {"n": [1, 2.5, null]}});
    let rx = invoke(&host, &s.id, "my_tool", args.clone());
    let call = p.expect("tool.call").await;
    // The spec's fields, and ours: `traceparent` (providers ignore unknown fields).
    assert_eq!(
        keys(&call),
        ["args", "id", "sessionId", "tool", "traceparent", "type"]
    );
    let tp = call["traceparent"].as_str().unwrap();
    let parts: Vec<&str> = tp.split('-').collect();
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [2, 32, 16, 2],
        "{tp}"
    );
    assert_eq!(
        (&call["tool"], &call["args"], &call["sessionId"]),
        (&json!("my_tool"), &args, &json!(s.id))
    );
    answer(&mut p, &call, json!(null)).await;
    result_of(rx).await;
}

#[tokio::test(start_paused = true)]
async fn tool_cancel_is_sent_when_a_call_exceeds_its_timeout() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([timed_tool("slow", 5_000)])).await;
    let rx = invoke(&host, &s.id, "slow", json!({}));
    let call = p.expect("tool.call").await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(
        cancel,
        json!({"type": "tool.cancel", "id": call["id"], "sessionId": s.id, "reason": "timeout"})
    );
    assert_eq!(code(&result_of(rx).await), Some("TIMEOUT"));
}

#[tokio::test]
async fn tool_cancel_is_sent_when_the_session_interrupts_a_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    host.cancel(&call_id).unwrap();
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(
        cancel,
        json!({"type": "tool.cancel", "id": call["id"], "sessionId": s.id, "reason": "cancelled"})
    );
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
}

#[tokio::test]
async fn gate_check_carries_gate_id_call_id_session_id_tool_and_args() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"hooks": {"onPreToolUse": [
        {"match": {"tool": "shell"}, "action": "gate", "gateId": "check-before-push"}]}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move {
        h.precheck(&sid, "shell", json!({"command": "git push origin main"}))
            .await
    });
    let check = p.expect("gate.check").await;
    assert_eq!(
        keys(&check),
        ["args", "callId", "gateId", "sessionId", "tool", "type"]
    );
    assert_eq!(check["gateId"], "check-before-push");
    assert_eq!(check["args"], json!({"command": "git push origin main"}));
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn transform_request_carries_call_id_session_id_section_and_current() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"hooks": {"transforms": {"custom_instructions": {"action": "callback"}}}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move {
        h.apply_prompt(
            &sid,
            "p",
            sections(&[("custom_instructions", "...existing section content...")]),
        )
        .await
    });
    let req = p.expect("transform.request").await;
    assert_eq!(
        keys(&req),
        ["callId", "current", "section", "sessionId", "type"]
    );
    assert_eq!(req["section"], "custom_instructions");
    assert_eq!(req["current"], "...existing section content...");
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "new"}))
        .await;
    task.await.unwrap().unwrap();
}

async fn event_passes_through(event: &str, data: Value) {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({ "subscribe": [event] })).await;
    host.session_event(&s.id, event, data.clone()).unwrap();
    let e = p.expect("session.event").await;
    assert_eq!(
        e,
        json!({"type": "session.event", "sessionId": s.id, "event": event, "data": data})
    );
}

#[tokio::test]
async fn session_event_user_message_payload() {
    event_passes_through("user.message", json!({"content": "fix the auth bug"})).await;
}

#[tokio::test]
async fn session_event_assistant_message_payload() {
    event_passes_through(
        "assistant.message",
        json!({"content": "On it.", "toolRequests": [{"name": "shell", "args": {"command": "ls"}}]}),
    )
    .await;
}

#[tokio::test]
async fn session_event_tool_execution_complete_payload() {
    event_passes_through(
        "tool.execution_complete",
        json!({"tool": "greet", "provider": "p", "args": {"name": "Ada"},
               "result": {"type": "success", "output": "Hello"}, "durationMs": 12}),
    )
    .await;
}

#[tokio::test]
async fn session_event_assistant_intent_payload() {
    event_passes_through("assistant.intent", json!({"intent": "Fixing the bug"})).await;
}

#[tokio::test]
async fn session_events_are_sent_only_when_subscribed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({"subscribe": ["assistant.intent"]})).await;
    host.session_event(&s.id, "user.message", json!({"content": "x"}))
        .unwrap();
    host.session_event(&s.id, "assistant.intent", json!({"intent": "y"}))
        .unwrap();
    assert_eq!(p.expect("session.event").await["event"], "assistant.intent");
    let mut quiet = bound(&gw, "quiet", &s.id, json!([])).await;
    host.session_event(&s.id, "user.message", json!({"content": "x"}))
        .unwrap();
    host.status().await.unwrap();
    fence(&mut quiet).await;
}

#[tokio::test]
async fn session_lifecycle_started_idle_and_shutdown_pending_need_no_opt_in() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(hello("p", &s.id, json!({}))).await;
    p.expect("hello.ack").await;
    assert_eq!(
        p.expect("session.lifecycle").await,
        json!({"type": "session.lifecycle", "sessionId": s.id, "state": "started"})
    );
    host.set_state(&s.id, BusyState::Busy).unwrap();
    host.set_state(&s.id, BusyState::Idle).unwrap();
    assert_eq!(
        p.expect("session.lifecycle").await,
        json!({"type": "session.lifecycle", "sessionId": s.id, "state": "idle"})
    );
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    assert_eq!(
        p.expect("session.lifecycle").await,
        json!({"type": "session.lifecycle", "sessionId": s.id, "state": "shutdown.pending",
               "deadline": FAR.as_millis() as u64})
    );
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
}

#[tokio::test]
async fn stream_history_answers_with_keys_as_queried_newest_first() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "ci-watcher", &s.id, json!([])).await;
    for e in ["running", "failure on test/auth.spec.ts"] {
        p.send(json!({"type": "push", "stream": "ci-watch", "level": "keep", "event": e}))
            .await;
    }
    p.send(json!({"type": "stream.query", "queryId": "q-1", "streams": ["ci-watch@ci-watcher"], "last": 10}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], "q-1");
    let entries = h["streams"]["ci-watch@ci-watcher"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["event"], "failure on test/auth.spec.ts");
    assert_eq!(entries[1]["event"], "running");
    assert!(entries[0]["ts"].as_str().unwrap().ends_with('Z'), "{h}");
}

// ---------------------------------------------------------------- Rebinding

#[tokio::test]
async fn rebinding_removes_the_old_sessions_tools_hooks_and_context() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s1.id,
        json!({"tools": [tool("t")], "context": "ctx",
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    p.send(hello("p", &s2.id, json!({}))).await;
    expect_bound(&mut p, &s2.id).await;
    assert!(session_tool_names(&host, &s1.id).await.is_empty());
    assert_eq!(
        precheck(&host, &s1.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    assert!(apply(&host, &s1.id, &[]).await.context.is_empty());
}

#[tokio::test]
async fn rebinding_cancels_in_flight_tool_calls() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s1.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(hello("p", &s2.id, json!({}))).await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(
        (&cancel["id"], &cancel["reason"]),
        (&call["id"], &json!("rebind"))
    );
    expect_bound(&mut p, &s2.id).await;
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
}

#[tokio::test]
async fn rebinding_validates_and_registers_the_new_hello() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([tool("old")])).await;
    p.send(hello("p", &s2.id, json!({"tools": [tool("new")]})))
        .await;
    expect_bound(&mut p, &s2.id).await;
    assert_eq!(session_tool_names(&host, &s2.id).await, ["new"]);
}

#[tokio::test]
async fn rebinding_sends_a_new_hello_ack_with_a_new_reconnect_token() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, ack1) = bind(&gw, "p", &s.id, json!({})).await;
    p.send(hello("p", &s.id, json!({}))).await;
    let ack2 = expect_bound(&mut p, &s.id).await;
    assert_ne!(ack1["reconnectToken"], ack2["reconnectToken"]);
    assert_eq!(ack1["providerId"], ack2["providerId"]);
}

#[tokio::test]
async fn a_failed_rebind_leaves_the_provider_connected_and_unbound() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    hello_refused(
        &mut p,
        hello("p", &s.id, json!({"tools": [tool("bad name")]})),
        "INVALID_JSON",
    )
    .await;
    let status = host.status().await.unwrap();
    assert_eq!(
        (
            status.providers[0].state.as_str(),
            status.providers[0].session.clone()
        ),
        ("unbound", None)
    );
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    fence(&mut p).await;
}

#[tokio::test]
async fn idle_is_sent_only_on_a_busy_to_idle_transition() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    host.set_state(&s.id, BusyState::Idle).unwrap();
    host.set_state(&s.id, BusyState::Busy).unwrap();
    host.set_state(&s.id, BusyState::Busy).unwrap();
    host.status().await.unwrap();
    fence(&mut p).await;
    host.set_state(&s.id, BusyState::Idle).unwrap();
    host.set_state(&s.id, BusyState::Idle).unwrap();
    assert_eq!(p.expect("session.lifecycle").await["state"], "idle");
    host.status().await.unwrap();
    fence(&mut p).await;
}

#[tokio::test]
async fn persist_dir_is_given_to_local_providers_only_and_stays_inside_the_providers_directory() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "../../evil", &s.id, json!({})).await;
    let dir = std::path::PathBuf::from(ack["persistDir"].as_str().unwrap());
    assert_eq!(
        dir.parent().unwrap(),
        gw.dir.path().join("home").join("providers")
    );
    let (mut ext, _, _) = paired(&gw).await;
    ext.send(hello("browser", &s.id, json!({}))).await;
    let ack = expect_bound(&mut ext, &s.id).await;
    assert!(
        ack.get("persistDir").is_none(),
        "a paired provider has no local files: {ack}"
    );
}

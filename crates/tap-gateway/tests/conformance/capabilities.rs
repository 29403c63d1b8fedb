//! Spec section "Provider capabilities" (Protocol rules): the capability matrix, one test
//! per row × trust level. Project = the gateway token (spec decision 1); external = a
//! paired provider (decisions 6, 6b, H8, S6, T4); internal = the in-process transport
//! (decision A1). Per-provider (spawned) project tokens are in project_providers.rs.

use crate::common::*;

fn gate_rules() -> Value {
    json!({"onPreToolUse": [{"match": {"tool": "shell"}, "action": "gate", "gateId": "g"}]})
}

/// A project provider bound with `extra`, on a gateway with one foreground session.
async fn project(gw: &TestGateway, s: &str, extra: Value) -> Provider {
    bind(gw, "proj", s, extra).await.0
}

async fn external_refused(gw: &TestGateway, s: &str, extra: Value) -> Value {
    let (mut p, _, _) = paired(gw).await;
    hello_refused(&mut p, hello("ext", s, extra), "UNAUTHORIZED").await
}

// ---------------------------------------------------------------- Register tools

async fn register_tools(external: bool) {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let extra = json!({"tools": [tool("t")]});
    let mut p = if external {
        paired_bound(&gw, "ext", &s.id, extra).await
    } else {
        project(&gw, &s.id, extra).await
    };
    let r = call_and_answer(&host, &mut p, &s.id, "t", json!("ok")).await;
    assert_eq!(r.data, Some(json!("ok")));
}

#[tokio::test]
async fn register_tools_project_allowed() {
    register_tools(false).await;
}

#[tokio::test]
async fn register_tools_external_allowed() {
    register_tools(true).await;
}

// ---------------------------------------------------------------- Push events

async fn push_events(external: bool) {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = if external {
        paired_bound(&gw, "src", &s.id, json!({})).await
    } else {
        bind(&gw, "src", &s.id, json!({})).await.0
    };
    for level in ["keep", "surface", "inject"] {
        p.send(json!({"type": "push", "stream": "s", "level": level, "event": level}))
            .await;
    }
    fence(&mut p).await;
    let d = next_delivery(&mut host).await;
    assert_eq!((d.event.as_str(), d.level), ("surface", PushLevel::Surface));
    let d = next_delivery(&mut host).await;
    assert_eq!((d.event.as_str(), d.level), ("inject", PushLevel::Inject));
    assert_eq!(
        stored(&host, &s.id, "s@src").await,
        ["inject", "surface", "keep"]
    );
}

#[tokio::test]
async fn push_events_project_allowed() {
    push_events(false).await;
}

#[tokio::test]
async fn push_events_external_allowed() {
    push_events(true).await;
}

// ---------------------------------------------------------------- Register hook gate rules

#[tokio::test]
async fn register_hook_gate_rules_project_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = project(&gw, &s.id, json!({ "hooks": gate_rules() })).await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move { h.precheck(&sid, "shell", json!({})).await.unwrap() });
    let check = p.expect("gate.check").await;
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "deny", "reason": "no"}))
        .await;
    let d = task.await.unwrap();
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (PrecheckDecision::Deny, Some("no"))
    );
}

#[tokio::test]
async fn register_hook_gate_rules_external_unauthorized() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    external_refused(&gw, &s.id, json!({ "hooks": gate_rules() })).await;
    // Nor later, through hooks.update; and no rule of any kind (decision H8).
    let mut p = paired_bound(&gw, "ext", &s.id, json!({})).await;
    for rules in [
        gate_rules()["onPreToolUse"].clone(),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    ] {
        p.send(json!({"type": "hooks.update", "requestId": "h", "onPreToolUse": rules}))
            .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["requestId"], "h", "{e}");
    }
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
}

// ---------------------------------------------------------------- Register transform callbacks

#[tokio::test]
async fn register_transform_callbacks_project_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = project(
        &gw,
        &s.id,
        json!({"hooks": {"transforms": {"x": {"action": "callback"}}}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move {
        h.apply_prompt(&sid, "p", sections(&[("x", "old")]))
            .await
            .unwrap()
    });
    let req = p.expect("transform.request").await;
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "new"}))
        .await;
    assert_eq!(task.await.unwrap().sections["x"], "new");
}

#[tokio::test]
async fn register_transform_callbacks_external_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    external_refused(
        &gw,
        &s.id,
        json!({"hooks": {"transforms": {"x": {"action": "callback"}}}}),
    )
    .await;
    let mut p = paired_bound(&gw, "ext", &s.id, json!({})).await;
    p.send(json!({"type": "hooks.update", "requestId": "h",
                  "transforms": {"x": {"action": "callback"}}}))
        .await;
    assert_eq!(p.expect_error("UNAUTHORIZED").await["requestId"], "h");
}

// ---------------------------------------------------------------- Register static transforms (append)

async fn static_append(external: bool) {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let extra = json!({"hooks": {"transforms": {"custom_instructions": {"action": "append", "content": "Use pnpm."}}}});
    let _p = if external {
        paired_bound(&gw, "ext", &s.id, extra).await
    } else {
        project(&gw, &s.id, extra).await
    };
    let a = apply(&host, &s.id, &[("custom_instructions", "Base.")]).await;
    assert_eq!(a.sections["custom_instructions"], "Base.\nUse pnpm.");
}

#[tokio::test]
async fn register_static_transforms_project_allowed() {
    static_append(false).await;
}

#[tokio::test]
async fn register_static_transforms_external_allowed() {
    static_append(true).await;
}

#[tokio::test]
async fn static_transforms_other_than_append_external_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    for action in ["prepend", "replace"] {
        external_refused(
            &gw,
            &s.id,
            json!({"hooks": {"transforms": {"x": {"action": action, "content": "c"}}}}),
        )
        .await;
    }
}

// ---------------------------------------------------------------- Query own streams

async fn own_streams(external: bool) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = if external {
        paired_bound(&gw, "me", &s.id, json!({})).await
    } else {
        bind(&gw, "me", &s.id, json!({})).await.0
    };
    p.send(json!({"type": "push", "stream": "log", "level": "keep", "event": "e1"}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["log"]}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["streams"]["log"][0]["event"], "e1", "{h}");
}

#[tokio::test]
async fn query_own_streams_project_allowed() {
    own_streams(false).await;
}

#[tokio::test]
async fn query_own_streams_external_allowed() {
    own_streams(true).await;
}

// ---------------------------------------------------------------- Query cross-provider streams

async fn cross_streams(external: bool) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut other = bound(&gw, "other", &s.id, json!([])).await;
    other
        .send(json!({"type": "push", "stream": "secret", "level": "keep", "event": "x"}))
        .await;
    fence(&mut other).await;
    let mut p = if external {
        paired_bound(&gw, "me", &s.id, json!({})).await
    } else {
        bind(&gw, "me", &s.id, json!({})).await.0
    };
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["secret@other"]}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");
}

#[tokio::test]
async fn query_cross_provider_streams_project_unauthorized() {
    cross_streams(false).await;
}

#[tokio::test]
async fn query_cross_provider_streams_external_unauthorized() {
    cross_streams(true).await;
}

// ---------------------------------------------------------------- Subscribe to session events

#[tokio::test]
async fn subscribe_to_session_events_project_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = project(
        &gw,
        &s.id,
        json!({"subscribe": ["user.message", "assistant.message",
        "tool.execution_complete", "assistant.intent"]}),
    )
    .await;
    for (event, data) in [
        ("user.message", json!({"content": "fix it"})),
        ("assistant.message", json!({"content": "ok"})),
        (
            "tool.execution_complete",
            json!({"tool": "t", "args": {}, "result": {"type": "success"}, "durationMs": 3}),
        ),
        ("assistant.intent", json!({"intent": "fixing"})),
    ] {
        host.session_event(&s.id, event, data.clone()).unwrap();
        let e = p.expect("session.event").await;
        assert_eq!((&e["event"], &e["data"]), (&json!(event), &data), "{e}");
    }
}

#[tokio::test]
async fn subscribe_to_session_events_external_tools_only() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    external_refused(&gw, &s.id, json!({"subscribe": ["user.message"]})).await;
    let mut p = paired_bound(
        &gw,
        "ext",
        &s.id,
        json!({"subscribe": ["tool.execution_complete"]}),
    )
    .await;
    host.session_event(&s.id, "tool.execution_complete", json!({"tool": "t"}))
        .unwrap();
    assert_eq!(
        p.expect("session.event").await["event"],
        "tool.execution_complete"
    );
}

// ---------------------------------------------------------------- Bind to any session / "all"

#[tokio::test]
async fn bind_to_any_session_project_gateway_token_may_pick_one_session() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    bind(&gw, "a", &s1.id, json!({})).await;
    bind(&gw, "b", &s2.id, json!({})).await;
}

#[tokio::test]
async fn bind_to_all_project_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(&mut p, hello("p", "all", json!({})), "UNAUTHORIZED").await;
}

#[tokio::test]
async fn bind_to_another_session_external_invalid_session() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "background").await;
    let (mut p, sessions, _) = paired(&gw).await;
    // cwd only for the session it may bind to (decision 32).
    let listed: Vec<&Value> = sessions["active"].as_array().unwrap().iter().collect();
    let cwd_of = |id: &str| {
        listed
            .iter()
            .find(|x| x["id"] == id)
            .map(|x| x.get("cwd").cloned())
    };
    assert_eq!(cwd_of(&s.id), Some(Some(json!("/tmp"))));
    assert_eq!(cwd_of(&other.id), Some(None));
    hello_refused(
        &mut p,
        hello("ext", &other.id, json!({})),
        "INVALID_SESSION",
    )
    .await;
    p.send(hello("ext", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn bind_external_after_its_session_ended_follows_the_foreground_session() {
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = FAR).await;
    let (host, s) = gw.host_with_session().await;
    let mut p = paired_bound(&gw, "ext", &s.id, json!({})).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
    let next = host
        .register_session(SessionRegister {
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    p.expect("sessions.updated").await;
    p.send(hello("ext", &next.id, json!({}))).await;
    expect_bound(&mut p, &next.id).await;
}

#[tokio::test]
async fn bind_to_all_external_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _, _) = paired(&gw).await;
    hello_refused(&mut p, hello("ext", "all", json!({})), "UNAUTHORIZED").await;
}

// ---------------------------------------------------------------- Set context / startup_context

#[tokio::test]
async fn set_context_and_startup_context_project_allowed() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = project(
        &gw,
        &s.id,
        json!({"context": "CI passing.", "startup_context": "Loaded."}),
    )
    .await;
    let HostEvent::SessionContext(c) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        (c.provider.as_str(), c.startup_context.as_str()),
        ("proj", "Loaded.")
    );
    assert_eq!(apply(&host, &s.id, &[]).await.context, ["CI passing."]);
    p.send(json!({"type": "context.update", "requestId": "c", "context": "CI failing."}))
        .await;
    p.expect("ack").await;
    assert_eq!(apply(&host, &s.id, &[]).await.context, ["CI failing."]);
}

#[tokio::test]
async fn set_context_and_startup_context_external_unauthorized() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    external_refused(&gw, &s.id, json!({"context": "c"})).await;
    external_refused(&gw, &s.id, json!({"startup_context": "c"})).await;
    let mut p = paired_bound(&gw, "ext", &s.id, json!({})).await;
    p.send(json!({"type": "context.update", "requestId": "c", "context": "c"}))
        .await;
    assert_eq!(p.expect_error("UNAUTHORIZED").await["requestId"], "c");
    assert!(apply(&host, &s.id, &[]).await.context.is_empty());
}

// ---------------------------------------------------------------- internal column

#[tokio::test]
async fn register_tools_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = internal(&gw, "int", &s.id, json!({"tools": [tool("t")]})).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}));
    assert_eq!(result_of(rx).await.data, Some(json!("ok")));
}

#[tokio::test]
async fn push_events_internal_allowed() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = internal(&gw, "src", &s.id, json!({})).await;
    for level in ["keep", "surface", "inject"] {
        p.send(json!({"type": "push", "stream": "s", "level": level, "event": level}));
    }
    p.fence().await;
    assert_eq!(next_delivery(&mut host).await.level, PushLevel::Surface);
    assert_eq!(next_delivery(&mut host).await.level, PushLevel::Inject);
    assert_eq!(
        stored(&host, &s.id, "s@src").await,
        ["inject", "surface", "keep"]
    );
}

#[tokio::test]
async fn register_hook_gate_rules_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = internal(&gw, "int", &s.id, json!({ "hooks": gate_rules() })).await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move { h.precheck(&sid, "shell", json!({})).await.unwrap() });
    let check = p.expect("gate.check").await;
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "deny", "reason": "no"}));
    assert_eq!(task.await.unwrap().decision, PrecheckDecision::Deny);
}

#[tokio::test]
async fn register_transform_callbacks_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = internal(
        &gw,
        "int",
        &s.id,
        json!({"hooks": {"transforms": {"x": {"action": "callback"}}}}),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move {
        h.apply_prompt(&sid, "p", sections(&[("x", "old")]))
            .await
            .unwrap()
    });
    let req = p.expect("transform.request").await;
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "new"}));
    assert_eq!(task.await.unwrap().sections["x"], "new");
}

#[tokio::test]
async fn register_static_transforms_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = internal(&gw, "int", &s.id,
        json!({"hooks": {"transforms": {"custom_instructions": {"action": "append", "content": "Use pnpm."}}}})).await;
    assert_eq!(
        apply(&host, &s.id, &[("custom_instructions", "Base.")])
            .await
            .sections["custom_instructions"],
        "Base.\nUse pnpm."
    );
}

#[tokio::test]
async fn query_own_streams_internal_allowed() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = internal(&gw, "me", &s.id, json!({})).await;
    p.send(json!({"type": "push", "stream": "log", "level": "keep", "event": "e1"}));
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["log"]}));
    assert_eq!(
        p.expect("stream.history").await["streams"]["log"][0]["event"],
        "e1"
    );
}

#[tokio::test]
async fn query_cross_provider_streams_internal_allowed() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut other = bound(&gw, "other", &s.id, json!([])).await;
    other
        .send(json!({"type": "push", "stream": "secret", "level": "keep", "event": "x"}))
        .await;
    fence(&mut other).await;
    let mut p = internal(&gw, "me", &s.id, json!({})).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["secret@other"]}));
    let h = p.expect("stream.history").await;
    assert_eq!(h["streams"]["secret@other"][0]["event"], "x", "{h}");
}

#[tokio::test]
async fn subscribe_to_session_events_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = internal(&gw, "int", &s.id, json!({"subscribe": ["user.message"]})).await;
    host.session_event(&s.id, "user.message", json!({"content": "hi"}))
        .unwrap();
    assert_eq!(
        p.expect("session.event").await["data"],
        json!({"content": "hi"})
    );
}

#[tokio::test]
async fn bind_to_any_session_or_all_internal_allowed() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "background").await;
    let (mut p, _) = Internal::connect(&gw).await;
    let (ack, _) = p.hello("int", &s2.id, json!({})).await;
    assert_eq!(ack["sessionId"], s2.id.as_str());
    let (ack, started) = p.hello("int", "all", json!({})).await;
    assert_eq!(ack["sessionId"], "all");
    assert_eq!(started, [s1.id.clone(), s2.id.clone()]);
}

#[tokio::test]
async fn set_context_and_startup_context_internal_allowed() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = internal(
        &gw,
        "int",
        &s.id,
        json!({"context": "c1", "startup_context": "boot"}),
    )
    .await;
    let HostEvent::SessionContext(c) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await
    else {
        unreachable!()
    };
    assert_eq!(c.startup_context, "boot");
    p.send(json!({"type": "context.update", "requestId": "c", "context": "c2"}));
    p.expect("ack").await;
    assert_eq!(apply(&host, &s.id, &[]).await.context, ["c2"]);
}

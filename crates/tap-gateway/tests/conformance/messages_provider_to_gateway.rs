//! Spec section "Messages: Provider → Gateway" with its summary table: every one of the 16
//! listed types is known (spec decision 31), one test per row of the `hello` and `push`
//! field tables, `tool.result` success and failure (decision 20), `tool.progress`,
//! `tools.update` deltas (decision 15), `context.update` (T6), `filter.set` (S5),
//! `stream.query` and `goodbye`. `auth`, `auth.confirm`, `gate.result`, `transform.result`,
//! `session.ready` and `shutdown.ready` have their own sections' modules.

use crate::common::*;

/// The provider→gateway types the spec's summary table lists, but `goodbye` (it closes
/// the connection; see the next test).
const LISTED: [&str; 15] = [
    "auth",
    "auth.confirm",
    "hello",
    "session.ready",
    "tool.result",
    "tool.progress",
    "gate.result",
    "transform.result",
    "push",
    "tools.update",
    "hooks.update",
    "context.update",
    "filter.set",
    "stream.query",
    "shutdown.ready",
];

#[tokio::test]
async fn every_listed_provider_message_type_is_known() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for t in LISTED {
        // Only the type: a known type with missing fields is refused INVALID_JSON or
        // handled, never UNKNOWN_TYPE.
        p.send(json!({ "type": t })).await;
        for m in until_fence(&mut p).await {
            assert_ne!(
                m["code"], "UNKNOWN_TYPE",
                "'{t}' is listed by the spec: {m}"
            );
        }
    }
}

#[tokio::test]
async fn goodbye_closes_the_connection_with_or_without_a_reason() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    p.send(json!({"type": "goodbye", "reason": "shutting down"}))
        .await;
    assert!(p.expect_closed().await.is_empty());
    let (mut q, _) = authed(&gw).await;
    q.send(json!({"type": "goodbye"})).await;
    assert!(q.expect_closed().await.is_empty());
    assert!(session_tool_names(&host, &s.id).await.is_empty());
}

// ---------------------------------------------------------------- hello fields

#[tokio::test]
async fn hello_name_is_required() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "hello", "protocolVersion": 2, "session": s.id}))
        .await;
    assert_eq!(p.expect_error("INVALID_JSON").await["replyTo"], "hello");
    hello_refused(&mut p, hello("  ", &s.id, json!({})), "INVALID_JSON").await;
}

#[tokio::test]
async fn hello_protocol_version_is_required() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "hello", "name": "p", "session": s.id}))
        .await;
    assert_eq!(p.expect_error("INVALID_JSON").await["replyTo"], "hello");
}

#[tokio::test]
async fn hello_session_picks_the_session_and_a_socket_provider_must_give_it() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2}))
        .await;
    assert_eq!(p.expect_error("INVALID_SESSION").await["replyTo"], "hello");
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn hello_instance_makes_name_and_instance_the_identity() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = bind(&gw, "b", &s.id, json!({"instance": "tab-a"})).await;
    let _b = bind(&gw, "b", &s.id, json!({"instance": "tab-b"})).await;
    let (mut c, _) = authed(&gw).await;
    hello_refused(
        &mut c,
        hello("b", &s.id, json!({"instance": "tab-a"})),
        "DUPLICATE_INSTANCE",
    )
    .await;
    assert_eq!(host.status().await.unwrap().providers.len(), 3);
}

#[tokio::test]
async fn hello_reconnect_token_restores_the_binding() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "p", &s.id, json!({})).await;
    drop(old);
    let (mut p, _) = authed(&gw).await;
    p.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    assert_eq!(
        expect_bound(&mut p, &s.id).await["providerId"],
        ack["providerId"]
    );
}

#[tokio::test]
async fn hello_startup_context_goes_to_the_session_start_context() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        json!({"startup_context": "Provider loaded. Monitoring 3 endpoints."}),
    )
    .await;
    let HostEvent::SessionContext(c) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        (
            c.session_id.as_str(),
            c.provider.as_str(),
            c.startup_context.as_str()
        ),
        (
            s.id.as_str(),
            "p",
            "Provider loaded. Monitoring 3 endpoints."
        )
    );
    // Not per prompt.
    assert!(apply(&host, &s.id, &[]).await.context.is_empty());
}

#[tokio::test]
async fn hello_metadata_is_accepted() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    bind(
        &gw,
        "p",
        &s.id,
        json!({"metadata": {"url": "https://app.example.com", "title": "Dashboard"}}),
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn hello_tools_carry_json_schema_parameters_and_an_optional_timeout() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]});
    let mut p = bound(&gw, "p", &s.id, json!([
        {"name": "my_tool", "description": "Does something useful", "timeout": 1500, "parameters": schema},
        {"name": "plain", "description": "no timeout", "parameters": {}}])).await;
    let t = tools_published(&mut host, &s.id, &["my_tool", "plain"]).await;
    let my = t.tools.iter().find(|t| t.name == "my_tool").unwrap();
    assert_eq!(
        (
            &my.parameters.to_value(),
            my.timeout_ms,
            my.description.as_str()
        ),
        (&schema, 1500, "Does something useful")
    );
    assert_eq!(
        t.tools
            .iter()
            .find(|t| t.name == "plain")
            .unwrap()
            .timeout_ms,
        120_000
    );
    let rx = invoke(&host, &s.id, "my_tool", json!({"query": "q"}));
    p.expect("tool.call").await;
    assert_eq!(p.expect("tool.cancel").await["reason"], "timeout");
    assert_eq!(code(&result_of(rx).await), Some("TIMEOUT"));
}

#[tokio::test]
async fn hello_hooks_register_rules_and_transforms() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(&gw, "p", &s.id, json!({"hooks": {
        "onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny", "reason": "r"}],
        "transforms": {"custom_instructions": {"action": "append", "content": "This repo uses pnpm, not npm."}}}})).await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
    let a = apply(&host, &s.id, &[("custom_instructions", "x")]).await;
    assert_eq!(
        a.sections["custom_instructions"],
        "x\nThis repo uses pnpm, not npm."
    );
}

#[tokio::test]
async fn hello_subscribe_selects_session_events() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"subscribe": ["user.message", "assistant.message"]}),
    )
    .await;
    host.session_event(&s.id, "assistant.intent", json!({"intent": "i"}))
        .unwrap();
    host.session_event(&s.id, "assistant.message", json!({"content": "c"}))
        .unwrap();
    assert_eq!(
        p.expect("session.event").await["event"],
        "assistant.message"
    );
}

#[tokio::test]
async fn hello_context_is_injected_on_every_prompt() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        json!({"context": "CI is currently passing. No active deploys."}),
    )
    .await;
    for _ in 0..2 {
        assert_eq!(
            apply(&host, &s.id, &[]).await.context,
            ["CI is currently passing. No active deploys."]
        );
    }
}

// ---------------------------------------------------------------- tool.result, tool.progress

async fn outcome(result: Value) -> HostToolResult {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    let call = p.expect("tool.call").await;
    let mut r = result;
    r["type"] = json!("tool.result");
    r["id"] = call["id"].clone();
    p.send(r).await;
    result_of(rx).await
}

#[tokio::test]
async fn tool_result_success_carries_data() {
    let r = outcome(json!({"data": {"user": "alice", "role": "admin"}})).await;
    assert_eq!(
        (r.data, r.error_code),
        (Some(json!({"user": "alice", "role": "admin"})), None)
    );
}

#[tokio::test]
async fn tool_result_without_data_is_a_success_with_null() {
    // Read as the host's raw frame: `HostClient` cannot tell `null` from absent.
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let mut raw = raw_host(&gw).await;
    raw.send(json!({"type": "tool.invoke", "callId": "c1", "sessionId": s.id, "tool": "t"}))
        .await;
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"]}))
        .await;
    let r = expect_skipping(&mut raw, "tool.result", &["session.tools"]).await;
    assert_eq!(
        r,
        json!({"type": "tool.result", "callId": "c1", "data": null})
    );
}

#[tokio::test]
async fn tool_result_failure_carries_error_and_error_code() {
    for c in [
        "NOT_FOUND",
        "TIMEOUT",
        "CANCELLED",
        "DISCONNECTED",
        "UNAUTHORIZED",
        "INTERNAL",
    ] {
        let r = outcome(
            json!({"error": "Element not found: #submit-btn", "errorCode": c, "retryable": false}),
        )
        .await;
        assert_eq!(code(&r), Some(c));
        assert_eq!(r.error.as_deref(), Some("Element not found: #submit-btn"));
        assert_eq!(r.data, None);
    }
}

#[tokio::test]
async fn tool_result_error_without_code_is_internal() {
    let r = outcome(json!({"error": "boom"})).await;
    assert_eq!(
        (code(&r), r.error.as_deref()),
        (Some("INTERNAL"), Some("boom"))
    );
}

#[tokio::test]
async fn tool_result_error_code_without_error_uses_the_code_as_message() {
    let r = outcome(json!({"errorCode": "NOT_FOUND"})).await;
    assert_eq!(
        (code(&r), r.error.as_deref()),
        (Some("NOT_FOUND"), Some("NOT_FOUND"))
    );
}

#[tokio::test]
async fn tool_progress_is_surfaced_to_the_session() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let (call_id, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(
        json!({"type": "tool.progress", "id": call["id"], "message": "Capturing viewport... 60%"}),
    )
    .await;
    let HostEvent::ToolProgress(pr) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::ToolProgress(_))).await
    else {
        unreachable!()
    };
    assert_eq!(
        (pr.call_id.as_str(), pr.message.as_str()),
        (call_id.as_str(), "Capturing viewport... 60%")
    );
    answer(&mut p, &call, json!("final")).await;
    assert_eq!(
        result_of(rx).await.data,
        Some(json!("final")),
        "the result still comes via tool.result"
    );
}

// ---------------------------------------------------------------- push fields

#[tokio::test]
async fn push_stream_defaults_to_the_provider_name() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "ci-watcher", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "surface", "event": "e"}))
        .await;
    assert_eq!(next_delivery(&mut host).await.stream, "ci-watcher");
    assert_eq!(stored(&host, &s.id, "ci-watcher@ci-watcher").await, ["e"]);
}

#[tokio::test]
async fn push_session_id_may_be_omitted_or_name_the_bound_session() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "sessionId": s.id, "level": "surface", "event": "explicit"}))
        .await;
    assert_eq!(next_delivery(&mut host).await.event, "explicit");
}

#[tokio::test]
async fn push_event_is_required_unless_a_prompt_is_given() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "surface"})).await;
    assert_eq!(p.expect_error("INVALID_JSON").await["replyTo"], "push");
    p.send(json!({"type": "push", "level": "surface", "event": ""}))
        .await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "push", "level": "inject", "prompt": "Summarize the CI failure"}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.event.as_str(), d.prompt.as_deref()),
        ("Summarize the CI failure", Some("Summarize the CI failure"))
    );
}

#[tokio::test]
async fn push_prompt_is_delivered_for_a_full_ai_turn() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "inject", "event": "CI failed", "prompt": "Fix the CI failure"}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.level, d.event.as_str(), d.prompt.as_deref()),
        (PushLevel::Inject, "CI failed", Some("Fix the CI failure"))
    );
}

#[tokio::test]
async fn push_level_is_required_and_is_keep_surface_or_inject() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "event": "e"})).await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "push", "event": "e", "level": "shout"}))
        .await;
    p.expect_error("INVALID_JSON").await;
    for level in ["keep", "surface", "inject"] {
        p.send(json!({"type": "push", "level": level, "event": level}))
            .await;
    }
    fence(&mut p).await;
    let levels = [
        next_delivery(&mut host).await.level,
        next_delivery(&mut host).await.level,
    ];
    assert_eq!(
        levels,
        [PushLevel::Surface, PushLevel::Inject],
        "keep is stored only"
    );
    assert_eq!(
        stored(&host, &s.id, "p@p").await,
        ["inject", "surface", "keep"]
    );
}

#[tokio::test]
async fn push_metadata_is_stored_and_delivered() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let meta = json!({"kind": "ci-failure", "runId": 12345});
    p.send(json!({"type": "push", "stream": "ci-watch", "level": "surface", "event": "e", "metadata": meta}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(Value::Object(d.metadata.unwrap()), meta);
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["ci-watch"]}))
        .await;
    assert_eq!(
        p.expect("stream.history").await["streams"]["ci-watch"][0]["metadata"],
        meta
    );
}

// ---------------------------------------------------------------- updates and queries

#[tokio::test]
async fn tools_update_with_remove_adds_and_removes() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("old_tool"), tool("kept")])).await;
    p.send(
        json!({"type": "tools.update", "requestId": "r", "sessionId": s.id,
                  "tools": [{"name": "new_tool", "description": "Just appeared", "parameters": {}}],
                  "remove": ["old_tool"]}),
    )
    .await;
    p.expect("ack").await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["kept", "new_tool"]);
}

#[tokio::test]
async fn tools_update_without_remove_replaces_the_list() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("a"), tool("b")])).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("c")]}))
        .await;
    p.expect("ack").await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["c"]);
}

#[tokio::test]
async fn context_update_replaces_the_context_and_without_context_clears_it() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({"context": "CI is passing."})).await;
    p.send(json!({"type": "context.update", "requestId": "1", "context": "CI is now passing. Deploy v2.4.3 completed."}))
        .await;
    p.expect("ack").await;
    assert_eq!(
        apply(&host, &s.id, &[]).await.context,
        ["CI is now passing. Deploy v2.4.3 completed."]
    );
    p.send(json!({"type": "context.update", "requestId": "2"}))
        .await;
    p.expect("ack").await;
    assert!(apply(&host, &s.id, &[]).await.context.is_empty());
}

#[tokio::test]
async fn filter_set_first_match_wins_and_overrides_the_push_level() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "guardian", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "stream": "git-watch", "rules": [
        {"match": "behind=0", "outcome": "drop"},
        {"match": "conflicts=[1-9]", "outcome": "surface"},
        {"match": ".*", "outcome": "keep"}]}),
    )
    .await;
    p.expect("ack").await;
    for e in ["behind=0", "conflicts=2", "behind=3"] {
        p.send(json!({"type": "push", "stream": "git-watch", "level": "inject", "event": e}))
            .await;
    }
    fence(&mut p).await;
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.event.as_str(), d.level),
        ("conflicts=2", PushLevel::Surface)
    );
    assert_eq!(
        stored(&host, &s.id, "git-watch@guardian").await,
        ["behind=3", "conflicts=2"]
    );
}

#[tokio::test]
async fn stream_query_session_id_is_optional_for_a_single_session_provider() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "stream": "x", "level": "keep", "event": "e"}))
        .await;
    for q in [
        json!({"type": "stream.query", "queryId": "a", "streams": ["x"]}),
        json!({"type": "stream.query", "queryId": "b", "sessionId": s.id, "streams": ["x"]}),
    ] {
        p.send(q).await;
        assert_eq!(
            p.expect("stream.history").await["streams"]["x"][0]["event"],
            "e"
        );
    }
}

// ---------------------------------------------------------------- validation (decisions 8, 9, 12, 24)

#[tokio::test]
async fn tool_names_are_1_to_64_characters_of_letters_digits_underscore_and_dash() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for bad in ["", "has space", "dot.ted", "ünïcode", &"x".repeat(65)] {
        hello_refused(
            &mut p,
            hello("p", &s.id, json!({"tools": [tool(bad)]})),
            "INVALID_JSON",
        )
        .await;
    }
    p.send(hello(
        "p",
        &s.id,
        json!({"tools": [tool(&"x".repeat(64)), tool("A-z_09")]}),
    ))
    .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn tool_parameters_must_be_a_json_object() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for params in [json!("string"), json!([1]), json!(3)] {
        hello_refused(
            &mut p,
            hello(
                "p",
                &s.id,
                json!({"tools": [{"name": "t", "description": "d", "parameters": params}]}),
            ),
            "INVALID_JSON",
        )
        .await;
    }
}

#[tokio::test]
async fn a_tool_timeout_is_1_ms_to_1_hour() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for bad in [0, 3_600_001] {
        hello_refused(
            &mut p,
            hello("p", &s.id, json!({"tools": [timed_tool("t", bad)]})),
            "INVALID_JSON",
        )
        .await;
    }
    p.send(hello(
        "p",
        &s.id,
        json!({"tools": [timed_tool("a", 1), timed_tool("b", 3_600_000)]}),
    ))
    .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn push_stream_names_are_1_to_128_characters_without_at() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for bad in ["", "a@b", &"s".repeat(129)] {
        p.send(json!({"type": "push", "stream": bad, "level": "keep", "event": "e"}))
            .await;
        p.expect_error("INVALID_JSON").await;
    }
    let longest = "s".repeat(128);
    p.send(json!({"type": "push", "stream": longest, "level": "keep", "event": "e"}))
        .await;
    fence(&mut p).await;
    assert_eq!(stored(&host, &s.id, &format!("{longest}@p")).await, ["e"]);
}

#[tokio::test]
async fn in_flight_calls_to_a_tool_removed_by_tools_update_are_not_cancelled() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("going")])).await;
    let rx = invoke(&host, &s.id, "going", json!({}));
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": []}))
        .await;
    p.expect("ack").await;
    answer(&mut p, &call, json!("finished anyway")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("finished anyway")));
}

#[tokio::test]
async fn unknown_event_names_in_subscribe_are_accepted() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(&gw, "p", &s.id, json!({"subscribe": ["future.event"]})).await;
    host.session_event(&s.id, "future.event", json!({"x": 1}))
        .unwrap();
    assert_eq!(p.expect("session.event").await["data"], json!({"x": 1}));
}

//! Pre-tool-use hook rules (spec: "Hook rules — declarative API", "Gate timeout behavior:
//! fail closed", `gate.check`, `gate.result`, "Regex execution safety", "Update
//! acknowledgments" for `hooks.update`), driven over real sockets: providers register
//! rules, a session host asks `tool.precheck` and gets one `tool.decision`.

use tap_testkit::*;

use serde_json::{json, Value};
use std::sync::Arc;
use tap_client::HostClient;
use tap_gateway::Decision;
use tap_protocol::host::{PrecheckDecision, SessionRegister, ToolDecision};
use tap_protocol::limits::{GATE_TIMEOUT, MAX_HOOK_RULES_PER_PROVIDER};
use tap_protocol::ErrorCode;

// ---------------------------------------------------------------- helpers

/// A provider bound to `session` with `tools` and `onPreToolUse` `rules`.
async fn hooked(
    gw: &TestGateway,
    name: &str,
    session: &str,
    tools: Value,
    rules: Value,
) -> Provider {
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session,
                  "tools": tools, "hooks": {"onPreToolUse": rules}}),
    )
    .await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    p
}

/// The `hello` error for a provider whose rules are refused.
async fn hello_refused(gw: &TestGateway, session: &str, rules: Value, code: &str) -> Value {
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": session,
                  "hooks": {"onPreToolUse": rules}}),
    )
    .await;
    let e = p.expect_error(code).await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    e
}

async fn precheck(host: &HostClient, session: &str, tool: &str, args: Value) -> ToolDecision {
    tokio::time::timeout(PATIENCE, host.precheck(session, tool, args))
        .await
        .expect("no tool.decision")
        .expect("precheck refused")
}

fn assert_allow(d: &ToolDecision) {
    assert_eq!(d.decision, PrecheckDecision::Allow, "{d:?}");
    assert_eq!((d.reason.as_deref(), d.context.as_deref()), (None, None));
}

fn assert_deny(d: &ToolDecision, reason: &str) {
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
    assert_eq!(d.reason.as_deref(), Some(reason));
    assert_eq!(d.context, None);
}

fn assert_context(d: &ToolDecision, context: &str) {
    assert_eq!(d.decision, PrecheckDecision::Context, "{d:?}");
    assert_eq!(d.context.as_deref(), Some(context));
    assert_eq!(d.reason, None);
}

fn gate(tool: &str, gate_id: &str) -> Value {
    json!({"match": {"tool": tool}, "action": "gate", "gateId": gate_id})
}

/// Spawns a precheck and returns the `gate.check` the provider receives for it.
async fn start_gated(
    host: &Arc<HostClient>,
    p: &mut Provider,
    session: &str,
    tool: &str,
    args: Value,
) -> (tokio::task::JoinHandle<ToolDecision>, Value) {
    let host = host.clone();
    let (s, t) = (session.to_string(), tool.to_string());
    let task = tokio::spawn(async move {
        let d = host.precheck(&s, &t, args).await.expect("precheck refused");
        drop(host);
        d
    });
    let check = p.expect("gate.check").await;
    (task, check)
}

/// `HostClient` is not `Clone`; a second host connection would not own the session, so
/// tests that need a precheck running in a task share the client.
async fn shared_host(gw: &TestGateway) -> (Arc<HostClient>, String) {
    let (host, s) = gw.host_with_session().await;
    (Arc::new(host), s.id)
}

// ---------------------------------------------------------------- static actions

#[tokio::test]
async fn no_rules_allow() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = gw.bound("p", &s.id, json!([tool("t")])).await;
    assert_allow(&precheck(&host, &s.id, "t", json!({})).await);
    assert_allow(&precheck(&host, &s.id, "shell", json!({"command": "ls"})).await);
}

#[tokio::test]
async fn deny_rule_denies_with_its_reason_and_only_its_tool() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(
        &gw,
        "guard",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny", "reason": "No shell here."}]),
    )
    .await;
    assert_deny(
        &precheck(&host, &s.id, "shell", json!({"command": "ls"})).await,
        "No shell here.",
    );
    assert_allow(&precheck(&host, &s.id, "edit", json!({})).await);
}

// ---------------------------------------------------------------- matching

#[tokio::test]
async fn args_regex_is_tested_against_the_compact_json_of_the_args() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(
        &gw,
        "git",
        &s.id,
        json!([]),
        // Compact JSON: no space after ':' (what JSON.stringify produces).
        json!([{"match": {"tool": "shell", "args": r#"^\{"command":"git push\b"#},
                "action": "deny", "reason": "no pushing"}]),
    )
    .await;
    assert_deny(
        &precheck(
            &host,
            &s.id,
            "shell",
            json!({"command": "git push origin main"}),
        )
        .await,
        "no pushing",
    );
    assert_allow(&precheck(&host, &s.id, "shell", json!({"command": "git pushy"})).await);
    assert_allow(&precheck(&host, &s.id, "shell", json!({"command": "git status"})).await);
    // Same args, other tool: `match.tool` still applies.
    assert_allow(&precheck(&host, &s.id, "bash", json!({"command": "git push"})).await);
}

#[tokio::test]
async fn args_regex_sees_nested_values_and_key_order() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(
        &gw,
        "p",
        &s.id,
        json!([]),
        json!([{"match": {"args": r#""path":"[^"]*\.sql""#}, "action": "context",
                "content": "migration"}]),
    )
    .await;
    assert_context(
        &precheck(
            &host,
            &s.id,
            "edit",
            json!({"opts": {"path": "db/1.sql"}, "x": 1}),
        )
        .await,
        "migration",
    );
    assert_allow(&precheck(&host, &s.id, "edit", json!({"path": "db/1.rs"})).await);
}

#[tokio::test]
async fn args_are_stringified_as_json_stringify_does_keys_in_the_order_sent() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(
        &gw,
        "p",
        &s.id,
        json!([]),
        json!([{"match": {"args": r#"^\{"b":\{"d":null,"c":true\},"a":1\}$"#},
                "action": "deny", "reason": "as sent"},
               {"match": {"args": r#"^\{"a":1"#}, "action": "deny", "reason": "sorted"}]),
    )
    .await;
    // Compact, and in the order of the wire: what `JSON.stringify` gives for that object.
    let d = host
        .precheck(
            &s.id,
            "t",
            serde_json::from_str(r#"{"b": {"d": null, "c": true}, "a": 1}"#).unwrap(),
        )
        .await
        .unwrap();
    assert_deny(&d, "as sent");
}

// ---------------------------------------------------------------- gates

#[tokio::test]
async fn gate_context_joins_static_contexts_in_rule_order() {
    let gw = TestGateway::start().await;
    let (host, s) = shared_host(&gw).await;
    let mut p = hooked(
        &gw,
        "ci",
        &s,
        json!([]),
        json!([gate("shell", "g"),
               {"match": {"tool": "shell"}, "action": "context", "content": "static"}]),
    )
    .await;
    let (task, check) = start_gated(&host, &mut p, &s, "shell", json!({})).await;
    p.send(
        json!({"type": "gate.result", "callId": check["callId"], "decision": "context",
                  "reason": "from gate"}),
    )
    .await;
    assert_context(&task.await.unwrap(), "from gate\n\nstatic");
}

#[tokio::test(start_paused = true)]
async fn a_gate_that_does_not_answer_in_5_s_denies_fail_closed() {
    let gw = TestGateway::start().await;
    let (host, s) = shared_host(&gw).await;
    let mut p = hooked(
        &gw,
        "ci-watcher",
        &s,
        json!([]),
        json!([gate("shell", "g")]),
    )
    .await;
    let asked = tokio::time::Instant::now();
    let (task, _check) = start_gated(&host, &mut p, &s, "shell", json!({})).await;
    let d = task.await.unwrap();
    assert_deny(&d, "Gate provider 'ci-watcher' did not respond in time.");
    assert!(asked.elapsed() >= GATE_TIMEOUT, "{:?}", asked.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_late_gate_result_is_ignored() {
    let gw = TestGateway::start().await;
    let (host, s) = shared_host(&gw).await;
    let mut p = hooked(&gw, "ci", &s, json!([]), json!([gate("shell", "g")])).await;
    let (task, check) = start_gated(&host, &mut p, &s, "shell", json!({})).await;
    assert_deny(
        &task.await.unwrap(),
        "Gate provider 'ci' did not respond in time.",
    );
    // Answering afterwards, or with an id never issued, produces nothing.
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    p.send(json!({"type": "gate.result", "callId": "g-nope", "decision": "deny"}))
        .await;
    p.send(json!({"type": "no.such.type"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
}

#[tokio::test(start_paused = true)]
async fn fail_open_gates_allow_on_timeout() {
    let gw = TestGateway::start().await;
    let (host, s) = shared_host(&gw).await;
    let mut p = hooked(
        &gw,
        "ci",
        &s,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "gate", "gateId": "g", "failOpen": true}]),
    )
    .await;
    let asked = tokio::time::Instant::now();
    let (task, _check) = start_gated(&host, &mut p, &s, "shell", json!({})).await;
    assert_allow(&task.await.unwrap());
    assert!(asked.elapsed() >= GATE_TIMEOUT, "{:?}", asked.elapsed());
}

#[tokio::test]
async fn a_provider_that_disconnects_with_a_pending_gate_denies_even_if_fail_open() {
    let gw = TestGateway::start().await;
    let (host, s) = shared_host(&gw).await;
    for fail_open in [false, true] {
        let mut p = hooked(
            &gw,
            "ci",
            &s,
            json!([]),
            json!([{"match": {"tool": "shell"}, "action": "gate", "gateId": "g",
                    "failOpen": fail_open}]),
        )
        .await;
        let (task, _check) = start_gated(&host, &mut p, &s, "shell", json!({})).await;
        drop(p);
        assert_deny(
            &tokio::time::timeout(PATIENCE, task)
                .await
                .expect("no decision after the disconnect")
                .unwrap(),
            "Gate provider 'ci' disconnected before answering.",
        );
    }
    // The provider is gone, and its rules with it.
    assert_allow(&precheck(&host, &s, "shell", json!({})).await);
}

// ---------------------------------------------------------------- validation and limits

#[tokio::test]
async fn fifty_rules_are_accepted_and_fifty_one_are_payload_too_large() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let rule = json!({"match": {"tool": "t"}, "action": "context", "content": "c"});
    let too_many = vec![rule.clone(); MAX_HOOK_RULES_PER_PROVIDER + 1];
    let e = hello_refused(&gw, &s.id, json!(too_many), "PAYLOAD_TOO_LARGE").await;
    assert!(e["message"].as_str().unwrap().contains("51"), "{e}");
    let max = vec![rule; MAX_HOOK_RULES_PER_PROVIDER];
    let _p = hooked(&gw, "p", &s.id, json!([]), json!(max)).await;
    let d = precheck(&host, &s.id, "t", json!({})).await;
    assert_eq!(
        d.context.as_deref().map(|c| c.split("\n\n").count()),
        Some(MAX_HOOK_RULES_PER_PROVIDER)
    );
}

#[tokio::test]
async fn an_invalid_regex_is_invalid_json_naming_the_rule() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let e = hello_refused(
        &gw,
        &s.id,
        json!([{"match": {"tool": "t"}, "action": "deny"},
               {"match": {"args": "git (push"}, "action": "deny"}]),
        "INVALID_JSON",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("rule 1"), "{e}");
    assert!(message.contains("match.args"), "{e}");
}

#[tokio::test]
async fn oversized_patterns_are_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let long = "a".repeat(4 * 1024 + 1);
    let e = hello_refused(
        &gw,
        &s.id,
        json!([{"match": {"args": long}, "action": "deny"}]),
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("rule 0"), "{e}");
    // Short, but compiling to a huge program: refused by the size limit.
    let huge = hello_refused(
        &gw,
        &s.id,
        json!([{"match": {"args": r"\w{1000}\w{1000}\w{1000}"}, "action": "deny"}]),
        "INVALID_JSON",
    )
    .await;
    assert!(
        huge["message"].as_str().unwrap().contains("rule 0"),
        "{huge}"
    );
}

#[tokio::test]
async fn a_context_rule_needs_content() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let e = hello_refused(
        &gw,
        &s.id,
        json!([{"match": {"tool": "t"}, "action": "context"}]),
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("content"), "{e}");
    hello_refused(
        &gw,
        &s.id,
        json!([{"match": {"tool": "t"}, "action": "block"}]),
        "INVALID_JSON",
    )
    .await;
}

// ---------------------------------------------------------------- hooks.update

#[tokio::test]
async fn hooks_update_replaces_the_rules_and_acks_with_the_next_revision() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = hooked(
        &gw,
        "p",
        &s.id,
        json!([tool("t")]),
        json!([{"action": "deny", "reason": "old"}]),
    )
    .await;
    assert_deny(&precheck(&host, &s.id, "x", json!({})).await, "old");

    p.send(json!({"type": "hooks.update", "requestId": "h1", "sessionId": s.id,
                  "onPreToolUse": [{"match": {"tool": "x"}, "action": "context", "content": "new"}]}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "h1");
    assert_eq!(ack["sessionId"], s.id.as_str());
    assert_eq!(ack["revision"], 1);
    // After the ack, the new rules decide.
    assert_context(&precheck(&host, &s.id, "x", json!({})).await, "new");
    assert_allow(&precheck(&host, &s.id, "y", json!({})).await);

    // The revision is one counter per (provider, session), shared with tools.update.
    p.send(json!({"type": "tools.update", "requestId": "t1", "tools": [tool("t")]}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 2);
    p.send(json!({"type": "hooks.update", "requestId": "h2", "onPreToolUse": []}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(
        (ack["requestId"].as_str(), ack["revision"].as_u64()),
        (Some("h2"), Some(3))
    );
    assert_allow(&precheck(&host, &s.id, "x", json!({})).await);
}

#[tokio::test]
async fn a_failed_hooks_update_answers_error_with_request_id_and_keeps_the_old_rules() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = hooked(
        &gw,
        "p",
        &s.id,
        json!([]),
        json!([{"action": "deny", "reason": "kept"}]),
    )
    .await;
    let rule = json!({"action": "context", "content": "c"});
    let cases = [
        (
            json!([{"match": {"args": "("}, "action": "deny"}]),
            "INVALID_JSON",
            None,
        ),
        (
            json!(vec![rule; MAX_HOOK_RULES_PER_PROVIDER + 1]),
            "PAYLOAD_TOO_LARGE",
            None,
        ),
        (json!([]), "INVALID_SESSION", Some("not-my-session")),
    ];
    for (i, (rules, code, session)) in cases.into_iter().enumerate() {
        let mut msg = json!({"type": "hooks.update", "requestId": format!("r{i}"),
                             "onPreToolUse": rules});
        if let Some(sid) = session {
            msg["sessionId"] = json!(sid);
        }
        p.send(msg).await;
        let e = p.expect_error(code).await;
        assert_eq!(e["requestId"], format!("r{i}"), "{e}");
        assert_eq!(e["replyTo"], "hooks.update", "{e}");
        assert_deny(&precheck(&host, &s.id, "x", json!({})).await, "kept");
    }
    // Failures consume no revision.
    p.send(json!({"type": "hooks.update", "requestId": "ok", "onPreToolUse": []}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 1);
}

#[tokio::test]
async fn rules_leave_with_the_binding() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = host
        .register_session(SessionRegister::default())
        .await
        .unwrap();
    let mut p = hooked(&gw, "p", &s1.id, json!([]), json!([{"action": "deny"}])).await;
    // Rebinding without hooks: the old session's rules are gone, the new one has none.
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": s2.id}))
        .await;
    p.expect("hello.ack").await;
    assert_allow(&precheck(&host, &s1.id, "x", json!({})).await);
    assert_allow(&precheck(&host, &s2.id, "x", json!({})).await);
}

// ---------------------------------------------------------------- session host side

#[tokio::test]
async fn precheck_errors_name_the_request() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let other = gw.host().await;
    let refused = |r: Result<ToolDecision, tap_client::ClientError>| match r {
        Err(tap_client::ClientError::Refused(e)) => e,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let e = refused(host.precheck("nope", "t", json!({})).await);
    assert_eq!(e.code, ErrorCode::InvalidSession);
    assert_eq!(e.reply_to.as_deref(), Some("tool.precheck"));
    assert!(e.request_id.is_some());
    // Like tool.invoke, any host may ask about any session (`tap call` is its own host).
    let _p = hooked(
        &gw,
        "p",
        &s.id,
        json!([]),
        json!([{"action": "deny", "reason": "r"}]),
    )
    .await;
    assert_deny(&precheck(&other, &s.id, "t", json!({})).await, "r");
    let e = refused(host.precheck(&s.id, "t", json!([1])).await);
    assert_eq!(e.code, ErrorCode::InvalidJson);
}

#[tokio::test]
async fn the_decision_is_available_in_process() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _p = hooked(
        &gw,
        "p",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "a"}, "action": "deny", "reason": "no a"},
               {"match": {"tool": "b"}, "action": "context", "content": "about b"}]),
    )
    .await;
    let g = gw.handle.gateway();
    assert_eq!(
        g.pre_tool_use(&s.id, "a", &json!({})).await.unwrap(),
        Decision::Deny("no a".into())
    );
    assert_eq!(
        g.pre_tool_use(&s.id, "b", &json!({})).await.unwrap(),
        Decision::Context("about b".into())
    );
    assert_eq!(
        g.pre_tool_use(&s.id, "c", &json!({})).await.unwrap(),
        Decision::Allow
    );
    assert_eq!(
        g.pre_tool_use("nope", "a", &json!({}))
            .await
            .unwrap_err()
            .code,
        ErrorCode::InvalidSession
    );
}

// ---------------------------------------------------------------- capability matrix

#[tokio::test]
async fn paired_external_providers_may_not_register_hook_rules() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let g = gw.handle.gateway();
    // Pair: request, read the code through the engine API (as the tray would), confirm.
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "mode": "pair", "name": "ext"}))
        .await;
    p.expect("auth.pairing").await;
    let entry = g
        .pairing_list()
        .into_iter()
        .next()
        .expect("a pending pairing");
    p.send(json!({"type": "auth.confirm", "code": entry.code.expect("pending code")}))
        .await;
    p.expect("sessions").await;

    let rules = [
        json!([gate("t", "g")]),
        json!([{"match": {"tool": "t"}, "action": "deny", "reason": "r"}]),
        json!([{"match": {"tool": "t"}, "action": "context", "content": "c"}]),
    ];
    for r in &rules {
        p.send(
            json!({"type": "hello", "name": "ext", "protocolVersion": 2, "session": s.id,
                      "hooks": {"onPreToolUse": r}}),
        )
        .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], "hello", "{e}");
    }
    // Even an invalid pattern is refused for trust first.
    p.send(
        json!({"type": "hello", "name": "ext", "protocolVersion": 2, "session": s.id,
                  "hooks": {"onPreToolUse": [{"match": {"args": "("}, "action": "deny"}]}}),
    )
    .await;
    p.expect_error("UNAUTHORIZED").await;

    p.send(json!({"type": "hello", "name": "ext", "protocolVersion": 2, "session": s.id}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    for (i, r) in rules.iter().enumerate() {
        p.send(json!({"type": "hooks.update", "requestId": format!("h{i}"), "onPreToolUse": r}))
            .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["requestId"], format!("h{i}"), "{e}");
    }
    assert_allow(&precheck(&host, &s.id, "t", json!({})).await);
}

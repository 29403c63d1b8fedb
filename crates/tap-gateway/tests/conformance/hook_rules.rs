//! Spec section "Hook rules — declarative API" → "onPreToolUse rules": one test per row
//! of the action table (`deny`, `context`, `gate`), `match.tool` / `match.args` /
//! `match.provider`, and `gate.result` decisions. Spec decisions H3–H8: invalid rules are
//! refused whole; deny wins, contexts concatenate; `match.provider` is the tool's provider;
//! the session host asks (`tool.precheck`); rules leave with the binding.

use crate::common::*;
use tokio::task::JoinHandle;

async fn ruled(
    gw: &TestGateway,
    name: &str,
    session: &str,
    tools: Value,
    rules: Value,
) -> Provider {
    bind(
        gw,
        name,
        session,
        json!({"tools": tools, "hooks": {"onPreToolUse": rules}}),
    )
    .await
    .0
}

fn ask(host: &Arc<HostClient>, session: &str, tool: &str, args: Value) -> JoinHandle<ToolDecision> {
    let host = host.clone();
    let (s, t) = (session.to_string(), tool.to_string());
    tokio::spawn(async move { host.precheck(&s, &t, args).await.expect("precheck refused") })
}

async fn decided(task: JoinHandle<ToolDecision>) -> ToolDecision {
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("no decision")
        .unwrap()
}

fn gate(tool: &str, gate_id: &str) -> Value {
    json!({"match": {"tool": tool}, "action": "gate", "gateId": gate_id})
}

// ---------------------------------------------------------------- actions

#[tokio::test]
async fn deny_blocks_the_tool_with_its_reason_without_a_round_trip() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = ruled(
        &gw,
        "guard",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny", "reason": "No shell here."}]),
    )
    .await;
    let d = precheck(&host, &s.id, "shell", json!({"command": "ls"})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("No shell here."), None)
    );
    fence(&mut p).await; // nothing was asked
}

#[tokio::test]
async fn deny_without_reason_names_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = ruled(
        &gw,
        "guard",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    )
    .await;
    let d = precheck(&host, &s.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (
            PrecheckDecision::Deny,
            Some("Denied by a hook rule of provider 'guard'."),
            None
        )
    );
    // A rule with no `match` at all (in another session, so only it applies): every tool.
    let s2 = second_session(&host, "two").await;
    let _open = ruled(&gw, "open", &s2.id, json!([]), json!([{"action": "deny"}])).await;
    let d = precheck(&host, &s2.id, "anything", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (
            PrecheckDecision::Deny,
            Some("Denied by a hook rule of provider 'open'."),
            None
        )
    );
}

#[tokio::test]
async fn context_allows_and_adds_its_content_without_a_round_trip() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = ruled(&gw, "docs", &s.id, json!([]),
        json!([{"match": {"tool": "edit"}, "action": "context", "content": "This is a migration file."}])).await;
    let d = precheck(&host, &s.id, "edit", json!({})).await;
    assert_eq!(
        (d.decision, d.context.as_deref(), d.reason.as_deref()),
        (
            PrecheckDecision::Context,
            Some("This is a migration file."),
            None
        )
    );
    fence(&mut p).await;
}

#[tokio::test]
async fn gate_asks_the_provider_with_gate_check() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = ruled(&gw, "ci", &s.id, json!([]),
        json!([{"match": {"tool": "shell", "args": "git push"}, "action": "gate", "gateId": "check-before-push"}])).await;
    let task = ask(
        &host,
        &s.id,
        "shell",
        json!({"command": "git push origin main"}),
    );
    let check = p.expect("gate.check").await;
    assert_eq!(check["gateId"], "check-before-push");
    assert_eq!(check["sessionId"], s.id.as_str());
    assert_eq!(check["tool"], "shell");
    assert_eq!(check["args"], json!({"command": "git push origin main"}));
    assert!(
        check["callId"].as_str().is_some_and(|c| !c.is_empty()),
        "{check}"
    );
    p.send(
        json!({"type": "gate.result", "gateId": "check-before-push", "callId": check["callId"],
                  "decision": "allow"}),
    )
    .await;
    assert_eq!(decided(task).await.decision, PrecheckDecision::Allow);
}

async fn gate_answer(decision: &str, reason: Option<&str>) -> ToolDecision {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut p = ruled(&gw, "ci", &s.id, json!([]), json!([gate("shell", "g")])).await;
    let task = ask(&host, &s.id, "shell", json!({}));
    let check = p.expect("gate.check").await;
    let mut result = json!({"type": "gate.result", "gateId": "g", "callId": check["callId"], "decision": decision});
    if let Some(r) = reason {
        result["reason"] = json!(r);
    }
    p.send(result).await;
    decided(task).await
}

#[tokio::test]
async fn gate_result_allow_allows() {
    let d = gate_answer("allow", None).await;
    assert_eq!(
        (d.decision, d.reason, d.context),
        (PrecheckDecision::Allow, None, None)
    );
}

#[tokio::test]
async fn gate_result_deny_denies_with_its_reason() {
    let d = gate_answer("deny", Some("CI is failing on this branch.")).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (
            PrecheckDecision::Deny,
            Some("CI is failing on this branch."),
            None
        )
    );
}

#[tokio::test]
async fn gate_result_deny_without_reason_names_the_gate_provider() {
    let d = gate_answer("deny", None).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (
            PrecheckDecision::Deny,
            Some("Denied by gate provider 'ci'."),
            None
        )
    );
}

#[tokio::test]
async fn gate_result_context_allows_and_injects_its_reason() {
    let d = gate_answer("context", Some("Deploy freeze after 5pm.")).await;
    assert_eq!(
        (d.decision, d.context.as_deref(), d.reason.as_deref()),
        (
            PrecheckDecision::Context,
            Some("Deploy freeze after 5pm."),
            None
        )
    );
}

// ---------------------------------------------------------------- match

#[tokio::test]
async fn match_tool_selects_by_tool_name() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    )
    .await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
    assert_eq!(
        precheck(&host, &s.id, "shell2", json!({})).await.decision,
        PrecheckDecision::Allow
    );
}

#[tokio::test]
async fn a_rule_without_match_tool_applies_to_every_tool() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"args": "rm -rf"}, "action": "deny"}]),
    )
    .await;
    for tool in ["shell", "edit", "anything"] {
        let d = precheck(&host, &s.id, tool, json!({"command": "rm -rf /"})).await;
        assert_eq!(d.decision, PrecheckDecision::Deny, "{tool}");
    }
}

#[tokio::test]
async fn match_args_is_a_regex_tested_against_the_stringified_args() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell", "args": "git (push|reset --hard)"}, "action": "deny"}]),
    )
    .await;
    for (cmd, want) in [
        ("git push", PrecheckDecision::Deny),
        ("git reset --hard", PrecheckDecision::Deny),
        ("git status", PrecheckDecision::Allow),
    ] {
        assert_eq!(
            precheck(&host, &s.id, "shell", json!({"command": cmd}))
                .await
                .decision,
            want,
            "{cmd}"
        );
    }
}

#[tokio::test]
async fn match_provider_scopes_a_rule_to_that_providers_tools() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _browser = bound(&gw, "browser", &s.id, json!([tool("screenshot")])).await;
    let _other = bound(&gw, "other", &s.id, json!([tool("photo")])).await;
    let _g = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"provider": "browser"}, "action": "deny", "reason": "browser is off"}]),
    )
    .await;
    let d = precheck(&host, &s.id, "screenshot", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("browser is off"), None)
    );
    let d = precheck(&host, &s.id, "photo", json!({})).await;
    assert_eq!(
        (d.decision, d.reason, d.context),
        (PrecheckDecision::Allow, None, None)
    );
    // The agent runtime's own tools belong to no provider (decision H5).
    let d = precheck(&host, &s.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason, d.context),
        (PrecheckDecision::Allow, None, None)
    );
}

#[tokio::test]
async fn unknown_match_keys_are_ignored() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = ruled(&gw, "g", &s.id, json!([]),
        json!([{"match": {"tool": "edit", "file": "*.sql"}, "action": "context", "content": "Migration."}])).await;
    let d = precheck(&host, &s.id, "edit", json!({"path": "a.rs"})).await;
    assert_eq!(
        d.decision,
        PrecheckDecision::Context,
        "the rule matches more, never less"
    );
}

// ---------------------------------------------------------------- combining (decision H4)

#[tokio::test]
async fn a_deny_wins_and_no_gate_is_asked() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut gater = ruled(&gw, "gater", &s.id, json!([]), json!([gate("shell", "g")])).await;
    let _denier = ruled(
        &gw,
        "denier",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "context", "content": "careful"},
               {"match": {"tool": "shell"}, "action": "deny", "reason": "no"}]),
    )
    .await;
    // Deny wins over a gate and over a context, even one listed before it.
    let d = precheck(&host, &s.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("no"), None)
    );
    fence(&mut gater).await;
}

#[tokio::test]
async fn contexts_of_several_rules_are_joined_in_rule_order() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = ruled(
        &gw,
        "a",
        &s.id,
        json!([]),
        json!([
        {"match": {"tool": "t"}, "action": "context", "content": "a1"},
        {"match": {"tool": "t"}, "action": "context", "content": "a2"}]),
    )
    .await;
    let _b = ruled(
        &gw,
        "b",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "t"}, "action": "context", "content": "b1"}]),
    )
    .await;
    let d = precheck(&host, &s.id, "t", json!({})).await;
    assert_eq!(
        (d.decision, d.context.as_deref(), d.reason.as_deref()),
        (PrecheckDecision::Context, Some("a1\n\na2\n\nb1"), None)
    );
    let d = precheck(&host, &s.id, "other", json!({})).await;
    assert_eq!(
        (d.decision, d.reason, d.context),
        (PrecheckDecision::Allow, None, None)
    );
}

#[tokio::test]
async fn gates_are_asked_concurrently_and_any_deny_wins() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut a = ruled(&gw, "a", &s.id, json!([]), json!([gate("shell", "ga")])).await;
    let mut b = ruled(&gw, "b", &s.id, json!([]), json!([gate("shell", "gb")])).await;
    let task = ask(&host, &s.id, "shell", json!({}));
    // Both checks are out before either is answered.
    let ca = a.expect("gate.check").await;
    let cb = b.expect("gate.check").await;
    assert_eq!((&ca["gateId"], &cb["gateId"]), (&json!("ga"), &json!("gb")));
    assert_ne!(ca["callId"], cb["callId"]);
    b.send(json!({"type": "gate.result", "callId": cb["callId"], "decision": "deny", "reason": "b says no"}))
        .await;
    a.send(json!({"type": "gate.result", "callId": ca["callId"], "decision": "allow"}))
        .await;
    let d = decided(task).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("b says no"), None)
    );
}

#[tokio::test]
async fn only_the_asked_provider_can_answer_its_gate() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let mut gater = ruled(&gw, "gater", &s.id, json!([]), json!([gate("shell", "g")])).await;
    let mut intruder = bound(&gw, "intruder", &s.id, json!([])).await;
    let task = ask(&host, &s.id, "shell", json!({}));
    let check = gater.expect("gate.check").await;
    intruder
        .send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    fence(&mut intruder).await;
    assert!(!task.is_finished(), "an intruder's answer decided the gate");
    gater
        .send(json!({"type": "gate.result", "callId": check["callId"], "decision": "deny", "reason": "mine"}))
        .await;
    let d = decided(task).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("mine"), None)
    );
}

// ---------------------------------------------------------------- scope and validation

#[tokio::test]
async fn rules_apply_only_in_the_providers_session() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let _p = ruled(
        &gw,
        "g",
        &s1.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    )
    .await;
    let d = precheck(&host, &s1.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (
            PrecheckDecision::Deny,
            Some("Denied by a hook rule of provider 'g'.")
        )
    );
    let d = precheck(&host, &s2.id, "shell", json!({})).await;
    assert_eq!(
        (d.decision, d.reason, d.context),
        (PrecheckDecision::Allow, None, None)
    );
}

#[tokio::test]
async fn rules_leave_with_the_binding() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let p = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    )
    .await;
    drop(p);
    wait_until("the provider is gone", || async {
        !provider_listed(&host, "g").await
    })
    .await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
}

#[tokio::test]
async fn an_invalid_rule_refuses_the_hello_naming_the_rule() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    let e = hello_refused(
        &mut p,
        hello(
            "g",
            &s.id,
            json!({"tools": [tool("t")], "hooks": {"onPreToolUse": [
            {"match": {"tool": "t"}, "action": "deny"},
            {"match": {"tool": "t"}, "action": "context"}]}}),
        ),
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("rule 1"), "{e}");
    assert!(
        session_tool_names(&host, &s.id).await.is_empty(),
        "a failed hello binds nothing"
    );
}

#[tokio::test]
async fn hooks_update_replaces_the_rules_and_a_failed_one_keeps_the_old_rules() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = ruled(
        &gw,
        "g",
        &s.id,
        json!([]),
        json!([{"match": {"tool": "shell"}, "action": "deny"}]),
    )
    .await;
    p.send(json!({"type": "hooks.update", "requestId": "bad",
                  "onPreToolUse": [{"match": {"tool": "edit", "args": "("}, "action": "deny"}]}))
        .await;
    p.expect_error("INVALID_JSON").await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
    p.send(json!({"type": "hooks.update", "requestId": "good",
                  "onPreToolUse": [{"match": {"tool": "edit"}, "action": "deny"}]}))
        .await;
    p.expect("ack").await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    assert_eq!(
        precheck(&host, &s.id, "edit", json!({})).await.decision,
        PrecheckDecision::Deny
    );
}

#[tokio::test]
async fn tool_invoke_does_not_consult_the_rules_the_host_asks_first() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = ruled(
        &gw,
        "g",
        &s.id,
        json!([tool("t")]),
        json!([{"match": {"tool": "t"}, "action": "deny", "reason": "no"}]),
    )
    .await;
    let d = precheck(&host, &s.id, "t", json!({})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref(), d.context.as_deref()),
        (PrecheckDecision::Deny, Some("no"), None)
    );
    let r = call_and_answer(&host, &mut p, &s.id, "t", json!("ran")).await;
    assert_eq!(r.data, Some(json!("ran")));
}

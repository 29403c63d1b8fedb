//! Spec section "Regex execution safety" (Protocol rules): `match.args` patterns cannot
//! run away (the 1 ms timeout), args are stringified as `JSON.stringify(args)`, and
//! `filter.set` uses the same engine. Spec decisions H1–H3 and S5: the `regex` crate is
//! linear-time by construction; patterns are at most 4 KiB and 1 MiB compiled; object keys
//! are sorted before matching; look-around and back-references are refused.

use crate::common::*;

async fn hooked(gw: &TestGateway, session: &str, pattern: &str) -> Provider {
    bind(
        gw,
        "guard",
        session,
        json!({"hooks": {"onPreToolUse": [
            {"match": {"tool": "shell", "args": pattern}, "action": "deny", "reason": "matched"}]}}),
    )
    .await
    .0
}

async fn refused_pattern(gw: &TestGateway, session: &str, pattern: &str) {
    let (mut p, _) = authed(gw).await;
    let e = hello_refused(
        &mut p,
        hello(
            "guard",
            session,
            json!({"hooks": {"onPreToolUse": [
            {"match": {"args": pattern}, "action": "deny"}]}}),
        ),
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("rule 0"), "{e}");
}

#[tokio::test]
async fn a_catastrophic_backtracking_pattern_answers_at_once() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(&gw, &s.id, "(a+)+b").await;
    // Exponential for a backtracking engine; linear here.
    let args = json!({"command": "a".repeat(10_000)});
    assert_eq!(
        precheck(&host, &s.id, "shell", args).await.decision,
        PrecheckDecision::Allow
    );
    let args = json!({"command": format!("{}b", "a".repeat(10_000))});
    assert_eq!(
        precheck(&host, &s.id, "shell", args).await.decision,
        PrecheckDecision::Deny
    );
}

#[tokio::test]
async fn args_are_matched_as_compact_json() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(&gw, &s.id, r#"^\{"command":"git push"#).await;
    let d = precheck(
        &host,
        &s.id,
        "shell",
        json!({"command": "git push origin main"}),
    )
    .await;
    assert_eq!(d.decision, PrecheckDecision::Deny);
    let d = precheck(&host, &s.id, "shell", json!({"command": "git pull"})).await;
    assert_eq!(d.decision, PrecheckDecision::Allow);
}

#[tokio::test]
async fn args_json_has_no_whitespace_and_escapes_like_json_stringify() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(&gw, &s.id, r#"\{"command":"echo \\"hi\\"","n":\[1,2\]\}"#).await;
    let d = precheck(
        &host,
        &s.id,
        "shell",
        json!({"command": "echo \"hi\"", "n": [1, 2]}),
    )
    .await;
    assert_eq!(d.decision, PrecheckDecision::Deny, "{d:?}");
}

#[tokio::test]
async fn object_keys_are_matched_in_the_order_sent() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = hooked(&gw, &s.id, r#"\{"b":2,"a":1\}"#).await;
    // Sent as {"b":2,"a":1} on the wire: matched as JSON.stringify writes it (decision H1).
    let mut raw = raw_host(&gw).await;
    raw.send_raw(format!(
        r#"{{"type":"tool.precheck","requestId":"pre","sessionId":"{}","tool":"shell","args":{{"b":2,"a":1}}}}"#,
        s.id
    ))
    .await;
    let d = expect_skipping(&mut raw, "tool.decision", &["session.tools"]).await;
    assert_eq!(d["decision"], "deny", "{d}");
    drop(host);
}

#[tokio::test]
async fn a_pattern_over_4_kib_is_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    refused_pattern(&gw, &s.id, &"a".repeat(4 * 1024 + 1)).await;
}

#[tokio::test]
async fn a_pattern_compiling_past_the_size_limit_is_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    refused_pattern(&gw, &s.id, r"\w{1000}\w{1000}\w{1000}").await;
}

#[tokio::test]
async fn look_around_and_back_references_are_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    refused_pattern(&gw, &s.id, "push(?=origin)").await;
    refused_pattern(&gw, &s.id, r"(a)\1").await;
}

#[tokio::test]
async fn filter_set_uses_the_same_engine_and_limits() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for (id, pattern) in [
        ("long", "a".repeat(4 * 1024 + 1)),
        ("bad", "(".to_string()),
        ("look", "x(?=y)".to_string()),
    ] {
        p.send(json!({"type": "filter.set", "requestId": id, "stream": "s",
                      "rules": [{"match": pattern, "outcome": "drop"}]}))
            .await;
        let e = p.expect_error("INVALID_JSON").await;
        assert_eq!(e["requestId"], id, "{e}");
    }
    p.send(
        json!({"type": "filter.set", "requestId": "ok", "stream": "s",
                  "rules": [{"match": "(a+)+b", "outcome": "drop"}]}),
    )
    .await;
    p.expect("ack").await;
    p.send(json!({"type": "push", "stream": "s", "level": "keep", "event": "a".repeat(10_000)}))
        .await;
    p.send(json!({"type": "push", "stream": "s", "level": "keep", "event": format!("{}b", "a".repeat(10_000))}))
        .await;
    fence(&mut p).await;
    assert_eq!(stored(&host, &s.id, "s@p").await, ["a".repeat(10_000)]);
}

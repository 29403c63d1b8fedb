//! Patterns whose compiling would cost seconds are refused before they are compiled, in
//! every place a peer hands the gateway a regex: a provider's hook rules (at `hello` and in
//! `hooks.update`), a stream's `filter.set`, and an emitter's `eventFilter`. Under
//! case-insensitivity each bracketed class is folded codepoint by codepoint: 4 KiB of
//! `[\S]` took 7.6 s of one runtime thread in a release build (docs/reliability.md).

use serde_json::{json, Value};
use tap_testkit::*;

/// Within the 4 KiB pattern bound, and about 7 s to compile case-insensitively.
fn costly(prefix: &str) -> String {
    format!("{prefix}{}", r"[\S]".repeat(1000))
}

fn assert_refused(e: &Value, list: &str) {
    let m = e["message"].as_str().unwrap_or_default();
    assert!(m.starts_with(list), "{e}");
    assert!(m.contains("would case-fold more than"), "{e}");
}

#[tokio::test]
async fn hook_rules_that_would_cost_seconds_to_compile_are_refused_and_others_still_bind() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    // The first rule has no pattern: the error still names the costly one by its index.
    let rules = json!([{"match": {"tool": "x"}, "action": "deny"},
                       {"match": {"args": costly("(?i)")}, "action": "deny"}]);
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": s.id,
               "hooks": {"onPreToolUse": rules}}),
    )
    .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_refused(&e, "the onPreToolUse rules' patterns");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("counting up to rule 1"),
        "{e}"
    );

    // The gateway goes on: the same classes without case-insensitivity fold nothing.
    let plain = json!([{"match": {"args": r"[\S]{20} push"}, "action": "deny"}]);
    let mut p = gw.authed().await.0;
    p.send(
        json!({"type": "hello", "name": "q", "protocolVersion": 2, "session": s.id,
               "hooks": {"onPreToolUse": plain}}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;

    // A bound provider's update is refused the same way, and its rules stay.
    p.send(json!({"type": "hooks.update", "requestId": "u1", "onPreToolUse": rules}))
        .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["requestId"], "u1", "{e}");
    assert_refused(&e, "the onPreToolUse rules' patterns");
}

#[tokio::test]
async fn a_stream_filter_that_would_cost_seconds_to_compile_is_refused() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f1", "stream": "s",
                  "rules": [{"match": costly("(?i)"), "outcome": "drop"}]}),
    )
    .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["requestId"], "f1", "{e}");
    assert_refused(&e, "the filter's patterns");
    // The connection goes on: a cheap filter is taken.
    p.send(
        json!({"type": "filter.set", "requestId": "f2", "stream": "s",
                  "rules": [{"match": "(?i)[^\\s]+ failed", "outcome": "drop"}]}),
    )
    .await;
    assert_eq!(p.expect("ack").await["requestId"], "f2");
}

#[tokio::test]
async fn an_emitter_filter_past_the_case_fold_bound_starts_nothing() {
    let gw = TestGateway::for_emitters().await;
    let (host, s) = gw.host_with_session().await;
    let start = |name: &str, rules: Value| {
        invoke(
            &host,
            &s.id,
            "tap_start_emitter",
            json!({"name": name, "command": "true", "eventFilter": rules}),
        )
    };
    // Emitter filters are case-insensitive: no `(?i)` needed.
    let r = result_of(start(
        "costly",
        json!([{"match": costly(""), "outcome": "keep"}]),
    ))
    .await;
    let error = r.error.clone().unwrap_or_default();
    assert!(
        error.contains("the eventFilter's patterns would case-fold more than"),
        "{r:?}"
    );
    // The bound is the filter's, not a rule's: four short rules of a whole-Unicode class
    // are past it, and the message says where counting ran out.
    let rules: Vec<Value> = (0..4)
        .map(|_| json!({"match": r"x[\s\S]*y", "outcome": "keep"}))
        .collect();
    let r = result_of(start("four", json!(rules))).await;
    let error = r.error.clone().unwrap_or_default();
    assert!(error.contains("counting up to rule 3"), "{r:?}");
    let r = result_of(start(
        "cheap",
        json!([{"match": "(?s:x.*y)", "outcome": "keep"}]),
    ))
    .await;
    assert!(r.error.is_none(), "{r:?}");
}

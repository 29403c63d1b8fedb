//! The tap-monitor skill (`skills/tap-monitor/SKILL.md`) followed as it is written, by an
//! agent that is this test over a real session host: the skill's own watcher definition
//! (its event filter unchanged, a real command in place of `cargo watch`) on the session's
//! workspace, the review prompt emitter's prompt reaching the session, the REVIEW RECORD the
//! agent then posts kept in the history database, and the skill's `tap_audit_claims`
//! example finding it. If the skill's examples stop working as it says, this fails.

use serde_json::{json, Value};
use tap_protocol::host::SessionRegister;
use tap_protocol::provider::PushLevel;
use tap_testkit::*;

const SKILL: &str = include_str!("../../../../skills/tap-monitor/SKILL.md");

/// The skill's JSON examples, in the order it gives them.
fn examples() -> Vec<Value> {
    SKILL
        .split("```json\n")
        .skip(1)
        .map(|block| {
            let json = block.split("```").next().expect("a closed block");
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
        })
        .collect()
}

#[tokio::test]
async fn the_monitor_skill_as_written_watches_reviews_and_keeps_a_review_record() {
    let gw = TestGateway::for_emitters().await;
    let workspace = tempfile::tempdir().unwrap();
    let mut host = gw.host().await;
    let s = host
        .register_session(SessionRegister {
            label: Some("monitor".into()),
            cwd: Some(workspace.path().display().to_string()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let examples = examples();
    assert_eq!(examples.len(), 2, "the watcher and the review prompt");

    // 1. The watcher, as the skill gives it, on a test run's real output.
    let mut watcher = examples[0].clone();
    watcher["command"] = json!(
        "printf '   Compiling tap v0.1.0\\n     Running unittests src/lib.rs\\ntest parser::reads_empty ... ok\\ntest result: FAILED. 2 passed; 1 failed\\n'"
    );
    call_ok(&host, &s.id, "tap_start_emitter", watcher).await;
    let failed = next_delivery(&mut host).await;
    assert_eq!(failed.stream, "tests", "{failed:?}");
    assert_eq!(failed.level, PushLevel::Inject, "{failed:?}");
    assert_eq!(failed.event, "test result: FAILED. 2 passed; 1 failed");

    // 2. The review prompt emitter: its first run is at once; its prompt reaches the session.
    call_ok(&host, &s.id, "tap_start_emitter", examples[1].clone()).await;
    let review = next_delivery(&mut host).await;
    let prompt = review.prompt.clone().unwrap_or(review.event.clone());
    assert!(prompt.contains("REVIEW RECORD"), "{review:?}");

    // 3. The agent does what the prompt says: reads the stream (cargo's `Compiling` and
    // `Running` lines dropped by the filter, a line no rule matches kept; newest first),
    // then posts one record in the skill's format.
    let history = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "tests"}),
    )
    .await;
    let events: Vec<String> = history["streams"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap().clone())
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        events,
        [
            "test result: FAILED. 2 passed; 1 failed",
            "test parser::reads_empty ... ok"
        ],
        "newest first: {history}"
    );
    let record = format!(
        "REVIEW RECORD\nstream: tests\nwindow: first .. last\nstatus: failing\nevents: {}\n\
         findings:\n- \"{}\"\nactions:\n- fix the failing test",
        events.len(),
        events[0]
    );
    call_ok(
        &host,
        &s.id,
        "tap_post",
        json!({"channel": "reviews", "message": record}),
    )
    .await;

    // 4. Kept in the history database, and found by the skill's own audit example.
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let page = c
        .ok(
            "events.list",
            json!({"sessionId": s.id, "stream": "reviews@emitters"}),
        )
        .await;
    assert_eq!(page["events"][0]["text"], record, "{page}");
    let audit = call_ok(
        &host,
        &s.id,
        "tap_audit_claims",
        json!({"claims": [
            {"claim": "the tests are failing", "evidence": [
                {"kind": "stream", "stream": "reviews", "pattern": "status: failing"}]},
            {"claim": "the tests pass", "evidence": [
                {"kind": "stream", "stream": "reviews", "pattern": "status: ok"}]}
        ]}),
    )
    .await;
    assert_eq!(audit["claims"][0]["status"], "verified", "{audit}");
    assert_ne!(audit["claims"][1]["status"], "verified", "{audit}");

    // 5. Both stop as the skill tells the user.
    for name in ["tests", "tests-review"] {
        call_ok(&host, &s.id, "tap_stop_emitter", json!({"name": name})).await;
    }
}

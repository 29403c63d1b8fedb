//! `tap prompt --session ID [--section NAME=TEXT]… TEXT`: the session's transforms and
//! contexts applied as a session host would on prompt submission, printed as JSON, through
//! the real binary against a real `tap gateway` child and scripted providers.

use crate::common;
use crate::common::{run, GatewayProcess, Provider, SessionOpen};
use serde_json::{json, Value};

/// A provider bound to `session` with `extra` merged into its `hello`.
async fn bound_with(gw: &GatewayProcess, name: &str, session: &str, extra: Value) -> Provider {
    let (mut p, _) = gw.authed().await;
    let mut hello = json!({"type": "hello", "name": name, "protocolVersion": 2,
                           "session": session});
    for (k, v) in extra.as_object().unwrap() {
        hello[k] = v.clone();
    }
    p.send(hello).await;
    p.expect_next("hello.ack").await;
    p
}

fn assert_failure(out: &common::CliOut, code: &str) {
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], code, "{out:?}");
    assert!(
        !v["error"].as_str().unwrap_or_default().is_empty(),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_prints_transformed_sections_and_context() {
    let gw = GatewayProcess::start().await;
    let mut session = SessionOpen::open(&gw, &["--label", "p"]).await;
    let _ci = bound_with(
        &gw,
        "ci",
        &session.id,
        json!({
            "context": "CI is passing.",
            "startup_context": "ci loaded",
            "hooks": {"transforms": {
                "custom_instructions": {"action": "append", "content": "Use pnpm."},
                "safety": {"action": "append", "content": "Never push to main."},
            }},
        }),
    )
    .await;
    let mut live = bound_with(
        &gw,
        "live",
        &session.id,
        json!({"context": "2 deploys running.",
               "hooks": {"transforms": {"rules": {"action": "callback"}}}}),
    )
    .await;
    // The session host (`tap session open`) got the startup context once.
    let line = session
        .wait_for("session.context", |v| v["type"] == "session.context")
        .await;
    assert_eq!(
        line,
        json!({"type": "session.context", "sessionId": session.id,
               "provider": "ci", "startupContext": "ci loaded"})
    );

    let mut cmd = gw.tap();
    cmd.args([
        "prompt",
        "--session",
        &session.id,
        "--section",
        "custom_instructions=Write tests.",
        "--section",
        "rules=a=b",
        "--section",
        "safety=Be safe.",
        "--section",
        "other=",
        "fix the bug",
    ]);
    let prompt = tokio::spawn(run(cmd));
    let req = live.expect_next("transform.request").await;
    assert_eq!(req["sessionId"], session.id.as_str());
    assert_eq!(req["section"], "rules");
    assert_eq!(req["current"], "a=b");
    live.send(json!({"type": "transform.result", "callId": req["callId"],
                     "content": "a=b (live)"}))
        .await;
    let out = prompt.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(
        out.json(),
        json!({
            "prompt": "fix the bug",
            "sections": {
                "custom_instructions": "Write tests.\nUse pnpm.",
                "rules": "a=b (live)",
                "safety": "Be safe.\nNever push to main.",
                "other": "",
            },
            "context": ["CI is passing.", "2 deploys running."],
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_failures_print_the_error_shape() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;

    let out = gw
        .run(&["prompt", "--session", "no-such-session", "hi"])
        .await;
    assert_failure(&out, "INVALID_SESSION");

    let out = gw
        .run(&[
            "prompt",
            "--session",
            &session.id,
            "--section",
            "noequals",
            "hi",
        ])
        .await;
    assert_failure(&out, "INVALID_JSON");

    let out = gw
        .run(&["prompt", "--session", &session.id, "--section", "=x", "hi"])
        .await;
    assert_failure(&out, "INVALID_JSON");

    // Without sections or providers: the prompt back, nothing else.
    let out = gw.run(&["prompt", "--session", &session.id, "hi"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(
        out.json(),
        json!({"prompt": "hi", "sections": {}, "context": []})
    );
}

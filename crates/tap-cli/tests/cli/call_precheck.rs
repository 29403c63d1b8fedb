//! `tap call` asks for the pre-tool-use decision before invoking, as any session host
//! does: a deny is `{"errorCode":"DENIED","error":REASON}` and exit 1 with no invocation;
//! added context is printed on stderr and the tool is invoked. Real `tap gateway` child,
//! real `tap` binary, scripted providers on real sockets.

use crate::common;
use crate::common::{run, tool, GatewayProcess, Provider, SessionOpen};
use serde_json::{json, Value};

/// A provider bound to `session` with `tools` and `onPreToolUse` `rules`.
async fn hooked(
    gw: &GatewayProcess,
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
    let ack = p.expect_next("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    p
}

fn call(gw: &GatewayProcess, session: &str, tool: &str, args: &str) -> tokio::process::Command {
    let mut cmd = gw.tap();
    cmd.args(["call", "--session", session, tool, args]);
    cmd
}

fn assert_denied(out: &common::CliOut, reason: &str) {
    assert_eq!(out.code(), Some(1), "{out:?}");
    // Exactly this line, keys in the documented order.
    let want = format!(
        "{{\"errorCode\":\"DENIED\",\"error\":{}}}",
        serde_json::to_string(reason).unwrap()
    );
    assert_eq!(out.stdout.trim(), want, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_prints_denied_and_never_reaches_the_provider() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = hooked(
        &gw,
        "git",
        &session.id,
        json!([tool("shell")]),
        json!([{"match": {"tool": "shell", "args": "git push"}, "action": "deny",
                "reason": "Pushing is blocked: CI is red."}]),
    )
    .await;
    gw.wait_for_tool(&session.id, "shell").await;

    let out = run(call(
        &gw,
        &session.id,
        "shell",
        r#"{"command":"git push origin"}"#,
    ))
    .await;
    assert_denied(&out, "Pushing is blocked: CI is red.");

    // An allowed call goes through; it is the first call the provider ever sees.
    let caller = tokio::spawn(run(call(&gw, &session.id, "shell", r#"{"command":"ls"}"#)));
    let c = p.expect_next("tool.call").await;
    assert_eq!(c["args"], json!({"command": "ls"}));
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "ok"}))
        .await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_context_goes_to_stderr_and_the_tool_runs() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = hooked(
        &gw,
        "db",
        &session.id,
        json!([tool("edit")]),
        json!([{"match": {"tool": "edit"}, "action": "context",
                "content": "This is a migration file."}]),
    )
    .await;
    gw.wait_for_tool(&session.id, "edit").await;

    let caller = tokio::spawn(run(call(&gw, &session.id, "edit", r#"{"path":"1.sql"}"#)));
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": {"edited": true}}))
        .await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!({"edited": true}));
    assert!(out.stderr.contains("This is a migration file."), "{out:?}");
    assert!(!out.stdout.contains("migration"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_decides_for_tap_call() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = hooked(
        &gw,
        "ci",
        &session.id,
        json!([tool("deploy")]),
        json!([{"match": {"tool": "deploy"}, "action": "gate", "gateId": "ci-green"}]),
    )
    .await;
    gw.wait_for_tool(&session.id, "deploy").await;

    let caller = tokio::spawn(run(call(&gw, &session.id, "deploy", "{}")));
    let check = p.expect_next("gate.check").await;
    assert_eq!(check["gateId"], "ci-green");
    assert_eq!(check["tool"], "deploy");
    p.send(
        json!({"type": "gate.result", "callId": check["callId"], "decision": "deny",
                  "reason": "CI is failing."}),
    )
    .await;
    assert_denied(&caller.await.unwrap(), "CI is failing.");

    let caller = tokio::spawn(run(call(&gw, &session.id, "deploy", "{}")));
    let check = p.expect_next("gate.check").await;
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "deployed"}))
        .await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("deployed"));
}

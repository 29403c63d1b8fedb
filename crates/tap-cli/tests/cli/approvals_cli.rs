//! `tap approvals` answering a call that waits for the user (issue 39): a real `tap call`
//! of a tool annotated `destructiveHint: true` waits; `tap status` and `tap approvals list`
//! say how to answer; `tap approvals approve ID --for session` lets it through and the next
//! call of that session runs unasked. Real `tap gateway` child, real `tap` binary, a
//! scripted provider on a real socket.

use crate::common::{eventually, run, GatewayProcess, SessionOpen};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_approvals_approve_answers_a_waiting_tap_call() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let rm = json!({"name": "rm", "description": "removes",
                    "parameters": {"type": "object", "properties": {}},
                    "annotations": {"destructiveHint": true}});
    let mut p = gw.bound("files", &session.id, json!([rm])).await;
    gw.wait_for_tool(&session.id, "rm").await;

    let mut call = gw.tap();
    call.args(["call", "--session", &session.id, "rm", "{}"]);
    let caller = tokio::spawn(run(call));
    let waiting: Value = eventually("a waiting call", || async {
        let out = gw.run(&["approvals", "list", "--json"]).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        let list = out.json();
        list["waiting"].get(0).cloned()
    })
    .await;
    let id = waiting["id"].as_str().unwrap().to_string();
    assert_eq!(waiting["tool"], "rm");
    let status = gw.run(&["status"]).await;
    assert!(status.stdout.contains(&id), "{status:?}");
    assert!(
        status.stdout.contains("tap approvals approve ID"),
        "{status:?}"
    );
    let table = gw.run(&["approvals", "list"]).await;
    assert!(
        table.stdout.contains(&id) && table.stdout.contains("files"),
        "{table:?}"
    );

    let out = gw
        .run(&["approvals", "approve", &id, "--for", "session"])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("remembered it as grant"), "{out:?}");
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "gone"}))
        .await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("gone"));
    // Answering again: an error naming why.
    let again = gw.run(&["approvals", "approve", &id]).await;
    assert_ne!(again.code(), Some(0), "{again:?}");
    assert!(again.stdout.contains("answered, timed out"), "{again:?}");

    // The session's next call is not asked.
    let mut call = gw.tap();
    call.args(["call", "--session", &session.id, "rm", "{}"]);
    let caller = tokio::spawn(run(call));
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "again"}))
        .await;
    assert_eq!(caller.await.unwrap().json(), json!("again"));

    let grants = gw.run(&["approvals", "grants", "--json"]).await;
    let grant = grants.json()["grants"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = gw.run(&["approvals", "revoke", &grant]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    // Bad input is refused before anything is sent.
    let out = gw
        .run(&["approvals", "approve", "a-1", "--for", "soon"])
        .await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    let out = gw
        .run(&["policy", "set", "ask-all", "--action", "ask", "--tool", "*"])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let out = gw.run(&["policy", "list", "--json"]).await;
    assert_eq!(out.json()["rules"][0]["id"], "ask-all");
    let out = gw.run(&["policy", "remove", "ask-all"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
}

/// A real MCP client (PyPI `mcp`) launching `tap mcp`, as Claude Code would: its call of a
/// destructive tool waits, its progress names the approval id, `tap approvals approve ID`
/// lets it through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_approvals_approve_answers_a_waiting_call_made_through_tap_mcp() {
    use std::path::Path;
    use tap_testkit::McpClient;
    let gw = GatewayProcess::start().await;
    let (mut c, _) = McpClient::python_stdio(
        Path::new(crate::common::tap_bin()),
        &gw.home,
        "agent",
        "legacy",
        gw.log_dir(),
    )
    .await;
    c.tool_names().await; // names the session
    let session: String = eventually("session agent", || async {
        let status = gw.status().await;
        status["sessions"]
            .as_array()?
            .iter()
            .find(|s| s["label"] == "agent")
            .map(|s| s["id"].as_str().unwrap().to_string())
    })
    .await;
    let rm = json!({"name": "rm", "description": "removes",
                    "parameters": {"type": "object", "properties": {}},
                    "annotations": {"destructiveHint": true}});
    let mut p = gw.bound("files", &session, json!([rm])).await;
    gw.wait_for_tool(&session, "rm").await;
    c.start_call("r", "rm", json!({}), true).await;
    let progress = c.expect("progress").await;
    let message = progress["message"].as_str().unwrap().to_string();
    let id = message
        .split("tap approvals approve ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no approval id in {message}"))
        .to_string();
    // The prompt names the session as `tap mcp --session agent` named it.
    let list = gw.run(&["approvals", "list", "--json"]).await.json();
    let waiting = &list["waiting"][0];
    assert_eq!(waiting["id"], id.as_str(), "{list}");
    assert_eq!(waiting["sessionLabel"], "agent", "{list}");
    let out = gw.run(&["approvals", "approve", &id]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let call = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "removed"}))
        .await;
    assert_eq!(c.outcome("r").await["content"][0]["text"], "removed");
}

/// `policy.json` edited by hand applies without a restart: the gateway follows the file, so
/// a rule written into it denies the next call of a tool that went through before; a broken
/// edit asks every call, saying why in the log, the waiting call and `tap status`; the
/// fixed file applies again. Nothing reads the file on the test's behalf (no `tap policy
/// list`, which reads it too): the log line is the gateway's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_edit_of_policy_json_applies_without_a_restart() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let read = json!({"name": "read", "description": "reads",
                      "parameters": {"type": "object", "properties": {}}});
    let mut p = gw.bound("files", &session.id, json!([read])).await;
    gw.wait_for_tool(&session.id, "read").await;
    let call = || {
        let mut c = gw.tap();
        c.args(["call", "--session", &session.id, "read", "{}"]);
        tokio::spawn(run(c))
    };
    let applied = |n: usize| {
        let log = gw.proc.log();
        (log.matches("policy.json changed").count() >= n).then_some(log)
    };

    // No file: a plain tool is allowed.
    let caller = call();
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "first"}))
        .await;
    assert_eq!(caller.await.unwrap().json(), json!("first"));

    // A deny rule written by hand: read by the gateway, the next call is denied and never
    // reaches the provider.
    let path = gw.home.join("policy.json");
    std::fs::write(
        &path,
        r#"{"rules": [{"id": "no-read", "action": "deny", "reason": "reading is off", "match": {"tool": "read"}}]}"#,
    )
    .unwrap();
    let log = eventually("the edit read", || async { applied(1) }).await;
    assert!(log.contains("its rules apply now"), "{log}");
    let out = call().await.unwrap();
    assert_ne!(out.code(), Some(0), "{out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("DENIED") && said.contains("no-read"),
        "{out:?}"
    );

    // A broken edit: every call is asked (fail closed, as at start), and why is said.
    std::fs::write(&path, r#"{"rules": [{"id": "no-read", "action": "nope"}]}"#).unwrap();
    let log = eventually("the broken edit read", || async { applied(2) }).await;
    assert!(log.contains("cannot be used"), "{log}");
    let caller = call();
    let waiting: Value = eventually("the call asked", || async {
        let list = gw.run(&["approvals", "list", "--json"]).await.json();
        list["waiting"].get(0).cloned()
    })
    .await;
    assert_eq!(waiting["why"], "policy.json cannot be used", "{waiting}");
    let status = gw.run(&["status"]).await;
    assert!(
        status.stdout.contains("Policy: policy.json cannot be used")
            && status.stdout.contains("rule 0 ('no-read')"),
        "{status:?}"
    );
    let id = waiting["id"].as_str().unwrap();
    assert_eq!(gw.run(&["approvals", "deny", id]).await.code(), Some(0));
    assert_ne!(caller.await.unwrap().code(), Some(0));

    // Fixed (here: removed), the defaults apply again: the call reaches the provider.
    std::fs::remove_file(&path).unwrap();
    eventually("the removal read", || async { applied(3) }).await;
    let caller = call();
    let c = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "again"}))
        .await;
    assert_eq!(caller.await.unwrap().json(), json!("again"));
    let status = gw.run(&["status"]).await;
    assert!(!status.stdout.contains("Policy:"), "{status:?}");
}

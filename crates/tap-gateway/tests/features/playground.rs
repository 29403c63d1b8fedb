//! The panel's tool playground over the control plane (`playground.*`): a session held by
//! the control connection, its tools with their schemas, calls through the session host's
//! call path (progress, provider errors, hook denies, cancel), and the release of the
//! session when the connection closes. (A foreign `Origin` never gets a control socket at
//! all: `control_plane::a_web_page_on_another_origin_gets_403_before_any_websocket`.)

use serde_json::{json, Value};
use std::time::Duration;
use tap_testkit::{eventually, tool, Control, Provider, TestGateway};

/// A tool whose schema has a string, an integer, a boolean and an enum.
fn deploy_tool() -> Value {
    json!({"name": "deploy", "description": "Deploys a service",
           "parameters": {"type": "object", "required": ["service"], "properties": {
               "service": {"type": "string"},
               "replicas": {"type": "integer", "minimum": 1},
               "dryRun": {"type": "boolean"},
               "region": {"type": "string", "enum": ["eu", "us"]}}}})
}

/// An authenticated control client holding the playground session `name`, and its id.
async fn opened(gw: &TestGateway, name: &str) -> (Control, String) {
    let (mut c, _) = Control::authed(gw).await;
    let s = c
        .ok("playground.open", json!({"name": name, "cwd": "/tmp"}))
        .await;
    assert_eq!(s["name"], name, "{s}");
    let id = s["sessionId"].as_str().expect("sessionId").to_string();
    (c, id)
}

/// Sends `playground.call` without waiting; the request id is `req`.
async fn start_call(c: &mut Control, req: &str, session: &str, tool: &str, args: Value) {
    c.send(
        json!({"type": "request", "id": req, "method": "playground.call",
                  "params": {"callId": req, "sessionId": session, "tool": tool, "args": args}}),
    )
    .await;
}

fn session_exists(gw: &TestGateway, id: &str) -> bool {
    gw.handle
        .gateway()
        .status()
        .sessions
        .iter()
        .any(|s| s.id == id)
}

#[tokio::test]
async fn an_opened_session_lists_its_tools_with_their_schemas() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let listed = gw.handle.gateway().status().sessions;
    let s = listed.iter().find(|s| s.id == session).expect("registered");
    assert_eq!(s.label.as_deref(), Some("manual"));
    assert_eq!(s.cwd.as_deref(), Some("/tmp"));

    let _p = gw.bound("ops", &session, json!([deploy_tool()])).await;
    let r = c
        .ok("playground.tools", json!({"sessionId": session}))
        .await;
    assert_eq!(r["sessionId"], session.as_str());
    // The provider's tool, and the gateway's built-in ones the user may try too.
    let all = r["tools"].as_array().unwrap();
    assert!(
        all.iter()
            .any(|t| t["name"] == "tap_post" && t["provider"] == "tap"),
        "{r}"
    );
    let tools: Vec<&serde_json::Value> = all.iter().filter(|t| t["provider"] != "tap").collect();
    assert_eq!(tools.len(), 1, "{r}");
    assert_eq!(tools[0]["name"], "deploy");
    assert_eq!(tools[0]["description"], "Deploys a service");
    assert_eq!(tools[0]["provider"], "ops");
    assert_eq!(tools[0]["parameters"], deploy_tool()["parameters"]);
    assert!(tools[0]["timeoutMs"].as_u64().unwrap() > 0, "{r}");
}

#[tokio::test]
async fn a_call_sends_its_progress_then_answers_with_result_and_duration() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([deploy_tool()])).await;
    let args = json!({"service": "api", "replicas": 2, "dryRun": true, "region": "eu"});
    start_call(&mut c, "c1", &session, "deploy", args.clone()).await;
    let call = p.expect_next("tool.call").await;
    assert_eq!(call["args"], args);
    assert_eq!(call["sessionId"], session.as_str());

    // The connection keeps answering while the call runs.
    let status = c.ok("status", json!({})).await;
    assert!(
        status["sessions"].as_array().unwrap().len() == 1,
        "{status}"
    );

    for message in ["building", "rolling out"] {
        p.send(json!({"type": "tool.progress", "id": call["id"], "message": message}))
            .await;
    }
    p.send(json!({"type": "tool.result", "id": call["id"], "data": {"deployed": "api"}}))
        .await;
    let r = c.response("c1").await;
    let progress: Vec<Value> = c
        .events
        .drain(..)
        .map(|e| e["event"].clone())
        .filter(|e| e["kind"] == "playground.progress")
        .collect();
    assert_eq!(
        progress,
        [
            json!({"kind": "playground.progress", "callId": "c1", "message": "building"}),
            json!({"kind": "playground.progress", "callId": "c1", "message": "rolling out"}),
        ]
    );
    let result = &r["result"];
    assert_eq!(result["callId"], "c1", "{r}");
    assert_eq!(result["data"], json!({"deployed": "api"}), "{r}");
    assert!(result.get("error").is_none(), "{r}");
    assert!(result["durationMs"].is_u64(), "{r}");
}

#[tokio::test]
async fn a_provider_error_is_the_calls_error_code_and_message() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([deploy_tool()])).await;
    start_call(&mut c, "c1", &session, "deploy", json!({"service": "api"})).await;
    let call = p.expect_next("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"],
                  "error": "quota exceeded", "errorCode": "QUOTA"}))
        .await;
    let r = c.response("c1").await;
    assert_eq!(
        r["result"]["error"],
        json!({"code": "QUOTA", "message": "quota exceeded"}),
        "{r}"
    );
    assert!(r["result"].get("data").is_none(), "{r}");
}

#[tokio::test]
async fn arguments_that_break_the_schema_never_reach_the_provider() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([deploy_tool()])).await;
    let r = c
        .ok(
            "playground.call",
            json!({"callId": "bad", "sessionId": session, "tool": "deploy",
                   "args": {"service": "api", "replicas": 0}}),
        )
        .await;
    assert_eq!(r["error"]["code"], "INVALID_JSON", "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("replicas"),
        "{r}"
    );
    // The session went busy and idle around the call; no `tool.call` came.
    let seen = tap_testkit::until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
}

#[tokio::test]
async fn a_hook_rule_deny_is_denied_with_its_reason() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let (mut p, _) = gw
        .bind(
            "git",
            &session,
            json!({"tools": [tool("shell")], "hooks": {"onPreToolUse": [
                {"match": {"tool": "shell", "args": "push"}, "action": "deny",
                 "reason": "CI is red."},
                {"match": {"tool": "shell"}, "action": "context", "content": "Run from the repo root."}
            ]}}),
        )
        .await;
    let r = c
        .ok(
            "playground.call",
            json!({"callId": "d", "sessionId": session, "tool": "shell",
                   "args": {"command": "git push"}}),
        )
        .await;
    assert_eq!(
        r["error"],
        json!({"code": "DENIED", "message": "A hook rule denied 'shell': CI is red."}),
        "{r}"
    );

    start_call(&mut c, "ok", &session, "shell", json!({"command": "ls"})).await;
    // The denied call never reached the provider: this is the first it sees.
    let call = p.expect_next("tool.call").await;
    assert_eq!(call["args"], json!({"command": "ls"}));
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "a b"}))
        .await;
    let r = c.response("ok").await;
    assert_eq!(r["result"]["data"], "a b", "{r}");
    assert_eq!(r["result"]["context"], "Run from the repo root.", "{r}");
}

#[tokio::test]
async fn cancel_sends_tool_cancel_and_the_call_ends_cancelled() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([tool("wait")])).await;
    start_call(&mut c, "w", &session, "wait", json!({})).await;
    let call = p.expect_next("tool.call").await;
    c.ok("playground.cancel", json!({"callId": "w"})).await;
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    let r = c.response("w").await;
    assert_eq!(r["result"]["error"]["code"], "CANCELLED", "{r}");
    // Done: nothing left to cancel.
    c.err("playground.cancel", json!({"callId": "w"}), "NOT_FOUND")
        .await;
}

#[tokio::test]
async fn bad_requests_are_refused_with_a_clear_error() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([tool("wait")])).await;
    let call = |s: &str, t: &str, args: Value, id: &str| json!({"callId": id, "sessionId": s, "tool": t, "args": args});
    let e = c
        .err(
            "playground.call",
            call("s-nope", "wait", json!({}), "a"),
            "INVALID_SESSION",
        )
        .await;
    assert_eq!(e["message"], "Session 's-nope' does not exist");
    let e = c
        .err(
            "playground.call",
            call(&session, "nope", json!({}), "a"),
            "NOT_FOUND",
        )
        .await;
    assert_eq!(
        e["message"],
        format!("Session '{session}' has no tool 'nope'")
    );
    let e = c
        .err(
            "playground.call",
            call(&session, "wait", json!([1]), "a"),
            "INVALID_JSON",
        )
        .await;
    assert_eq!(e["message"], "'args' must be a JSON object");
    c.err(
        "playground.call",
        call(&session, "wait", json!({}), ""),
        "INVALID_JSON",
    )
    .await;
    c.err(
        "playground.tools",
        json!({"sessionId": "s-nope"}),
        "INVALID_SESSION",
    )
    .await;
    c.err("playground.open", json!({"name": ""}), "INVALID_SESSION")
        .await;
    c.err(
        "playground.close",
        json!({"sessionId": "s-nope"}),
        "NOT_FOUND",
    )
    .await;

    // One callId in flight at a time.
    start_call(&mut c, "dup", &session, "wait", json!({})).await;
    let first = p.expect_next("tool.call").await;
    let e = c
        .err(
            "playground.call",
            call(&session, "wait", json!({}), "dup"),
            "INVALID_JSON",
        )
        .await;
    assert_eq!(e["message"], "callId 'dup' is already in flight");
    tap_testkit::answer(&mut p, &first, json!("done")).await;
    assert_eq!(c.response("dup").await["result"]["data"], "done");
}

#[tokio::test]
async fn closing_the_control_connection_releases_the_session_and_cancels_its_calls() {
    let gw = TestGateway::start_with(|c| {
        c.host_resume_grace = Duration::from_millis(200);
        // The provider below never answers `shutdown.pending`.
        c.shutdown_deadline = Duration::from_millis(200);
    })
    .await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([tool("wait")])).await;
    start_call(&mut c, "w", &session, "wait", json!({})).await;
    let call = p.expect_next("tool.call").await;
    drop(c);
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    // Idle once cancelled, then ending: the window passed with nobody holding it.
    let ending = loop {
        let l = p.expect_next("session.lifecycle").await;
        if l["state"] == "shutdown.pending" {
            break l;
        }
    };
    assert_eq!(ending["sessionId"], session.as_str(), "{ending}");
    eventually("the session is gone", || async {
        (!session_exists(&gw, &session)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn close_releases_an_opened_session_but_never_ends_a_joined_one() {
    let gw = TestGateway::start_with(|c| c.host_resume_grace = Duration::from_millis(200)).await;
    let (_host, live) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let joined = c.ok("playground.open", json!({"name": live.id})).await;
    assert_eq!(joined["sessionId"], live.id.as_str());
    assert_eq!(joined["owned"], false);
    let own = c.ok("playground.open", json!({"name": "mine"})).await;
    assert_eq!(own["owned"], true);
    let own = own["sessionId"].as_str().unwrap().to_string();

    c.ok("playground.close", json!({"sessionId": live.id}))
        .await;
    c.ok("playground.close", json!({"sessionId": own})).await;
    eventually("the playground's own session ended", || async {
        (!session_exists(&gw, &own)).then_some(())
    })
    .await;
    assert!(session_exists(&gw, &live.id), "a joined session was ended");
    // The connection is still fine.
    c.ok("status", json!({})).await;
}

#[tokio::test]
async fn a_second_connection_cannot_cancel_anothers_call() {
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p: Provider = gw.bound("ops", &session, json!([tool("wait")])).await;
    start_call(&mut c, "w", &session, "wait", json!({})).await;
    let call = p.expect_next("tool.call").await;
    let (mut other, _) = Control::authed(&gw).await;
    other
        .err("playground.cancel", json!({"callId": "w"}), "NOT_FOUND")
        .await;
    tap_testkit::answer(&mut p, &call, json!(1)).await;
    assert_eq!(c.response("w").await["result"]["data"], 1);
}

#[tokio::test]
async fn a_connection_holds_at_most_the_session_limit() {
    use tap_protocol::limits::MAX_PLAYGROUND_SESSIONS;
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    for i in 0..MAX_PLAYGROUND_SESSIONS {
        c.ok("playground.open", json!({"name": format!("s{i}")}))
            .await;
    }
    let e = c
        .err(
            "playground.open",
            json!({"name": "one-more"}),
            "RATE_LIMITED",
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("close one first"),
        "{e}"
    );
    // Opening a held one again is no new hold.
    c.ok("playground.open", json!({"name": "s0"})).await;
}

#[tokio::test]
async fn a_connection_has_at_most_the_call_limit_in_flight() {
    use tap_protocol::limits::MAX_PLAYGROUND_CALLS;
    let gw = TestGateway::start().await;
    let (mut c, session) = opened(&gw, "manual").await;
    let mut p = gw.bound("ops", &session, json!([tool("wait")])).await;
    for i in 0..MAX_PLAYGROUND_CALLS {
        start_call(&mut c, &format!("c{i}"), &session, "wait", json!({})).await;
    }
    let e = c
        .err(
            "playground.call",
            json!({"callId": "over", "sessionId": session, "tool": "wait", "args": {}}),
            "RATE_LIMITED",
        )
        .await;
    assert_eq!(
        e["message"],
        format!("{MAX_PLAYGROUND_CALLS} calls are already in flight on this connection")
    );
    // One ends: there is room again.
    let first = p.expect_next("tool.call").await;
    tap_testkit::answer(&mut p, &first, json!("ok")).await;
    let done = loop {
        let f = c.recv().await;
        if f["type"] == "response" {
            break f;
        }
    };
    assert_eq!(done["result"]["data"], "ok", "{done}");
    start_call(&mut c, "again", &session, "wait", json!({})).await;
    // Requests are answered in order: a refusal of "again" would come before this answer.
    c.ok("status", json!({})).await;
}

//! `tools/list` and `tools/call` through the facade: the live tool set, list changes, the
//! call path (schema check, hooks, provider errors), progress and cancellation.

use super::{client, client_with_tool, session_id, text_of, wait_listed, MODES};
use serde_json::json;
use tap_testkit::{tool, Control, TestGateway};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_tool_is_listed_and_called_in_both_generations() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        let names = c.tool_names().await;
        // Before any provider binds: the gateway's built-in tools.
        let builtin: Vec<String> = tap_gateway::builtin_tools()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, builtin, "{mode}");
        assert!(
            names.contains(&"tap_start_emitter".to_string()),
            "{names:?}"
        );
        let session = session_id(&gw, "work").await;
        let mut p = gw.bound("greeter", &session, json!([tool("greet")])).await;
        wait_listed(&mut c, "greet").await;

        c.start_call("1", "greet", json!({"name": "Ada"}), false)
            .await;
        let call = p.expect_next("tool.call").await;
        assert_eq!(call["tool"], "greet");
        assert_eq!(call["args"], json!({"name": "Ada"}));
        assert_eq!(call["sessionId"], session.as_str());
        p.send(json!({"type": "tool.result", "id": call["id"], "data": {"hello": "Ada"}}))
            .await;
        let r = c.outcome("1").await;
        assert_eq!(r["op"], "result", "{mode}: {r}");
        assert_eq!(r["isError"], false, "{r}");
        assert_eq!(text_of(&r), r#"{"hello":"Ada"}"#, "{r}");
        assert_eq!(r["structured"], json!({"hello": "Ada"}), "{r}");

        // A string result is the text itself.
        c.start_call("2", "greet", json!({}), false).await;
        let call = p.expect_next("tool.call").await;
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "plain words"}))
            .await;
        assert_eq!(text_of(&c.outcome("2").await), "plain words");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_binding_and_leaving_notifies_the_tool_list_change() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        c.send(json!({"op": "watch"})).await;
        c.expect("watching").await;
        let session = session_id(&gw, "work").await;
        let p = gw.bound("lister", &session, json!([tool("ls")])).await;
        let n = c.expect("notice").await;
        assert_eq!(n["kind"], "tools_changed", "{mode}: {n}");
        assert!(c.tool_names().await.contains(&"ls".to_string()), "{mode}");

        drop(p);
        let n = c.expect("notice").await;
        assert_eq!(n["kind"], "tools_changed", "{mode}: {n}");
        assert!(!c.tool_names().await.contains(&"ls".to_string()), "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_client_before_the_result() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let (mut c, mut p, _) = client_with_tool(&gw, mode, "slow", "build").await;
        c.start_call("b", "build", json!({}), true).await;
        let call = p.expect_next("tool.call").await;
        for message in ["compiling", "linking"] {
            p.send(json!({"type": "tool.progress", "id": call["id"], "message": message}))
                .await;
        }
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "built"}))
            .await;
        let first = c.expect("progress").await;
        let second = c.expect("progress").await;
        assert_eq!(
            (first["message"].as_str(), second["message"].as_str()),
            (Some("compiling"), Some("linking")),
            "{mode}"
        );
        assert!(second["progress"].as_f64() > first["progress"].as_f64());
        assert_eq!(text_of(&c.outcome("b").await), "built");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_traceparent_in_meta_is_joined_by_the_calls_trace() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let (mut c, mut p, _) = client_with_tool(&gw, mode, "ci", "build").await;
        let (trace, span) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
        c.send(json!({"op": "call", "id": "t", "tool": "build", "args": {},
                      "traceparent": format!("00-{trace}-{span}-01")}))
            .await;
        let call = p.expect_next("tool.call").await;
        assert!(
            call["traceparent"].as_str().unwrap().contains(trace),
            "{call}"
        );
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
            .await;
        assert_eq!(text_of(&c.outcome("t").await), "ok");
        gw.handle.gateway().flush_history().await;
        let (mut control, _) = Control::authed(&gw).await;
        let list = control.ok("traces.list", json!({"tool": "build"})).await;
        let t = &list["traces"][0];
        assert_eq!(t["traceId"], trace, "{mode}: {list}");
        let spans = control.ok("traces.get", json!({"traceId": trace})).await;
        let root = &spans["spans"][0];
        assert_eq!(
            (
                &root["name"],
                &root["parentSpanId"],
                &root["attributes"]["via"]
            ),
            (&json!("tool.call"), &json!(span), &json!("mcp")),
            "{mode}"
        );
        // Plain calls are the endpoint's own in both generations (`mcp/fast.rs`,
        // `mcp/fast_session.rs`): this and the other tests with this client cover that path.
        assert_eq!(
            root["attributes"]["mcp.path"], "endpoint",
            "{mode}: {spans}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_sends_tool_cancel_to_the_provider() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let (mut c, mut p, _) = client_with_tool(&gw, mode, "slow", "wait").await;
        c.start_call("w", "wait", json!({}), false).await;
        let call = p.expect_next("tool.call").await;
        c.send(json!({"op": "cancel", "id": "w"})).await;
        let cancel = p.expect_next("tool.cancel").await;
        assert_eq!(cancel["id"], call["id"], "{mode}");
        assert_eq!(c.outcome("w").await["op"], "cancelled");
    }
}

/// The stateless generation: the request is the call, so its connection closing ends it.
/// (The `initialize` generation may resume a dropped stream with `Last-Event-ID`, so there
/// a call ends with the MCP session; `tap mcp` ends it with its socket: see tap-cli's tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_mid_call_cancels_it() {
    for mode in ["2026-07-28"] {
        let gw = TestGateway::start().await;
        let (mut c, mut p, _) = client_with_tool(&gw, mode, "slow", "wait").await;
        c.start_call("w", "wait", json!({}), false).await;
        let call = p.expect_next("tool.call").await;
        c.proc.signal("KILL");
        let cancel = p.expect_next("tool.cancel").await;
        assert_eq!(cancel["id"], call["id"], "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_error_results_naming_the_code_and_unknown_tools_are_protocol_errors() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let session = session_id(&gw, "work").await;
    let typed = json!({"name": "typed", "description": "d", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
    let mut p = gw
        .bound("prov", &session, json!([typed, tool("boom")]))
        .await;
    wait_listed(&mut c, "boom").await;

    // The schema check happens before dispatch: the provider never sees this call.
    let r = c.call("1", "typed", json!({"n": "three"})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text_of(&r).starts_with("INVALID_JSON: "), "{r}");

    c.start_call("2", "boom", json!({}), false).await;
    let call = p.expect_next("tool.call").await;
    p.send(
        json!({"type": "tool.result", "id": call["id"], "error": "disk full",
                  "errorCode": "INTERNAL"}),
    )
    .await;
    let r = c.outcome("2").await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(text_of(&r), "INTERNAL: disk full");

    let r = c.call("3", "no_such_tool", json!({})).await;
    assert_eq!(r["op"], "error", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("Unknown tool 'no_such_tool'"),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_rules_deny_with_their_reason_and_add_context() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "2026-07-28").await;
    let session = session_id(&gw, "work").await;
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
    wait_listed(&mut c, "shell").await;

    let r = c.call("1", "shell", json!({"command": "git push"})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text_of(&r),
        "DENIED: A hook rule denied 'shell': CI is red."
    );

    c.start_call("2", "shell", json!({"command": "ls"}), false)
        .await;
    // The denied call never reached the provider: this is the first it sees.
    let call = p.expect_next("tool.call").await;
    assert_eq!(call["args"], json!({"command": "ls"}));
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "a b"}))
        .await;
    let r = c.outcome("2").await;
    assert_eq!(
        text_of(&r),
        "a b\nContext from hook rules: Run from the repo root."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_history_tool_checks_its_arguments() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let r = c.call("1", "tap_stream_history", json!({"last": 0})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("at '/last'"), "{r}");
    let r = c.call("2", "tap_stream_history", json!({})).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structured"]["streams"], json!({}), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_result_is_a_resource_link_with_the_small_file_embedded_in_both_generations() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        let session = session_id(&gw, "work").await;
        let (mut p, ack) = gw
            .bind("files", &session, json!({"tools": [tool("shot")]}))
            .await;
        let dir = std::path::PathBuf::from(ack["persistDir"].as_str().unwrap());
        wait_listed(&mut c, "shot").await;

        c.start_call("1", "shot", json!({}), false).await;
        let call = p.expect_next("tool.call").await;
        let original = dir.join("notes.txt");
        std::fs::write(&original, "line one\nline two\n").unwrap();
        p.send(json!({"type": "tool.result", "id": call["id"],
                      "file": {"path": original, "mimeType": "text/plain", "size": 18, "ttl": 60}}))
            .await;
        let r = c.outcome("1").await;
        assert_eq!(r["isError"], false, "{mode}: {r}");
        let blocks = r["content"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "resource_link", "{mode}: {r}");
        assert_eq!(blocks[0]["mimeType"], "text/plain", "{r}");
        let uri = blocks[0]["uri"].as_str().unwrap();
        // The gateway's copy, not the provider's file (which may go away).
        let copy = uri.strip_prefix("file://").expect("a file:// link");
        assert_ne!(copy, original.to_str().unwrap(), "{r}");
        assert_eq!(
            std::fs::read_to_string(copy).unwrap(),
            "line one\nline two\n"
        );
        assert_eq!(blocks[1]["type"], "resource", "embedded: {r}");
        assert_eq!(blocks[1]["uri"], uri, "{r}");
        assert_eq!(blocks[1]["text"], "line one\nline two\n", "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_input_schema_keeps_the_providers_property_order() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        let session = session_id(&gw, "work").await;
        let find = json!({"name": "find", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"}, "after": {"type": "string"}}}});
        let _p = gw.bound("finder", &session, json!([find])).await;
        wait_listed(&mut c, "find").await;
        let schemas = c.tool_schemas().await;
        let keys: Vec<&str> = schemas["find"]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{mode}: {schemas}"))
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["query", "limit", "after"], "{mode}");
    }
}

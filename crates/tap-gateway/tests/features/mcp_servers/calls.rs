//! A server's tools through the MCP facade, as an MCP client sees them: names, annotations,
//! every content type, progress, cancellation, list changes.

use super::super::mcp::{client, session_id, wait_listed};
use super::{everything, fixture, gateway_with, server_in};
use serde_json::json;
use tap_testkit::Control;

#[tokio::test]
async fn a_fixture_servers_tools_reach_an_mcp_client_unchanged() {
    let gw = gateway_with(json!({"good": fixture("good.py", &[])}), |_| {}).await;
    let entry = server_in(&gw, "good", "ready").await;
    assert!(entry["pid"].as_u64().is_some(), "{entry}");
    assert_eq!(entry["transport"], "stdio");
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "good__echo").await;

    c.send(json!({"op": "tools"})).await;
    let tools = c.expect("tools").await;
    assert_eq!(
        tools["annotations"]["good__echo"]["readOnlyHint"], true,
        "{tools}"
    );
    assert_eq!(
        tools["outputSchemas"]["good__structured"]["type"], "object",
        "{tools}"
    );

    let echo = c.call("1", "good__echo", json!({"message": "hi"})).await;
    assert_eq!(echo["content"][0]["text"], "hi", "{echo}");
    let image = c.call("2", "good__image", json!({})).await;
    let kinds: Vec<_> = image["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].clone())
        .collect();
    assert!(kinds.contains(&json!("image")), "{image}");
    assert_eq!(image["content"][0]["mimeType"], "image/png", "{image}");
    let structured = c.call("3", "good__structured", json!({})).await;
    assert_eq!(structured["structured"], json!({"n": 42}), "{structured}");
    let fails = c.call("4", "good__fails", json!({})).await;
    assert_eq!(fails["isError"], true, "{fails}");
    assert_eq!(fails["content"][0]["text"], "it failed", "{fails}");

    // The control plane says the same.
    let (mut control, _) = Control::authed(&gw).await;
    let list = control.ok("mcpServers.list", json!({})).await;
    let names = list["servers"][0]["tools"].as_array().unwrap().clone();
    assert!(names.contains(&json!("good__echo")), "{list}");

    // The tool's own failure (`isError`) is a failed call in the traces and the figures,
    // with its text; the calls that worked are not.
    gw.handle.gateway().flush_history().await;
    let failed = control
        .ok("traces.list", json!({"tool": "good__fails"}))
        .await;
    let failed = &failed["traces"][0];
    assert_eq!(failed["status"], "error", "{failed}");
    assert_eq!(failed["errorCode"], "TOOL_ERROR", "{failed}");
    let echoed = control
        .ok("traces.list", json!({"tool": "good__echo"}))
        .await;
    assert_eq!(echoed["traces"][0]["status"], "ok", "{echoed}");
    let figures = control
        .ok("activity.query", json!({"window": "15m", "by": "tool"}))
        .await;
    let row = |tool: &str| {
        figures["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == tool)
            .cloned()
            .unwrap_or_else(|| panic!("{tool}: {figures}"))
    };
    assert_eq!(row("good__fails")["errors"], 1, "{figures}");
    assert_eq!(row("good__echo")["errors"], 0, "{figures}");
}

#[tokio::test]
async fn progress_reaches_the_client_and_cancel_reaches_the_server() {
    let gw = gateway_with(json!({"good": fixture("good.py", &[])}), |_| {}).await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "good__slow").await;
    c.start_call("p", "good__slow", json!({"seconds": 0.5}), true)
        .await;
    let progress = c.expect("progress").await;
    assert_eq!(progress["id"], "p", "{progress}");
    let done = c.outcome("p").await;
    assert_eq!(done["op"], "result", "{done}");

    c.start_call("c", "good__slow", json!({"seconds": 30}), true)
        .await;
    c.expect("progress").await;
    c.send(json!({"op": "cancel", "id": "c"})).await;
    assert_eq!(c.outcome("c").await["op"], "cancelled");
    // The server is still there for the next call.
    let echo = c
        .call("after", "good__echo", json!({"message": "still here"}))
        .await;
    assert_eq!(echo["content"][0]["text"], "still here", "{echo}");
}

#[tokio::test]
async fn a_changed_tool_list_reaches_the_session() {
    let gw = gateway_with(json!({"lc": fixture("list_changed.py", &[])}), |_| {}).await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "lc__add_tool").await;
    let added = c.call("1", "lc__add_tool", json!({})).await;
    assert_eq!(added["op"], "result", "{added}");
    wait_listed(&mut c, "lc__extra_1").await;
    let entry = super::server_when(&gw, "lc", |s| {
        s["tools"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("lc__extra_1")))
    })
    .await;
    assert_eq!(entry["state"], "ready");
}

#[tokio::test]
async fn the_everything_server_from_npm_works_through_the_gateway() {
    let gw = gateway_with(json!({"everything": everything()}), |_| {}).await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "everything__get-sum").await;
    let sum = c
        .call("1", "everything__get-sum", json!({"a": 2, "b": 3}))
        .await;
    assert!(super::super::mcp::text_of(&sum).contains('5'), "{sum}");
    let echo = c
        .call("2", "everything__echo", json!({"message": "hello"}))
        .await;
    assert!(
        super::super::mcp::text_of(&echo).contains("hello"),
        "{echo}"
    );
    let image = c.call("3", "everything__get-tiny-image", json!({})).await;
    assert!(
        image["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image"),
        "{image}"
    );
    let structured = c
        .call(
            "4",
            "everything__get-structured-content",
            json!({"location": "New York"}),
        )
        .await;
    assert!(structured["structured"].is_object(), "{structured}");
    c.start_call(
        "5",
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
        true,
    )
    .await;
    c.expect("progress").await;
    assert_eq!(c.outcome("5").await["op"], "result");
    let session = session_id(&gw, "work").await;
    assert!(!session.is_empty());
}

#[tokio::test]
async fn sessions_limits_which_sessions_see_a_user_server() {
    let mut good = fixture("good.py", &[]);
    good["sessions"] = json!(["work", "early"]);
    let gw = tap_testkit::TestGateway::start_with(|c| {
        super::write_user_file(&c.data_dir, &json!({"good": good}));
    })
    .await;
    // Sessions live when it starts are sorted out at once, later ones as they come.
    let mut early = client(&gw, "early", "legacy").await;
    let mut before = client(&gw, "before", "legacy").await;
    server_in(&gw, "good", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    let mut other = client(&gw, "other", "legacy").await;
    wait_listed(&mut c, "good__echo").await;
    wait_listed(&mut early, "good__echo").await;
    for (label, client) in [("other", &mut other), ("before", &mut before)] {
        let listed = client.tool_names().await;
        assert!(
            !listed.iter().any(|n| n.starts_with("good__")),
            "{label}: {listed:?}"
        );
    }
    let _ = session_id(&gw, "other").await;
}

#[tokio::test]
async fn a_servers_sampling_and_elicitation_reach_the_calling_client() {
    let gw = gateway_with(json!({"everything": everything()}), |_| {}).await;
    let token = gw.handle.gateway().host_token().to_string();
    let url = super::super::mcp::url(&gw, "work");
    let (mut c, _) =
        tap_testkit::McpClient::python_http_answering(&url, &token, gw.dir.path()).await;
    // The gateway declares both, so the server offers the tools that use them.
    wait_listed(&mut c, "everything__trigger-sampling-request").await;
    let sampled = c
        .call(
            "1",
            "everything__trigger-sampling-request",
            json!({"prompt": "the capital of France", "maxTokens": 20}),
        )
        .await;
    let text = super::super::mcp::text_of(&sampled);
    assert!(
        text.contains("sampled: ") && text.contains("the capital of France"),
        "{sampled}"
    );
    wait_listed(&mut c, "everything__trigger-elicitation-request").await;
    let elicited = c
        .call("2", "everything__trigger-elicitation-request", json!({}))
        .await;
    assert!(
        super::super::mcp::text_of(&elicited).contains("Ada Lovelace"),
        "{elicited}"
    );

    // A client that declared neither gets a clear refusal through the server.
    let mut plain = client(&gw, "plain", "legacy").await;
    wait_listed(&mut plain, "everything__trigger-sampling-request").await;
    let refused = plain
        .call(
            "3",
            "everything__trigger-sampling-request",
            json!({"prompt": "x", "maxTokens": 5}),
        )
        .await;
    let text = refused.to_string();
    assert!(
        text.contains("no MCP client of the calling session"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_session_host_gets_text_as_a_value_and_is_error_as_a_failure() {
    let gw = gateway_with(json!({"good": fixture("good.py", &[])}), |_| {}).await;
    let (host, session) = gw.host_with_session().await;
    let echo = tap_testkit::eventually("good__echo in the session", || {
        let host = &host;
        let id = session.id.clone();
        async move {
            host.invoke(&id, "good__echo", json!({"message": "hi"}))
                .await
                .ok()
                .filter(|r| r.error.is_none())
        }
    })
    .await;
    assert_eq!(echo.data, Some(json!("hi")));
    let fails = host
        .invoke(&session.id, "good__fails", json!({}))
        .await
        .unwrap();
    assert_eq!(fails.error.as_deref(), Some("it failed"), "{fails:?}");
    assert_eq!(fails.error_code.unwrap().to_string(), "TOOL_ERROR");
    let image = host
        .invoke(&session.id, "good__image", json!({}))
        .await
        .unwrap();
    let data = image.data.unwrap();
    assert_eq!(data["content"][0]["type"], "image", "{data}");
}

#[tokio::test]
async fn a_servers_log_entries_go_to_its_sessions_log_stream() {
    let gw = tap_testkit::TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    super::write_user_file(
        &gw.dir.path().join("home"),
        &json!({"good": fixture("good.py", &[])}),
    );
    gw.handle.gateway().mcp_servers_reload();
    server_in(&gw, "good", "ready").await;
    let found = tap_testkit::eventually("the log entry in the session's streams", || {
        let host = &host;
        let id = session.id.clone();
        async move {
            let h = host.streams_history(&id, None, None).await.ok()?;
            let text = serde_json::to_string(&h.streams).ok()?;
            text.contains("[info] good server ready").then_some(text)
        }
    })
    .await;
    assert!(found.contains("log"), "{found}");
}

#[tokio::test]
async fn an_idle_server_stops_and_the_next_call_starts_it() {
    let mut good = fixture("good.py", &[]);
    good["idleTimeout"] = json!("300ms");
    let gw = gateway_with(json!({"good": good}), |_| {}).await;
    let first = server_in(&gw, "good", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "good__echo").await;
    // No calls: it stops, and its tools stay.
    let idle = server_in(&gw, "good", "stopped").await;
    assert!(idle.get("pid").is_none(), "{idle}");
    assert!(c.tool_names().await.contains(&"good__echo".to_string()));
    let echo = c
        .call("1", "good__echo", json!({"message": "wake up"}))
        .await;
    assert_eq!(echo["content"][0]["text"], "wake up", "{echo}");
    let again = server_in(&gw, "good", "ready").await;
    assert_ne!(again["pid"], first["pid"], "{again}");
}

#[tokio::test]
async fn a_lazy_server_offers_last_runs_tools_and_starts_at_the_first_call() {
    let home = tempfile::tempdir().unwrap();
    let mut good = fixture("good.py", &[]);
    good["startup"] = json!("lazy");
    let servers = json!({"good": good});
    let at = |dir: std::path::PathBuf| {
        let servers = servers.clone();
        move |c: &mut tap_gateway::GatewayConfig| {
            c.data_dir = dir;
            super::write_user_file(&c.data_dir, &servers);
        }
    };
    // Never run before: it starts to learn its tools.
    let gw = tap_testkit::TestGateway::start_with(at(home.path().join("tap"))).await;
    server_in(&gw, "good", "ready").await;
    let tap_testkit::TestGateway { handle, dir: _dir } = gw;
    handle.stop().await.unwrap();

    let gw = tap_testkit::TestGateway::start_with(at(home.path().join("tap"))).await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "good__echo").await;
    let waiting = server_in(&gw, "good", "stopped").await;
    assert!(waiting.get("pid").is_none(), "{waiting}");
    let echo = c.call("1", "good__echo", json!({"message": "first"})).await;
    assert_eq!(echo["content"][0]["text"], "first", "{echo}");
    server_in(&gw, "good", "ready").await;
}

#[tokio::test]
async fn a_servers_prompts_and_resources_reach_mcp_clients_namespaced() {
    let gw = gateway_with(json!({"everything": everything()}), |_| {}).await;
    server_in(&gw, "everything", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "everything__echo").await;

    c.send(json!({"op": "prompts"})).await;
    let prompts = c.expect("prompts").await;
    let names = prompts["names"].to_string();
    assert!(names.contains("everything__simple-prompt"), "{prompts}");
    assert!(names.contains("tap_context"), "{prompts}");
    c.send(json!({"op": "prompt", "name": "everything__simple-prompt"}))
        .await;
    let prompt = c.expect("prompt").await;
    assert_eq!(
        prompt["text"], "This is a simple prompt without arguments.",
        "{prompt}"
    );

    let uri = resource_starting(&mut c, "tap-mcp://everything/demo://").await;
    c.send(json!({"op": "read", "uri": uri})).await;
    let read = c.expect("read").await;
    assert!(
        read["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{read}"
    );

    // A template is namespaced the same way; a URI expanded from it reads the server's
    // resource of the URI the server's own template gives.
    let template = "tap-mcp://everything/demo://resource/dynamic/text/{resourceId}";
    assert_template_listed(&mut c, template).await;
    let uri = template.replace("{resourceId}", "7");
    c.send(json!({"op": "read", "uri": uri})).await;
    let read = c.expect("read").await;
    let text = read["text"].as_str().unwrap_or_else(|| panic!("{read}"));
    assert!(text.starts_with("Resource 7:"), "{read}");

    // Completions come from the server that owns the prompt or template, the context of
    // earlier arguments included.
    c.send(
        json!({"op": "complete", "prompt": "everything__completable-prompt",
                  "argument": {"name": "department", "value": "S"}}),
    )
    .await;
    let got = c.expect("complete").await;
    assert_eq!(got["values"], json!(["Sales", "Support"]), "{got}");
    c.send(
        json!({"op": "complete", "prompt": "everything__completable-prompt",
                  "argument": {"name": "name", "value": ""},
                  "context": {"department": "Engineering"}}),
    )
    .await;
    let got = c.expect("complete").await;
    assert_eq!(got["values"], json!(["Alice", "Bob", "Charlie"]), "{got}");
    c.send(json!({"op": "complete", "template": template,
                  "argument": {"name": "resourceId", "value": "12"}}))
        .await;
    let got = c.expect("complete").await;
    assert_eq!(got["values"], json!(["12"]), "{got}");
    // The gateway's own prompt has nothing to complete.
    c.send(json!({"op": "complete", "prompt": "tap_context",
                  "argument": {"name": "stream", "value": "x"}}))
        .await;
    let got = c.expect("complete").await;
    assert_eq!(got["values"], json!([]), "{got}");
}

#[tokio::test]
async fn a_server_with_an_empty_prefix_keeps_its_own_resource_names() {
    let mut entry = everything();
    entry["prefix"] = json!("");
    let gw = gateway_with(json!({"everything": entry}), |_| {}).await;
    server_in(&gw, "everything", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "echo").await;

    let uris = resource_uris(&mut c).await;
    assert!(
        uris.iter().all(|u| !u.starts_with("tap-mcp://")),
        "{uris:?}"
    );
    let own = resource_starting(&mut c, "demo://").await;
    c.send(json!({"op": "read", "uri": own})).await;
    let read = c.expect("read").await;
    assert!(
        read["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{read}"
    );

    let template = "demo://resource/dynamic/text/{resourceId}";
    assert_template_listed(&mut c, template).await;
    c.send(json!({"op": "read", "uri": template.replace("{resourceId}", "3")}))
        .await;
    let read = c.expect("read").await;
    assert!(
        read["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Resource 3:")),
        "{read}"
    );
    c.send(json!({"op": "complete", "template": template,
                  "argument": {"name": "resourceId", "value": "4"}}))
        .await;
    assert_eq!(c.expect("complete").await["values"], json!(["4"]));

    // A URI no server has is refused with the server's reason.
    c.send(json!({"op": "read", "uri": "demo://nothing/here"}))
        .await;
    let refused = c.expect("error").await;
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("everything")),
        "{refused}"
    );
}

/// The client's next notice of `kind`, past other notices.
async fn next_notice(c: &mut tap_testkit::McpClient, kind: &str) -> serde_json::Value {
    loop {
        let n = c.expect("notice").await;
        if n["kind"] == kind {
            return n;
        }
    }
}

#[tokio::test]
async fn a_client_subscribed_to_a_servers_resource_hears_its_updates_and_list_changes() {
    let gw = gateway_with(json!({"everything": everything()}), |_| {}).await;
    server_in(&gw, "everything", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "everything__echo").await;
    let uri = resource_starting(&mut c, "tap-mcp://everything/demo://").await;
    // Forwarded to the server as its own URI; its update comes back under the facade's.
    c.send(json!({"op": "watch", "uri": uri})).await;
    c.expect("watching").await;
    let started = c
        .call("1", "everything__toggle-subscriber-updates", json!({}))
        .await;
    assert_ne!(started["isError"], true, "{started}");
    let updated = next_notice(&mut c, "resource_updated").await;
    assert_eq!(updated["uri"], uri, "{updated}");

    // The server restarts: its prompts and resources leave and come back, and the client
    // is told both lists changed.
    gw.handle
        .gateway()
        .mcp_servers_restart(&tap_protocol::mcp_servers::McpServerRef {
            name: "everything".into(),
            session_id: None,
        })
        .unwrap();
    next_notice(&mut c, "resources_changed").await;
    next_notice(&mut c, "prompts_changed").await;
}

#[tokio::test]
async fn a_servers_log_entries_during_a_call_reach_the_calling_client() {
    let gw = gateway_with(json!({"conf": fixture("conformance.py", &[])}), |_| {}).await;
    server_in(&gw, "conf", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "conf__test_tool_with_logging").await;
    c.send(json!({"op": "watch"})).await;
    c.expect("watching").await;
    let done = c.call("1", "conf__test_tool_with_logging", json!({})).await;
    assert_ne!(done["isError"], true, "{done}");
    // Three entries, each named after the server.
    for _ in 0..3 {
        let n = next_notice(&mut c, "message").await;
        assert!(
            n["level"].as_str().is_some_and(|l| l.contains("info")),
            "{n}"
        );
    }
}

#[tokio::test]
async fn progress_sent_just_before_the_result_reaches_the_client_first() {
    let gw = gateway_with(json!({"conf": fixture("conformance.py", &[])}), |_| {}).await;
    server_in(&gw, "conf", "ready").await;
    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "conf__test_tool_with_progress").await;
    // The fixture answers right after its last progress: before, about 2 calls in 5 lost
    // that notification to the result.
    for round in 0..10 {
        let id = format!("p{round}");
        c.start_call(&id, "conf__test_tool_with_progress", json!({}), true)
            .await;
        for step in ["0 of 100", "50 of 100", "100 of 100"] {
            let p = c.expect("progress").await;
            assert_eq!(p["id"], id.as_str(), "{p}");
            assert!(p.to_string().contains(step), "round {round}, {step}: {p}");
        }
        assert_eq!(c.outcome(&id).await["op"], "result");
    }
}

/// The resource URIs the client lists.
async fn resource_uris(c: &mut tap_testkit::McpClient) -> Vec<String> {
    c.send(json!({"op": "resources"})).await;
    let resources = c.expect("resources").await;
    resources["uris"]
        .as_array()
        .unwrap_or_else(|| panic!("{resources}"))
        .iter()
        .filter_map(|u| u.as_str().map(str::to_string))
        .collect()
}

/// The first resource URI the client lists that starts with `prefix`.
async fn resource_starting(c: &mut tap_testkit::McpClient, prefix: &str) -> String {
    let uris = resource_uris(c).await;
    uris.iter()
        .find(|u| u.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}… in {uris:?}"))
        .clone()
}

/// Asserts that the client lists `template`.
async fn assert_template_listed(c: &mut tap_testkit::McpClient, template: &str) {
    c.send(json!({"op": "templates"})).await;
    let templates = c.expect("templates").await;
    let listed = templates["uriTemplates"].as_array().unwrap();
    assert!(listed.contains(&json!(template)), "{templates}");
}

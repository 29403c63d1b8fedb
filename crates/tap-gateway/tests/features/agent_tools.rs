//! The gateway's built-in `tap_*` tools (issue 12, "Reach"): in every session's tool set
//! from its first publication, reserved against providers, called by the agent through its
//! session host: notes in its streams, session injectors, emitters (user-owned ones
//! protected), filters replaced while a command runs, persistent definitions written to
//! the project's `tap.config.json` and started by the next session there.

use serde_json::{json, Value};
use std::io::Write;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_protocol::provider::PushLevel;
use tap_testkit::*;

async fn gateway() -> TestGateway {
    TestGateway::for_emitters().await
}

fn builtin_names() -> Vec<String> {
    tap_gateway::builtin_tools()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// The emitter as `emitters.list` shows it, once it is listed.
async fn listed(gw: &TestGateway, session: &str, name: &str, what: &str) -> Value {
    let g = gw.handle.gateway();
    eventually(what, || {
        let found = g
            .emitters_list(Some(session))
            .emitters
            .into_iter()
            .find(|e| e.name == name)
            .map(|e| serde_json::to_value(e).unwrap());
        async move { found }
    })
    .await
}

#[tokio::test]
async fn every_session_has_the_built_in_tools_from_its_first_tool_set_and_providers_cannot_take_them(
) {
    let gw = TestGateway::start().await;
    let mut host = gw.host().await;
    let s = host
        .register_session(SessionRegister {
            label: Some("agent".into()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    // The raw events (the kit's helpers leave the built-ins aside).
    let first = loop {
        match tokio::time::timeout(PATIENCE, host.next_event()).await {
            Ok(Some(HostEvent::SessionTools(t))) => break t,
            Ok(Some(_)) => continue,
            other => panic!("no session.tools: {other:?}"),
        }
    };
    assert_eq!(first.revision, 0);
    let names: Vec<String> = first.tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, builtin_names());
    for name in [
        "tap_list_streams",
        "tap_post",
        "tap_stream_history",
        "tap_enable_injector",
        "tap_disable_injector",
        "tap_list_emitters",
        "tap_start_emitter",
        "tap_set_event_filter",
        "tap_stop_emitter",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(first.tools.iter().all(|t| t.provider == "tap"));
    let start = first
        .tools
        .iter()
        .find(|t| t.name == "tap_start_emitter")
        .unwrap();
    for arg in [
        "eventFilter",
        "stream",
        "channel",
        "scope",
        "force",
        "restart",
    ] {
        assert!(
            start.parameters.to_value()["properties"].get(arg).is_some(),
            "{arg} in {}",
            start.parameters
        );
    }

    // A provider's tool joins them; `tap status` lists the providers' tools only.
    let _p = gw.bound("greeter", &s.id, json!([tool("greet")])).await;
    let next = loop {
        match tokio::time::timeout(PATIENCE, host.next_event()).await {
            Ok(Some(HostEvent::SessionTools(t))) if t.revision > 0 => break t,
            Ok(Some(_)) => continue,
            other => panic!("no second session.tools: {other:?}"),
        }
    };
    assert_eq!(next.tools.len(), builtin_names().len() + 1);
    let status = host.status().await.unwrap();
    assert_eq!(status.sessions[0].tools, ["greet"]);

    // The names are reserved.
    let mut thief = authed(&gw).await.0;
    thief
        .send(hello("thief", &s.id, json!({"tools": [tool("tap_post")]})))
        .await;
    let e = thief.expect_error("TOOL_CONFLICT").await;
    assert!(e["message"].as_str().unwrap().contains("built-in"), "{e}");
}

#[tokio::test]
async fn the_agent_posts_notes_into_a_stream_and_reads_them_back() {
    let gw = gateway().await;
    let (host, s) = gw.host_with_session().await;
    let posted = call_ok(
        &host,
        &s.id,
        "tap_post",
        json!({"channel": "Design Notes", "message": "use the ledger", "source": "planner"}),
    )
    .await;
    assert_eq!(posted["stream"], "design-notes", "normalised: {posted}");
    assert_eq!(
        posted["shown"], false,
        "a post is kept, not shown: {posted}"
    );

    let h = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "Design Notes", "limit": 5}),
    )
    .await;
    let events = &h["streams"]["design-notes@emitters"];
    assert_eq!(events[0]["event"], "use the ledger", "{h}");
    assert_eq!(events[0]["metadata"]["source"], "planner", "{h}");

    let l = call_ok(&host, &s.id, "tap_list_streams", json!({})).await;
    let stream = l["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["key"] == "design-notes@emitters")
        .unwrap_or_else(|| panic!("listed: {l}"));
    assert_eq!(stream["events"], 1);
    assert_eq!(stream["sessionInjector"]["enabled"], true, "{stream}");

    // In the ledger too.
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let page = c
        .ok(
            "events.list",
            json!({"sessionId": s.id, "stream": "design-notes@emitters"}),
        )
        .await;
    assert_eq!(page["events"][0]["text"], "use the ledger", "{page}");

    // Bad input gets a clear error, nothing is stored.
    let r = call_tool(&host, &s.id, "tap_post", json!({"message": "where?"})).await;
    assert_eq!(code(&r), Some("INVALID_JSON"));
    assert!(r.error.unwrap().contains("'channel'"));
    let r = call_tool(
        &host,
        &s.id,
        "tap_post",
        json!({"channel": "x", "message": "y".repeat(20_000)}),
    )
    .await;
    assert_eq!(code(&r), Some("INVALID_JSON"), "over the message limit");
    let r = call_tool(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "nope"}),
    )
    .await;
    assert_eq!(code(&r), Some("NOT_FOUND"));
}

#[tokio::test]
async fn the_agent_runs_emitters_and_cannot_touch_the_users_without_force() {
    let gw = gateway().await;
    let (mut host, s) = gw.host_with_session().await;
    let started = call_ok(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "checks", "every": "1h",
               "command": "printf 'ok 1\\nFAIL 2\\n'",
               "eventFilter": {"rules": [{"match": "fail", "outcome": "inject"}]}}),
    )
    .await;
    assert_eq!(started["emitter"]["ownership"], "modelOwned", "{started}");
    assert_eq!(started["emitter"]["lifespan"], "temporary", "{started}");
    let d = next_delivery(&mut host).await;
    assert_eq!((d.event.as_str(), d.stream.as_str()), ("FAIL 2", "checks"));
    let l = call_ok(&host, &s.id, "tap_list_emitters", json!({})).await;
    assert_eq!(l["emitters"][0]["name"], "checks", "{l}");

    // The user's emitter (from the panel or the CLI) is protected from the agent.
    let (mut c, _) = Control::authed(&gw).await;
    c.ok(
        "emitters.start",
        json!({"sessionId": s.id, "name": "watch", "command": "sleep 600"}),
    )
    .await;
    let r = call_tool(&host, &s.id, "tap_stop_emitter", json!({"name": "watch"})).await;
    assert_eq!(code(&r), Some("UNAUTHORIZED"), "{r:?}");
    let r = call_tool(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "watch", "command": "true"}),
    )
    .await;
    assert_eq!(code(&r), Some("UNAUTHORIZED"), "replacing it: {r:?}");
    let r = call_tool(
        &host,
        &s.id,
        "tap_set_event_filter",
        json!({"name": "watch", "eventFilter": []}),
    )
    .await;
    assert_eq!(code(&r), Some("UNAUTHORIZED"), "its filter: {r:?}");
    let stopped = call_ok(
        &host,
        &s.id,
        "tap_stop_emitter",
        json!({"name": "watch", "force": true}),
    )
    .await;
    assert_eq!(stopped["emitter"]["name"], "watch");

    // A bad filter starts nothing and says which rule.
    let r = call_tool(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "bad", "command": "true",
               "eventFilter": [{"match": "(", "outcome": "keep"}]}),
    )
    .await;
    assert_eq!(code(&r), Some("INVALID_JSON"));
    assert!(r.error.unwrap().contains("rule 0"));
}

#[tokio::test]
async fn the_injector_decides_what_of_a_streams_lines_reaches_the_session() {
    let gw = gateway().await;
    let (mut host, s) = gw.host_with_session().await;
    let off = call_ok(
        &host,
        &s.id,
        "tap_disable_injector",
        json!({"channel": "ci"}),
    )
    .await;
    assert_eq!(off["sessionInjector"]["enabled"], false, "{off}");
    let filter = json!([{"match": "fail", "outcome": "inject"}]);
    call_ok(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "ci", "every": "1h", "command": "echo FAIL first", "eventFilter": filter}),
    )
    .await;
    let e = listed(&gw, &s.id, "ci", "the first run").await;
    assert_eq!(e["name"], "ci");
    eventually("the first run's line is kept", || {
        let counts = gw.handle.gateway().emitters_list(Some(&s.id)).emitters[0].counts;
        async move { (counts.kept == 1).then_some(()) }
    })
    .await;

    // On again, showing everything: the next run's line arrives, the first never did.
    call_ok(
        &host,
        &s.id,
        "tap_enable_injector",
        json!({"channel": "ci", "delivery": "all"}),
    )
    .await;
    call_ok(
&host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "ci", "every": "1h", "command": "echo FAIL second; echo fine", "eventFilter": filter}),
    )
    .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "FAIL second", "the disabled run delivered nothing");
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.event.as_str(), d.level),
        ("fine", PushLevel::Surface),
        "'all' shows kept lines"
    );
}

#[tokio::test]
async fn a_new_filter_applies_to_the_next_line_of_a_running_command() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("lines");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (host, s) = gw.host_with_session().await;
    call_ok(
        &host,
        &s.id,
        "tap_start_emitter",
        json!({"name": "tail", "command": format!("cat {}", fifo.display())}),
    )
    .await;
    // The writer end, opened once the command reads (the open waits for it).
    let path = fifo.clone();
    let mut w = tokio::task::spawn_blocking(move || std::fs::File::create(path).unwrap())
        .await
        .unwrap();
    let mut write = |text: &str| {
        w.write_all(text.as_bytes()).unwrap();
        w.flush().unwrap();
    };
    write("alpha 1\n");
    eventually("the first line is kept", || {
        let host = &host;
        let id = s.id.clone();
        async move {
            let got = stored(host, &id, "tail@emitters").await;
            (got == ["alpha 1"]).then_some(())
        }
    })
    .await;
    let changed = call_ok(
        &host,
        &s.id,
        "tap_set_event_filter",
        json!({"name": "tail", "eventFilter": [{"match": "^alpha", "outcome": "drop"}]}),
    )
    .await;
    assert_eq!(changed["emitter"]["eventFilter"][0]["outcome"], "drop");
    write("alpha 2\nbeta 3\n");
    eventually("beta is kept", || {
        let host = &host;
        let id = s.id.clone();
        async move {
            let got = stored(host, &id, "tail@emitters").await;
            (got.first().map(String::as_str) == Some("beta 3")).then_some(got)
        }
    })
    .await;
    assert_eq!(
        stored(&host, &s.id, "tail@emitters").await,
        ["beta 3", "alpha 1"],
        "alpha 2 was dropped by the new filter"
    );
    let e = listed(&gw, &s.id, "tail", "listed").await;
    assert_eq!(e["runCount"], 1, "the command was not restarted: {e}");
    assert_eq!(e["status"], "running", "{e}");
}

#[tokio::test]
async fn a_persistent_emitter_is_written_to_the_project_config_and_started_by_the_next_session() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let config = project.join("tap.config.json");
    std::fs::write(
        &config,
        r#"{"custom": {"keep": true, "b": 1, "a": 2},
            "emitters": [{"name": "zeta", "command": "true", "autoStart": false, "x-note": "mine"}]}"#,
    )
    .unwrap();
    let read =
        || -> Value { serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap() };
    let host = gw.host().await;
    let open = |label: &str| SessionRegister {
        label: Some(label.into()),
        cwd: Some(project.display().to_string()),
        foreground: true,
        ..Default::default()
    };
    let a = host.register_session(open("a")).await.unwrap();

    let started = call_ok(
        &host,
        &a.id,
        "tap_start_emitter",
        json!({"name": "Alpha", "every": "1h", "command": "echo hi", "lifespan": "persistent",
               "eventFilter": [{"match": "hi", "outcome": "keep"}]}),
    )
    .await;
    assert_eq!(started["emitter"]["lifespan"], "persistent", "{started}");
    let file = read();
    assert_eq!(
        file["custom"],
        json!({"keep": true, "b": 1, "a": 2}),
        "other keys kept: {file}"
    );
    let custom: Vec<&str> = file["custom"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(custom, ["keep", "b", "a"], "in the user's order");
    let names: Vec<&str> = file["emitters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "zeta"], "sorted by name");
    assert_eq!(file["emitters"][0]["ownership"], "modelOwned");
    assert_eq!(file["emitters"][0]["eventFilter"][0]["match"], "hi");
    assert_eq!(
        file["emitters"][1]["x-note"], "mine",
        "fields it does not own are kept"
    );
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("\n  \"custom\""),
        "pretty-printed"
    );

    // An injector made persistent is written under `streams`.
    call_ok(
        &host,
        &a.id,
        "tap_enable_injector",
        json!({"channel": "alpha", "delivery": "inject", "scope": "persistent"}),
    )
    .await;
    assert_eq!(
        read()["streams"]["alpha"]["sessionInjector"],
        json!({"enabled": true, "delivery": "inject", "ownership": "modelOwned"})
    );

    // The next session in the project starts it (and not zeta, autoStart false).
    host.end_session(&a.id).await.unwrap();
    let b = host.register_session(open("b")).await.unwrap();
    let e = listed(&gw, &b.id, "alpha", "alpha in the next session").await;
    assert_eq!(
        (e["lifespan"].as_str(), e["ownership"].as_str()),
        (Some("persistent"), Some("modelOwned"))
    );
    let l = call_ok(&host, &b.id, "tap_list_streams", json!({})).await;
    let alpha = l["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["key"] == "alpha@emitters")
        .unwrap_or_else(|| panic!("{l}"));
    assert_eq!(alpha["sessionInjector"]["delivery"], "inject", "{alpha}");
    assert!(gw
        .handle
        .gateway()
        .emitters_list(Some(&b.id))
        .emitters
        .iter()
        .all(|e| e.name != "zeta"));

    // Stopping it persistently removes the entry; the user's entry needs force.
    call_ok(
        &host,
        &b.id,
        "tap_stop_emitter",
        json!({"name": "alpha", "lifespan": "persistent"}),
    )
    .await;
    let file = read();
    assert_eq!(file["emitters"].as_array().unwrap().len(), 1, "{file}");
    assert_eq!(file["emitters"][0]["name"], "zeta");
    let r = call_tool(
        &host,
        &b.id,
        "tap_stop_emitter",
        json!({"name": "zeta", "scope": "persistent"}),
    )
    .await;
    assert_eq!(code(&r), Some("UNAUTHORIZED"), "{r:?}");
    assert_eq!(read()["emitters"][0]["x-note"], "mine");

    // A definition that is not valid writes nothing.
    let before = std::fs::read_to_string(&config).unwrap();
    let r = call_tool(
        &host,
        &b.id,
        "tap_start_emitter",
        json!({"name": "broken", "command": "true", "cwd": "../..", "lifespan": "persistent"}),
    )
    .await;
    assert_eq!(code(&r), Some("UNAUTHORIZED"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

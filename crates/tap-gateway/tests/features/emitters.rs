//! Emitters (issue 12) with real child processes: a timed command's lines through its
//! filter into the stream and the ledger, its run as a trace; deliveries to the host; stop
//! and the session's end kill the whole process group; no tap token reaches a child; the
//! limits; prompts; restarts; long lines.

use serde_json::{json, Value};
use std::path::Path;
use tap_protocol::emitters::EmitterRef;
use tap_protocol::host::{Delivery, HostEvent};
use tap_testkit::*;

async fn gateway() -> TestGateway {
    TestGateway::for_emitters().await
}

pub(crate) async fn start(c: &mut Control, session: &str, def: Value) -> Value {
    let mut params = def;
    params["sessionId"] = json!(session);
    c.ok("emitters.start", params).await
}

/// The emitter's runs (as `emitters.runs` answers) once `done` holds for them.
pub(crate) async fn runs_until(
    gw: &TestGateway,
    session: &str,
    name: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let g = gw.handle.gateway();
    let r = EmitterRef {
        session_id: session.into(),
        name: name.into(),
        force: None,
        lifespan: None,
    };
    eventually(what, || {
        let runs = g
            .emitters_runs(&r)
            .map(|r| serde_json::to_value(r.runs).unwrap());
        let runs: Vec<Value> = runs
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        let ok = done(&runs);
        async move { ok.then_some(runs) }
    })
    .await
}

pub(crate) fn ended(runs: &[Value]) -> bool {
    runs.first().is_some_and(|r| r["status"] != "running")
}

/// The emitter as `emitters.list` shows it.
fn info(gw: &TestGateway, session: &str, name: &str) -> Value {
    let l = gw.handle.gateway().emitters_list(Some(session));
    let e = l
        .emitters
        .into_iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no emitter {name}"));
    serde_json::to_value(e).unwrap()
}

async fn status_becomes(gw: &TestGateway, session: &str, name: &str, status: &str) {
    eventually(&format!("{name} {status}"), || {
        let ok = info(gw, session, name)["status"] == status;
        async move { ok.then_some(()) }
    })
    .await
}

fn alive(pid: u32) -> bool {
    // A zombie is gone as far as the user is concerned.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test]
async fn a_timed_commands_lines_go_through_its_filter_into_the_stream_and_its_run_is_a_trace() {
    let gw = gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let started = start(
        &mut c,
        &s.id,
        json!({"name": "Unit Tests!", "every": "1h",
        "command": "for i in 1 2 3; do echo \"line-$i\"; done",
        "eventFilter": [{"match": "LINE-2", "outcome": "drop"}]}),
    )
    .await;
    assert_eq!(started["name"], "unit-tests", "normalised: {started}");
    assert_eq!(started["schedule"], "timed");
    assert_eq!(started["ownership"], "userOwned");
    let runs = runs_until(&gw, &s.id, "unit-tests", "the first run ends", ended).await;
    let run = &runs[0];
    assert_eq!(
        (
            run["run"].as_u64(),
            run["status"].as_str(),
            run["exitCode"].as_i64()
        ),
        (Some(1), Some("exited"), Some(0)),
        "{run}"
    );
    assert_eq!(run["trigger"], "start");
    assert_eq!(
        run["lines"],
        json!({"lines": 3, "kept": 2, "dropped": 1, "surfaced": 0, "injected": 0})
    );
    let e = info(&gw, &s.id, "unit-tests");
    assert_eq!(e["status"], "waiting", "until the next hour: {e}");
    assert!(e["nextRunAt"].is_string());
    assert_eq!(e["counts"]["kept"], 2);
    assert_eq!(
        stored(&host, &s.id, "unit-tests@emitters").await,
        ["line-3", "line-1"]
    );

    gw.handle.gateway().flush_history().await;
    let page = c
        .ok(
            "events.list",
            json!({"sessionId": s.id, "stream": "unit-tests@emitters"}),
        )
        .await;
    let events = page["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{page}");
    assert_eq!(
        events[0]["metadata"],
        json!({"emitter": "unit-tests", "run": 1, "source": "emitter:stdout"})
    );
    assert_eq!(
        events[0]["traceId"], run["traceId"],
        "a line names its run's trace"
    );
    let t = c.ok("traces.get", json!({"traceId": run["traceId"]})).await;
    let names: Vec<&str> = t["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["emitter.run", "spawn", "lines"], "{t}");
    let lines = &t["spans"][2];
    assert_eq!(
        (
            lines["attributes"]["kept"].as_i64(),
            lines["attributes"]["dropped"].as_i64()
        ),
        (Some(2), Some(1))
    );
}

#[tokio::test]
async fn surfaced_and_injected_lines_reach_the_sessions_host() {
    let gw = gateway().await;
    let (mut host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    start(&mut c, &s.id, json!({"name": "ci", "every": "1h", "stream": "CI Watch",
        "command": "echo 'build ok'; echo 'build FAILED: 2 tests'; echo 'retry needed'",
        "eventFilter": [{"match": "failed", "outcome": "surface"}, {"match": "^retry", "outcome": "inject"}]})).await;
    let mut got: Vec<Delivery> = Vec::new();
    while got.len() < 2 {
        if let HostEvent::Delivery(d) =
            next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await
        {
            got.push(d);
        }
    }
    assert_eq!(
        (got[0].stream.as_str(), got[0].provider.as_str()),
        ("ci-watch", "emitters")
    );
    assert_eq!(got[0].event, "build FAILED: 2 tests");
    assert_eq!(got[0].level, tap_protocol::provider::PushLevel::Surface);
    assert_eq!(got[1].event, "retry needed");
    assert_eq!(got[1].level, tap_protocol::provider::PushLevel::Inject);
}

#[tokio::test]
async fn stop_kills_the_whole_process_group_and_the_sessions_end_stops_the_rest() {
    let gw = gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    for name in ["watch", "other"] {
        start(
            &mut c,
            &s.id,
            json!({"name": name,
            "command": "sleep 1000 & echo \"grandchild:$!\"; echo \"self:$$\"; wait"}),
        )
        .await;
    }
    let mut pids = Vec::new();
    for name in ["watch", "other"] {
        let key = format!("{name}@emitters");
        let lines = eventually(&format!("{name}'s pids"), || {
            let (host, s, key) = (&host, &s, key.clone());
            async move {
                let l = stored(host, &s.id, &key).await;
                (l.len() == 2).then_some(l)
            }
        })
        .await;
        let ids: Vec<u32> = lines
            .iter()
            .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(ids.iter().all(|&p| alive(p)), "{lines:?}");
        pids.push(ids);
    }
    let stopped = c
        .ok(
            "emitters.stop",
            json!({"sessionId": s.id, "name": "watch", "force": true}),
        )
        .await;
    assert!(
        ["stopping", "stopped"].contains(&stopped["status"].as_str().unwrap()),
        "{stopped}"
    );
    eventually("the stopped group gone, grandchild included", || async {
        pids[0].iter().all(|&p| !alive(p)).then_some(())
    })
    .await;
    let runs = runs_until(&gw, &s.id, "watch", "the stopped run", ended).await;
    assert_eq!(runs[0]["status"], "stopped");
    assert!(
        pids[1].iter().all(|&p| alive(p)),
        "the other emitter runs on"
    );
    host.end_session(&s.id).await.unwrap();
    eventually("the ended session's emitters gone", || async {
        pids[1].iter().all(|&p| !alive(p)).then_some(())
    })
    .await;
    let l = c.ok("emitters.list", json!({"sessionId": s.id})).await;
    assert_eq!(l["emitters"], json!([]));
}

#[tokio::test]
async fn a_child_gets_no_tap_token_but_its_session_and_stream() {
    let gw = gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let token = gw.token();
    start(&mut c, &s.id, json!({"name": "env", "every": "1h", "stream": "envs",
        "command": format!("env | grep -c -- '{token}' || true; echo \"tokvar:${{TAP_PROVIDER_TOKEN:-none}}\"; echo \"sid:$TAP_SESSION_ID\"; echo \"stream:$TAP_STREAM\"")})).await;
    runs_until(&gw, &s.id, "env", "the run", ended).await;
    let lines = stored(&host, &s.id, "envs@emitters").await;
    assert_eq!(
        lines,
        [
            "stream:envs".to_string(),
            format!("sid:{}", s.id),
            "tokvar:none".into(),
            "0".into()
        ]
    );
}

#[tokio::test]
async fn limits_and_bad_definitions_are_refused_with_clear_errors() {
    let gw = gateway().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let bad = c
        .err(
            "emitters.start",
            json!({"sessionId": s.id, "name": "x", "command": "true",
        "eventFilter": [{"match": "ok", "outcome": "keep"}, {"match": "(", "outcome": "drop"}]}),
            "INVALID_JSON",
        )
        .await;
    assert!(bad.to_string().contains("eventFilter rule 1"), "{bad}");
    c.err(
        "emitters.start",
        json!({"sessionId": s.id, "name": "x", "command": "true", "prompt": "hi"}),
        "INVALID_JSON",
    )
    .await;
    c.err(
        "emitters.start",
        json!({"sessionId": s.id, "name": "x", "command": "true", "every": "soon"}),
        "INVALID_JSON",
    )
    .await;
    c.err(
        "emitters.start",
        json!({"sessionId": s.id, "name": "x", "command": "true", "cwd": "../.."}),
        "UNAUTHORIZED",
    )
    .await;
    c.err(
        "emitters.start",
        json!({"sessionId": "nope", "name": "x", "command": "true"}),
        "INVALID_SESSION",
    )
    .await;
    for i in 0..32 {
        start(
            &mut c,
            &s.id,
            json!({"name": format!("e{i}"), "every": "1h", "command": "true"}),
        )
        .await;
    }
    c.err(
        "emitters.start",
        json!({"sessionId": s.id, "name": "one-more", "command": "true"}),
        "RATE_LIMITED",
    )
    .await;
    // Replacing one of the 32 is not one more (and the user needs no force for their own).
    c.ok(
        "emitters.start",
        json!({"sessionId": s.id, "name": "e0", "command": "true"}),
    )
    .await;
    c.err(
        "emitters.runs",
        json!({"sessionId": s.id, "name": "missing"}),
        "NOT_FOUND",
    )
    .await;
    let t = c
        .ok(
            "emitters.testFilter",
            json!({"eventFilter": [{"match": "warn", "outcome": "surface"}], "line": "A WARNING"}),
        )
        .await;
    assert_eq!(t, json!({"rule": 0, "outcome": "surface"}));
    let t = c
        .ok(
            "emitters.testFilter",
            json!({"eventFilter": [], "line": "x"}),
        )
        .await;
    assert_eq!(t, json!({"outcome": "keep"}));
}

#[tokio::test]
async fn a_one_time_prompt_is_delivered_as_an_inject_with_its_prompt() {
    let gw = gateway().await;
    let (mut host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let e = start(
        &mut c,
        &s.id,
        json!({"name": "nudge", "prompt": "Run the tests and fix what fails."}),
    )
    .await;
    assert_eq!(
        (e["kind"].as_str(), e["schedule"].as_str()),
        (Some("prompt"), Some("oneTime"))
    );
    let d = match next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    };
    assert_eq!(
        d.prompt.as_deref(),
        Some("Run the tests and fix what fails.")
    );
    assert_eq!(d.level, tap_protocol::provider::PushLevel::Inject);
    let runs = runs_until(&gw, &s.id, "nudge", "the prompt's run", ended).await;
    assert_eq!(runs[0]["status"], "completed");
    status_becomes(&gw, &s.id, "nudge", "completed").await;
}

#[tokio::test]
async fn a_failing_continuous_command_is_restarted_and_max_runs_completes_it() {
    let gw = gateway().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    start(
        &mut c,
        &s.id,
        json!({"name": "flaky", "command": "echo try; exit 3",
        "restart": "on-failure", "maxRuns": 2}),
    )
    .await;
    let runs = runs_until(&gw, &s.id, "flaky", "two runs", |r| {
        r.len() == 2 && ended(r)
    })
    .await;
    assert_eq!(runs[0]["trigger"], "restart");
    assert_eq!(runs[1]["exitCode"], 3);
    assert_eq!(runs[1]["error"], "exited with code 3");
    status_becomes(&gw, &s.id, "flaky", "completed").await;
    let e = info(&gw, &s.id, "flaky");
    assert_eq!(e["lastError"], "exited with code 3");
}

#[tokio::test]
async fn long_lines_are_cut_stderr_only_when_asked_and_a_chatty_command_loses_nothing() {
    let gw = gateway().await;
    let (host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    start(
        &mut c,
        &s.id,
        json!({"name": "long", "every": "1h",
        "command": "head -c 70000 /dev/zero | tr '\\0' x; echo; echo oops >&2"}),
    )
    .await;
    start(
        &mut c,
        &s.id,
        json!({"name": "errs", "every": "1h", "includeStderr": true,
        "command": "echo oops >&2"}),
    )
    .await;
    start(
        &mut c,
        &s.id,
        json!({"name": "chatty", "every": "1h",
        "command": "yes tick | head -n 20000"}),
    )
    .await;
    for name in ["long", "errs", "chatty"] {
        runs_until(&gw, &s.id, name, name, ended).await;
    }
    let long = stored(&host, &s.id, "long@emitters").await;
    assert_eq!(long.len(), 1, "stderr is not routed without includeStderr");
    assert!(
        long[0].ends_with("… [line cut: 4464 more bytes]"),
        "{}",
        &long[0][long[0].len() - 40..]
    );
    assert_eq!(stored(&host, &s.id, "errs@emitters").await, ["oops"]);
    gw.handle.gateway().flush_history().await;
    let errs = c
        .ok("events.list", json!({"stream": "errs@emitters"}))
        .await;
    assert_eq!(errs["events"][0]["metadata"]["source"], "emitter:stderr");
    let e = info(&gw, &s.id, "chatty");
    assert_eq!(
        (e["counts"]["lines"].as_u64(), e["counts"]["kept"].as_u64()),
        (Some(20000), Some(20000))
    );
    let db =
        rusqlite::Connection::open(Path::new(&gw.dir.path().join("home/history.sqlite3"))).unwrap();
    // Stored in chunks (a row holds many lines), each line with an id of its own.
    let (n, rows): (i64, i64) = db
        .query_row(
            "SELECT sum(lines), count(*) FROM events WHERE stream = 'chatty'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(n, 20000, "every kept line in the ledger");
    assert!(rows < n / 10, "{rows} rows for {n} lines");
    // …and read back one by one, page by page.
    let (mut seen, mut before, mut last_id) = (0, None::<i64>, i64::MAX);
    loop {
        let page = c
            .ok(
                "events.list",
                json!({"stream": "chatty@emitters", "limit": 1000, "before": before}),
            )
            .await;
        for e in page["events"].as_array().unwrap() {
            assert_eq!(e["text"], "tick");
            let id = e["id"].as_i64().unwrap();
            assert!(id < last_id, "ids fall one line at a time");
            last_id = id;
            seen += 1;
        }
        match page["nextBefore"].as_i64() {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    assert_eq!(seen, 20000);
}

#[tokio::test]
async fn a_sessions_config_file_starts_its_emitters_and_names_the_bad_entries() {
    let gw = gateway().await;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("tap.config.json"),
        serde_json::to_string_pretty(&json!({"emitters": [
            {"name": "git-log", "command": "echo commit-1; echo merge-2", "runInterval": "5m",
             "channel": "history", "includePattern": "commit"},
            {"name": "array-form", "command": "echo a; echo b", "every": "1h",
             "eventFilter": {"rules": [{"match": "^b", "outcome": "drop"}]}},
            {"name": "later", "command": "echo x", "autoStart": false},
            {"name": "broken", "command": "true", "every": "whenever"},
            {"command": "true"}
        ]}))
        .unwrap(),
    )
    .unwrap();
    let mut host = gw.host().await;
    let s = host
        .register_session(tap_protocol::host::SessionRegister {
            cwd: Some(ws.path().display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut warnings = Vec::new();
    while warnings.len() < 2 {
        if let HostEvent::SessionWarning(w) =
            next_host_event(&mut host, |e| matches!(e, HostEvent::SessionWarning(_))).await
        {
            warnings.push(w.message);
        }
    }
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("emitters[3] ('broken')") && w.contains("'every'")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("emitters[4]") && w.contains("'name' is missing")),
        "{warnings:?}"
    );
    runs_until(&gw, &s.id, "git-log", "git-log's run", ended).await;
    runs_until(&gw, &s.id, "array-form", "array-form's run", ended).await;
    assert_eq!(
        stored(&host, &s.id, "history@emitters").await,
        ["commit-1"],
        "legacy include: the rest dropped"
    );
    assert_eq!(
        stored(&host, &s.id, "array-form@emitters").await,
        ["a"],
        "the {{rules}} form applies"
    );
    let list = gw.handle.gateway().emitters_list(Some(&s.id));
    let names: Vec<&str> = list.emitters.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["array-form", "git-log"],
        "autoStart false is not started"
    );
    assert_eq!(
        list.emitters[1].ownership,
        tap_protocol::emitters::Ownership::UserOwned
    );
    assert_eq!(list.warnings.len(), 2, "{:?}", list.warnings);
}

#[tokio::test]
async fn injects_wait_for_idle_batched_and_an_idle_prompt_runs_when_the_session_is_idle() {
    use tap_protocol::host::BusyState;
    let gw = gateway().await;
    let (mut host, s) = gw.host_with_session().await;
    host.set_state(&s.id, BusyState::Busy).unwrap();
    let (mut c, _) = Control::authed(&gw).await;
    start(
        &mut c,
        &s.id,
        json!({"name": "fails", "every": "1h",
               "command": "for i in 1 2 3 4 5 6; do echo \"FAIL $i\"; done",
               "eventFilter": [{"match": "fail", "outcome": "inject"}]}),
    )
    .await;
    // All six are in the stream while the agent is busy; none is delivered yet.
    eventually("six lines kept", || {
        let n = info(&gw, &s.id, "fails")["counts"]["injected"].as_u64();
        async move { (n == Some(6)).then_some(()) }
    })
    .await;
    start(
        &mut c,
        &s.id,
        json!({"name": "nudge", "every": "idle", "prompt": "Anything left?"}),
    )
    .await;
    host.set_state(&s.id, BusyState::Idle).unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        if let HostEvent::Delivery(d) =
            next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await
        {
            got.push(d);
        }
    }
    let batch = got
        .iter()
        .find(|d| d.prompt.is_none())
        .expect("the batched inject");
    assert_eq!(
        batch.event,
        "FAIL 1\nFAIL 2\nFAIL 3\nFAIL 4\n(+2 more lines from 'fails', in the stream)"
    );
    let nudge = got
        .iter()
        .find(|d| d.prompt.is_some())
        .expect("the idle prompt");
    assert_eq!(nudge.prompt.as_deref(), Some("Anything left?"));
    let runs = runs_until(
        &gw,
        &s.id,
        "fails",
        "the run ends once its injects are out",
        ended,
    )
    .await;
    assert_eq!(runs[0]["status"], "exited");
    assert_eq!(
        stored(&host, &s.id, "fails@emitters").await.len(),
        6,
        "nothing lost"
    );
}

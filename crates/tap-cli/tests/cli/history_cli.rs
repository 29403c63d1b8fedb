//! `tap streams history`, `tap streams export` and `tap traces` read the gateway's ledger
//! (`$TAP_HOME/history.sqlite3`): what a provider pushed is there after its session ended
//! and the gateway restarted, searchable, paged, exportable, with the pushes' traces.

use crate::common::{
    eventually, run, tap_command, CliOut, GatewayProcess, Provider, SessionOpen, PATIENCE,
};
use serde_json::{json, Value};

/// What the provider pushes, oldest first: (stream, level, text).
const PUSHES: [(&str, &str, &str); 5] = [
    ("ci", "keep", "build 1 started"),
    ("ci", "surface", "build 1 failed: linker error"),
    ("deploy", "keep", "deploy queued"),
    ("ci", "surface", "build 2 passed"),
    ("ci", "keep", "cache warmed"),
];

fn assert_failure(out: &CliOut, code: &str) -> String {
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], code, "{out:?}");
    v["error"].as_str().expect("error message").to_string()
}

/// `--json` output that must succeed, as an array.
fn json_array(out: &CliOut) -> Vec<Value> {
    assert_eq!(out.code(), Some(0), "{out:?}");
    out.json().as_array().cloned().expect("a JSON array")
}

/// A gateway whose history holds [`PUSHES`] of one session that has ended, and which
/// has been restarted since. Returns it and the old session's id.
async fn restarted_with_history() -> (GatewayProcess, String) {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &["--label", "before-restart"]).await;
    let id = session.id.clone();
    let mut p = gw.bound("prov", &id, json!([])).await;
    for (i, (stream, level, text)) in PUSHES.iter().enumerate() {
        p.send(
            json!({"type": "push", "level": level, "stream": stream, "event": text,
                      "metadata": {"step": i}}),
        )
        .await;
    }
    // In the ledger (the writer thread commits them)…
    eventually("the pushes in the ledger", || async {
        let out = gw
            .run(&["streams", "history", "--session", &id, "--json"])
            .await;
        (json_array(&out).len() == PUSHES.len()).then_some(())
    })
    .await;
    // …the session ends…
    end_session(session, &mut p).await;
    // …and the gateway stops and a new one starts on the same TAP_HOME.
    drop(p);
    let gw = gw.restart().await;
    (gw, id)
}

/// Ctrl-C to `tap session open`; the provider agrees at once.
async fn end_session(session: SessionOpen, p: &mut Provider) {
    let ending = tokio::spawn(session.interrupt());
    let pending = p.expect_next("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    p.send(json!({"type": "shutdown.ready", "sessionId": pending["sessionId"]}))
        .await;
    let (status, _) = ending.await.unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_sessions_events_are_there_after_a_restart() {
    let (gw, id) = restarted_with_history().await;
    assert_eq!(gw.status().await["sessions"], json!([]), "a fresh gateway");

    let events = json_array(
        &gw.run(&["streams", "history", "--session", &id, "--json"])
            .await,
    );
    let texts: Vec<&str> = events.iter().map(|e| e["text"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = PUSHES.iter().map(|p| p.2).collect();
    expected.reverse();
    assert_eq!(texts, expected, "newest first");
    let failed = &events[3];
    assert_eq!(failed["sessionId"], id.as_str());
    assert_eq!(failed["provider"], "prov");
    assert_eq!(failed["stream"], "ci");
    assert_eq!(failed["outcome"], "surface");
    assert_eq!(failed["metadata"], json!({"step": 1}));
    assert!(
        failed["id"].is_i64() && failed["ts"].is_string(),
        "{failed}"
    );
    assert!(
        failed["traceId"].is_string(),
        "a delivered push has a trace: {failed}"
    );
    assert!(events[4].get("traceId").is_none(), "a kept one has none");

    // The table names the session once, lists the events, and says there is no more.
    let out = gw.run(&["streams", "history", "--session", &id]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let mut lines = out.stdout.lines();
    assert_eq!(
        lines.next(),
        Some(format!("5 events in session {id}, newest first:").as_str())
    );
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("ID") && header.contains("OUTCOME"),
        "{header}"
    );
    assert!(!header.contains("SESSION"), "{header}");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 5, "{}", out.stdout);
    assert!(
        rows[3].contains("ci@prov") && rows[3].contains("surface"),
        "{}",
        out.stdout
    );
    assert!(
        rows[3].ends_with("build 1 failed: linker error"),
        "{}",
        out.stdout
    );

    // Every session's events, with the session (and its label) in a column.
    let out = gw.run(&["streams", "history"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.starts_with("5 events, newest first:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("{id} (before-restart)"))
            || out.stdout.contains(&id.to_string()),
        "{}",
        out.stdout
    );

    // A session the gateway never saw is still a mistake.
    let out = gw.run(&["streams", "history", "--session", "nope"]).await;
    let message = assert_failure(&out, "INVALID_SESSION");
    assert!(message.contains("nope"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_finds_by_word_and_by_stream_and_pages_back() {
    let (gw, id) = restarted_with_history().await;
    let history = |args: &[&str]| {
        let mut all = vec!["streams", "history", "--session", id.as_str()];
        all.extend_from_slice(args);
        let all: Vec<String> = all.into_iter().map(String::from).collect();
        let gw = &gw;
        async move {
            let args: Vec<&str> = all.iter().map(String::as_str).collect();
            gw.run(&args).await
        }
    };
    let texts = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };

    let found = json_array(&history(&["--search", "linker", "--json"]).await);
    assert_eq!(texts(&found), ["build 1 failed: linker error"]);
    let found = json_array(&history(&["--search", "build", "--json"]).await);
    assert_eq!(
        texts(&found),
        [
            "build 2 passed",
            "build 1 failed: linker error",
            "build 1 started"
        ]
    );
    let out = history(&["--search", "nothing-like-it"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        format!("No events matching \"nothing-like-it\" in session {id}.")
    );

    let deploy = json_array(&history(&["--stream", "deploy", "--json"]).await);
    assert_eq!(texts(&deploy), ["deploy queued"]);
    // The first form: the stream as an argument, `--last` for the page size.
    let ci = json_array(&history(&["ci@prov", "--last", "2", "--json"]).await);
    assert_eq!(texts(&ci), ["cache warmed", "build 2 passed"]);

    // Two at a time, each page pointing at the next, until the last says nothing.
    let mut pages = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut args = vec!["--limit", "2", "--json"];
        if let Some(b) = &before {
            args.extend(["--before", b.as_str()]);
        }
        let out = history(&args).await;
        let page = json_array(&out);
        pages.push(texts(&page));
        let hint = out
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("tap: older events: --before "));
        match hint {
            Some(n) => {
                assert_eq!(n, page.last().unwrap()["id"].to_string(), "{out:?}");
                // The table shows the same hint.
                let mut table_args = vec!["--limit", "2"];
                if let Some(b) = &before {
                    table_args.extend(["--before", b.as_str()]);
                }
                let table = history(&table_args).await;
                assert!(
                    table
                        .stdout
                        .trim_end()
                        .ends_with(&format!("Older events: add --before {n}")),
                    "{table:?}"
                );
                before = Some(n.to_string());
            }
            None => break,
        }
        assert!(pages.len() < 5, "paging does not end: {pages:?}");
    }
    let mut expected: Vec<String> = PUSHES.iter().map(|p| p.2.to_string()).collect();
    expected.reverse();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert_eq!(pages.concat(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_every_event_oldest_first_as_json_lines() {
    let (gw, id) = restarted_with_history().await;
    let file = gw.dir.path().join("events.jsonl");
    for page_size in ["1000", "2", "1"] {
        // `tap streams export … > events.jsonl`
        let mut cmd = gw.tap();
        cmd.args([
            "streams",
            "export",
            "--session",
            &id,
            "--page-size",
            page_size,
        ])
        .stdout(std::fs::File::create(&file).unwrap())
        .stderr(std::process::Stdio::piped());
        // (`output()` would capture stdout instead of writing the file.)
        let child = cmd.spawn().unwrap();
        let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
            .await
            .expect("tap streams export finishes")
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "page size {page_size}: {stderr}");
        assert!(stderr.contains("tap: exported 5 events"), "{stderr}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.ends_with('\n'), "{text}");
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let texts: Vec<&str> = events.iter().map(|e| e["text"].as_str().unwrap()).collect();
        let expected: Vec<&str> = PUSHES.iter().map(|p| p.2).collect();
        assert_eq!(texts, expected, "page size {page_size}: oldest first");
        let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert!(events.iter().all(|e| e["sessionId"] == id.as_str()));
    }

    // Filters: a stream; a time window that holds nothing yet.
    let out = gw.run(&["streams", "export", "--stream", "deploy"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "{out:?}");
    let out = gw.run(&["streams", "export", "--since", "1h"]).await;
    assert_eq!(out.stdout.lines().count(), 5, "{out:?}");
    let out = gw.run(&["streams", "export", "--since", "banana"]).await;
    assert_eq!(
        out.code(),
        Some(2),
        "a bad duration is a usage error: {out:?}"
    );
    let out = gw.run(&["streams", "export", "--session", "nope"]).await;
    assert_failure(&out, "INVALID_SESSION");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_previous_runs_push_traces_are_listed_and_shown() {
    let (gw, id) = restarted_with_history().await;
    // Sessions starting and ending are traces too; pushes are these tests' subject.
    let traces = json_array(
        &gw.run(&["traces", "list", "--name", "push", "--json"])
            .await,
    );
    assert_eq!(traces.len(), 2, "one per delivered push: {traces:?}");
    for t in &traces {
        assert_eq!(t["name"], "push", "{t}");
        assert_eq!(t["sessionId"], id.as_str(), "{t}");
        assert_eq!(t["provider"], "prov", "{t}");
        assert_eq!(t["status"], "ok", "{t}");
        assert_eq!(t["spans"], 2, "push and delivery: {t}");
        assert_eq!(t["traceId"].as_str().unwrap().len(), 32, "{t}");
    }
    assert!(
        traces[0]["startUs"].as_u64() >= traces[1]["startUs"].as_u64(),
        "newest first"
    );
    // The event carries its push's trace.
    let events = json_array(
        &gw.run(&["streams", "history", "--search", "linker", "--json"])
            .await,
    );
    let trace_id = events[0]["traceId"].as_str().unwrap().to_string();
    assert_eq!(traces[1]["traceId"], trace_id.as_str());

    // Filters reach the gateway.
    for (args, n) in [
        (vec!["--session", id.as_str(), "--name", "push"], 2),
        (vec!["--session", "other"], 0),
        (vec!["--status", "error"], 0),
        (vec!["--status", "ok", "--provider", "prov"], 2),
        (vec!["--name", "push", "--since", "1h"], 2),
        (vec!["--min-duration", "1h"], 0),
        (vec!["--limit", "1"], 1),
    ] {
        let mut all = vec!["traces", "list", "--json"];
        all.extend(&args);
        let out = gw.run(&all).await;
        assert_eq!(json_array(&out).len(), n, "{args:?}: {out:?}");
    }

    // The table: a header, a row per trace with its id.
    let out = gw.run(&["traces", "list", "--name", "push"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("TIME") && lines[0].ends_with("TRACE"),
        "{}",
        out.stdout
    );
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[2].ends_with(&trace_id), "{}", out.stdout);
    assert!(
        lines[2].contains(" push ") && lines[2].contains(&id),
        "{}",
        out.stdout
    );

    // The waterfall: delivery under push, bars, the push's attributes.
    let out = gw.run(&["traces", "show", &trace_id]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("Trace {trace_id}")),
        "{}",
        out.stdout
    );
    assert!(lines[0].contains("2 spans"), "{}", out.stdout);
    assert!(
        lines[1].starts_with("push ") && lines[1].contains('█'),
        "{}",
        out.stdout
    );
    assert!(lines[1].ends_with(" ok"), "{}", out.stdout);
    assert!(out.stdout.contains("stream=ci"), "{}", out.stdout);
    let delivery = lines
        .iter()
        .find(|l| l.starts_with("  delivery "))
        .unwrap_or_else(|| panic!("no delivery span under push: {}", out.stdout));
    assert!(delivery.ends_with(" ok"), "{}", out.stdout);

    let out = gw.run(&["traces", "show", &trace_id, "--json"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let spans = out.json()["spans"].as_array().cloned().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["push", "delivery"]);
    assert_eq!(spans[1]["parentSpanId"], spans[0]["spanId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_trace_is_not_found() {
    let gw = GatewayProcess::start().await;
    let out = gw
        .run(&["traces", "show", "0123456789abcdef0123456789abcdef"])
        .await;
    let message = assert_failure(&out, "NOT_FOUND");
    assert!(
        message.contains("0123456789abcdef0123456789abcdef"),
        "{message}"
    );
    let out = gw.run(&["traces", "list"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "No traces.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_kept_in_memory_is_said_on_stderr() {
    // A directory where the database file should be: the gateway keeps history in memory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home").join("history.sqlite3")).unwrap();
    let gw = GatewayProcess::start_in(dir, &[]).await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("prov", &session.id, json!([])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "s", "event": "in memory"}))
        .await;
    let out = eventually("the push in the history", || async {
        let out = gw.run(&["streams", "history", "--json"]).await;
        (json_array(&out).len() == 1).then_some(out)
    })
    .await;
    let notes: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("tap: note:"))
        .collect();
    assert_eq!(notes.len(), 1, "{out:?}");
    assert!(notes[0].contains("not being saved"), "{out:?}");
    for args in [&["traces", "list"][..], &["streams", "export"]] {
        let out = gw.run(args).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        assert!(
            out.stderr
                .contains("tap: note: history is not being saved ("),
            "{args:?}: {out:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gateway_the_history_commands_say_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let commands: [&[&str]; 4] = [
        &["streams", "history"],
        &["streams", "export"],
        &["traces", "list"],
        &["traces", "show", "0123456789abcdef0123456789abcdef"],
    ];
    for args in commands {
        let mut cmd = tap_command(&home, &dir.path().join("copilot"));
        cmd.args(args);
        let out = run(cmd).await;
        let message = assert_failure(&out, "DISCONNECTED");
        assert!(message.contains("tap gateway"), "tap {args:?}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_pushed_just_before_sigterm_are_in_the_next_runs_history() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("prov", &session.id, json!([])).await;
    const N: usize = 300;
    for i in 0..N {
        p.send(json!({"type": "push", "level": "keep", "stream": "s", "event": format!("e{i}")}))
            .await;
    }
    // Answered once the gateway has handled every push before it (one connection's
    // messages are handled in order); the ledger's writer may still be behind.
    p.send(json!({"type": "stream.query", "queryId": "q", "stream": "s"}))
        .await;
    p.expect_next("stream.history").await;
    // Stop at once; the graceful stop ends the session (the provider agrees).
    let restarting = tokio::spawn(gw.restart());
    let pending = p.expect_next("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    p.send(json!({"type": "shutdown.ready", "sessionId": session.id}))
        .await;
    let gw = restarting.await.unwrap();
    let out = gw
        .run(&["streams", "export", "--session", &session.id])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.stdout.lines().count(), N, "{}", out.stderr);
}

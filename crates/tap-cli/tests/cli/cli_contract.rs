//! The `tap` command's contract: output shapes, error codes and exit codes of `tap call`,
//! `tap status --json`, `tap streams history`, `tap session open` and `tap gateway`,
//! against a real `tap gateway` child and scripted providers on real sockets.

use crate::common;
use crate::common::{run, tap_command, tool, GatewayProcess, Proc, SessionOpen};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

/// `{"errorCode": code, "error": non-empty}` on stdout and exit 1.
fn assert_failure(out: &common::CliOut, code: &str) -> String {
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], code, "{out:?}");
    let message = v["error"].as_str().expect("error message").to_string();
    assert!(!message.is_empty(), "{out:?}");
    assert_eq!(
        v.as_object().unwrap().len(),
        2,
        "only errorCode and error: {v}"
    );
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_unknown_tool_or_session_fails_with_code() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &["--label", "x"]).await;
    let _p = gw.bound("prov", &session.id, json!([tool("known")])).await;
    gw.wait_for_tool(&session.id, "known").await;

    let out = gw
        .run(&["call", "--session", &session.id, "nosuch", "{}"])
        .await;
    let message = assert_failure(&out, "NOT_FOUND");
    assert!(message.contains("nosuch"), "{message}");

    let out = gw
        .run(&["call", "--session", "no-such-session", "known", "{}"])
        .await;
    assert_failure(&out, "INVALID_SESSION");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_result_is_the_data_as_json_and_args_reach_the_provider() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("prov", &session.id, json!([tool("echo")])).await;
    gw.wait_for_tool(&session.id, "echo").await;

    let mut call = gw.tap();
    call.args([
        "call",
        "--session",
        &session.id,
        "echo",
        r#"{"a":[1,2],"b":"x"}"#,
    ]);
    let caller = tokio::spawn(run(call));
    let c = p.expect_next("tool.call").await;
    assert_eq!(c["tool"], "echo");
    assert_eq!(c["sessionId"], session.id.as_str());
    assert_eq!(c["args"], json!({"a": [1, 2], "b": "x"}));
    p.send(json!({"type": "tool.result", "id": c["id"], "data": {"got": c["args"]}}))
        .await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!({"got": {"a": [1, 2], "b": "x"}}));

    // Without ARGS_JSON the provider gets `{}`; a provider failure is exit 1 with its code.
    let mut call = gw.tap();
    call.args(["call", "--session", &session.id, "echo"]);
    let caller = tokio::spawn(run(call));
    let c = p.expect_next("tool.call").await;
    assert_eq!(c["args"], json!({}));
    p.send(json!({"type": "tool.result", "id": c["id"],
                  "error": "disk on fire", "errorCode": "INTERNAL"}))
        .await;
    let out = caller.await.unwrap();
    let message = assert_failure(&out, "INTERNAL");
    assert_eq!(message, "disk on fire");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_with_bad_args_json_is_invalid_json() {
    // The arguments are checked before any gateway is looked for.
    let dir = tempfile::tempdir().unwrap();
    for bad in [r#"{"name":"#, "not json", "[1,2]", "42"] {
        let mut cmd = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
        cmd.args(["call", "--session", "s", "greet", bad]);
        let out = run(cmd).await;
        assert_failure(&out, "INVALID_JSON");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_without_a_gateway_say_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let commands: [&[&str]; 4] = [
        &["call", "--session", "s", "greet", "{}"],
        &["status", "--json"],
        &["session", "open"],
        &["streams", "history", "--session", "s", "--json"],
    ];
    for args in commands {
        let mut cmd = tap_command(&home, &dir.path().join("copilot"));
        cmd.args(args);
        let out = run(cmd).await;
        let message = assert_failure(&out, "DISCONNECTED");
        assert!(
            message.contains("tap gateway"),
            "tap {args:?} should mention `tap gateway`: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_lists_sessions_and_providers() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &["--label", "x", "--cwd", "/tmp/work"]).await;
    let _bound = gw
        .bound("prov", &session.id, json!([tool("b"), tool("a")]))
        .await;
    let (_waiting, sessions) = gw.authed().await;
    assert_eq!(sessions["active"][0]["id"], session.id.as_str());
    assert_eq!(sessions["active"][0]["label"], "x");

    let status = gw.wait_for_tool(&session.id, "a").await;
    assert_eq!(status["address"], gw.url.as_str());
    assert!(status["uptimeMs"].is_u64(), "{status}");
    assert!(status["version"].is_string(), "{status}");
    assert!(status["startedAt"].is_string(), "{status}");

    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{status}");
    let s = &sessions[0];
    assert_eq!(s["id"], session.id.as_str());
    assert_eq!(s["label"], "x");
    assert_eq!(s["cwd"], "/tmp/work");
    assert_eq!(s["foreground"], true);
    assert_eq!(s["state"], "idle");
    assert_eq!(s["hostDetached"], false);
    assert_eq!(s["tools"], json!(["a", "b"]));

    let providers = status["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 2, "{status}");
    let by_state = |state: &str| {
        providers
            .iter()
            .find(|p| p["state"] == state)
            .unwrap_or_else(|| panic!("no {state} provider: {status}"))
    };
    let bound = by_state("bound");
    assert_eq!(bound["name"], "prov");
    assert_eq!(bound["state"], "bound");
    assert_eq!(bound["session"], session.id.as_str());
    assert_eq!(bound["trust"], "project");
    assert_eq!(bound["tools"], json!(["b", "a"]));
    assert_eq!(bound["inFlight"], 0);
    let waiting = by_state("awaitHello");
    assert!(waiting.get("name").is_none(), "{waiting}");
    assert_eq!(waiting["tools"], json!([]));

    // The human-readable form names the address and the session.
    let out = gw.run(&["status"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains(&gw.url), "{}", out.stdout);
    assert!(out.stdout.contains(&session.id), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_history_shows_pushed_events() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("prov", &session.id, json!([])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "ci", "event": "build 1 ok"}))
        .await;
    p.send(
        json!({"type": "push", "level": "surface", "stream": "ci", "event": "build 2 failed",
                  "metadata": {"run": 2}}),
    )
    .await;
    p.send(json!({"type": "push", "level": "keep", "event": "default stream"}))
        .await;
    // The history is the ledger, which a writer thread fills: wait for all three.
    let args = ["streams", "history", "--session", &session.id, "--json"];
    let v = common::eventually("three stored events", || async {
        let out = gw.run(&args).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        let v = out.json();
        (v.as_array().map(Vec::len) == Some(3)).then_some(v)
    })
    .await;
    // An array, newest first, every stream of the session.
    assert_eq!(v[0]["text"], "default stream", "newest first: {v}");
    assert_eq!(
        v[0]["stream"], "prov",
        "the default stream is the provider's name"
    );
    assert_eq!(v[0]["outcome"], "keep");
    let failed = &v[1];
    assert_eq!(failed["text"], "build 2 failed");
    assert_eq!(failed["stream"], "ci");
    assert_eq!(failed["provider"], "prov");
    assert_eq!(failed["sessionId"], session.id.as_str());
    assert_eq!(failed["outcome"], "surface");
    assert_eq!(failed["metadata"], json!({"run": 2}));
    assert!(
        failed["ts"].is_string() && failed["id"].is_i64(),
        "{failed}"
    );
    assert_eq!(v[2]["text"], "build 1 ok");

    // One stream, newest N (the first form: STREAM as an argument, --last).
    let out = gw
        .run(&[
            "streams",
            "history",
            "--session",
            &session.id,
            "ci",
            "--last",
            "1",
            "--json",
        ])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let v = out.json();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["text"], "build 2 failed");

    // An unknown session is an error in the contract's shape.
    let out = gw
        .run(&["streams", "history", "--session", "nope", "--json"])
        .await;
    assert_failure(&out, "INVALID_SESSION");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_open_prints_id_then_deliveries() {
    let gw = GatewayProcess::start().await;
    let mut session = SessionOpen::open(&gw, &["--id", "my-session", "--label", "x"]).await;
    assert_eq!(session.first_line, json!({"sessionId": "my-session"}));
    let mut p = gw.bound("prov", "my-session", json!([tool("t")])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "ci", "event": "stored only"}))
        .await;
    p.send(
        json!({"type": "push", "level": "surface", "stream": "ci", "event": "build failed",
                  "metadata": {"job": "test"}}),
    )
    .await;
    let d = session
        .wait_for("a delivery", |v| v["type"] == "delivery")
        .await;
    assert_eq!(d["sessionId"], "my-session");
    assert_eq!(d["level"], "surface");
    assert_eq!(d["stream"], "ci");
    assert_eq!(d["provider"], "prov");
    assert_eq!(
        d["event"], "build failed",
        "keep-level pushes are not delivered"
    );
    assert_eq!(d["metadata"], json!({"job": "test"}));
    assert!(d["ts"].is_string(), "{d}");

    // Ctrl-C ends the session: the provider is told, and the command exits 0.
    let ending = tokio::spawn(session.interrupt());
    let pending = p.expect_next("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    assert_eq!(pending["sessionId"], "my-session");
    p.send(json!({"type": "shutdown.ready", "sessionId": "my-session"}))
        .await;
    let (status, _) = ending.await.unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(gw.status().await["sessions"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_open_with_an_id_in_use_is_refused() {
    let gw = GatewayProcess::start().await;
    let first = SessionOpen::open(&gw, &["--id", "taken", "--background"]).await;
    let out = gw.run(&["session", "open", "--id", "taken"]).await;
    assert_failure(&out, "INVALID_SESSION");
    let status = gw.status().await;
    assert_eq!(status["sessions"].as_array().unwrap().len(), 1, "{status}");
    assert_eq!(status["sessions"][0]["id"], "taken");
    assert_eq!(status["sessions"][0]["foreground"], false);
    drop(first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_exits_at_once_with_130() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    // A provider that ignores shutdown.pending: the graceful end would wait 10 s.
    let mut p = gw.bound("deaf", &session.id, json!([])).await;
    let pid = session.proc.pid();
    let ending = tokio::spawn(session.interrupt_twice(pid));
    let pending = p.expect_next("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending");
    common::signal(pid, "INT");
    let (status, log) = ending.await.unwrap();
    assert_eq!(status.code(), Some(130), "{log}");
    assert!(log.contains("tap: second signal, exiting now"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_right_after_start_still_stops_cleanly() {
    // The handlers are installed before the files are written: a supervisor that stops
    // the gateway as soon as gateway.json appears gets a clean stop, not a killed
    // process with stale token files.
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let mut cmd = tap_command(&home, &dir.path().join("copilot"));
        cmd.args(["gateway", "--listen", "127.0.0.1:0"]);
        let mut gw = Proc::spawn("gateway", cmd, dir.path(), false);
        let deadline = std::time::Instant::now() + common::PATIENCE;
        while !home.join("gateway.json").exists() {
            assert!(std::time::Instant::now() < deadline, "no gateway.json");
            assert!(gw.exited().is_none(), "gateway exited early");
            tokio::task::yield_now().await;
        }
        gw.signal("TERM");
        let exit = gw.wait().await;
        assert_eq!(exit.code(), Some(0), "{exit}: {}", gw.log());
        for f in ["gateway.json", "provider-token", "host-token"] {
            assert!(!home.join(f).exists(), "{f} left behind");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_help_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = |args: &[&str]| {
        let mut c = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
        c.args(args);
        c
    };
    let out = run(cmd(&["--version"])).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains(env!("CARGO_PKG_VERSION")), "{out:?}");
    let out = run(cmd(&["call", "--help"])).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("--session"), "{out:?}");
    for bad in [
        &["frobnicate"][..],
        &["status", "--bogus"],
        &["gateway", "--listen", "localhost:9400"],
        &["call", "greet"],
    ] {
        let out = run(cmd(bad)).await;
        assert_eq!(out.code(), Some(2), "tap {bad:?}: {out:?}");
        assert!(out.stdout.is_empty(), "usage errors go to stderr: {out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_refuses_a_port_held_by_another_gateway() {
    let gw = GatewayProcess::start().await;
    let state_before = std::fs::read_to_string(gw.home.join("gateway.json")).unwrap();
    let other = tempfile::tempdir().unwrap();
    let mut cmd = tap_command(&other.path().join("home"), &other.path().join("copilot"));
    cmd.args(["gateway", "--listen", &gw.addr]);
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("another Tap gateway"), "{}", out.stderr);
    assert!(!other.path().join("home").join("gateway.json").exists());
    // The running gateway is untouched.
    assert_eq!(
        std::fs::read_to_string(gw.home.join("gateway.json")).unwrap(),
        state_before
    );
    gw.status().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_refuses_a_tap_home_in_use_by_a_running_gateway() {
    let gw = GatewayProcess::start().await;
    let files_before: Vec<String> = gw
        .token_files()
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    // Another port, the same TAP_HOME.
    let mut cmd = gw.tap();
    cmd.args(["gateway", "--listen", "127.0.0.1:0"]);
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("another Tap gateway is already running for"),
        "{}",
        out.stderr
    );
    let files_after: Vec<String> = gw
        .token_files()
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert_eq!(
        files_before, files_after,
        "the first gateway's files untouched"
    );
    gw.status().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_replaces_a_stale_state_file() {
    // What a crashed gateway leaves: files pointing at a port nobody serves.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let stale = json!({"address": format!("ws://{dead_addr}"), "pid": 1,
                       "startedAt": "2026-01-01T00:00:00.000Z", "version": "0.1.0"});
    std::fs::write(home.join("gateway.json"), stale.to_string()).unwrap();
    std::fs::write(home.join("host-token"), "htk-stale").unwrap();

    // CLI commands meanwhile fail with DISCONNECTED.
    let mut cmd = tap_command(&home, &dir.path().join("copilot"));
    cmd.args(["status", "--json"]);
    assert_failure(&run(cmd).await, "DISCONNECTED");

    let mut cmd = tap_command(&home, &dir.path().join("copilot"));
    cmd.args(["gateway", "--listen", "127.0.0.1:0"]);
    let mut gw = Proc::spawn("gateway", cmd, dir.path(), false);
    let pid = gw.pid();
    common::eventually("the new gateway.json", || {
        let exited = gw.exited();
        let home = &home;
        async move {
            assert!(exited.is_none(), "the gateway exited: {exited:?}");
            let text = std::fs::read_to_string(home.join("gateway.json")).ok()?;
            let state: Value = serde_json::from_str(&text).ok()?;
            (state["pid"] == pid).then_some(())
        }
    })
    .await;
    let mut cmd = tap_command(&home, &dir.path().join("copilot"));
    cmd.args(["status", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    gw.signal("TERM");
    assert_eq!(gw.wait().await.code(), Some(0));
    assert!(!home.join("gateway.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_refuses_a_port_held_by_another_program() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = holder.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
    cmd.args(["gateway", "--listen", &addr]);
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("in use by another program"),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("home").join("gateway.json").exists());
    drop(holder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_refuses_non_loopback_addresses() {
    let dir = tempfile::tempdir().unwrap();
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let mut cmd = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
        cmd.args(["gateway", "--listen", listen]);
        let out = run(cmd).await;
        assert_eq!(out.code(), Some(2), "{listen}: {out:?}");
        assert!(out.stderr.contains("loopback"), "{}", out.stderr);
        assert!(!dir.path().join("home").exists(), "nothing written");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_an_inflight_call_ends_it_and_stops_cleanly() {
    let mut gw = GatewayProcess::start().await;
    let mut session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("slow", &session.id, json!([tool("hang")])).await;
    gw.wait_for_tool(&session.id, "hang").await;

    let mut call = gw.tap();
    call.args(["call", "--session", &session.id, "hang", "{}"]);
    let mut caller = Proc::spawn("tap-call", call, gw.log_dir(), true);
    let mut caller_stdout = caller.child.stdout.take().unwrap();
    let c = p.expect_next("tool.call").await;
    let call_id = c["id"].as_str().unwrap().to_string();

    // SIGTERM: the session ends (the provider is told), the call never answered by the
    // provider gets its terminal result, and the gateway exits 0.
    gw.proc.signal("TERM");
    let pending = p.expect_next("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    assert!(pending["deadline"].is_u64(), "{pending}");
    p.send(json!({"type": "shutdown.ready", "sessionId": session.id}))
        .await;
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call_id.as_str());
    assert_eq!(cancel["reason"], "session ended");

    let exit = caller.wait().await;
    let mut out = String::new();
    caller_stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(exit.code(), Some(1), "tap call: {out}");
    let v: Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["errorCode"], "CANCELLED", "{v}");
    assert!(v["error"].as_str().is_some_and(|m| !m.is_empty()), "{v}");

    let exit = gw.proc.wait().await;
    assert_eq!(exit.code(), Some(0), "gateway exit: {exit}");
    gw.assert_files_removed();

    // The session host saw its session end, then lost the gateway.
    let mut lines = Vec::new();
    while let Some(v) = session.next_line().await {
        lines.push(v);
    }
    let ended = lines
        .iter()
        .find(|v| v["type"] == "session.ended")
        .unwrap_or_else(|| panic!("no session.ended line: {lines:?}"));
    assert_eq!(ended["sessionId"], session.id.as_str());
    assert_eq!(
        lines.last().unwrap(),
        &json!({"errorCode": "DISCONNECTED", "error": "the gateway closed the connection"})
    );
    assert_eq!(session.proc.wait().await.code(), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_cancels_an_inflight_call() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut p = gw.bound("slow", &session.id, json!([tool("hang")])).await;
    gw.wait_for_tool(&session.id, "hang").await;

    let mut call = gw.tap();
    call.args(["call", "--session", &session.id, "hang"]);
    let mut caller = Proc::spawn("tap-call", call, gw.log_dir(), true);
    let mut caller_stdout = caller.child.stdout.take().unwrap();
    let c = p.expect_next("tool.call").await;

    caller.signal("INT");
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], c["id"]);
    assert_eq!(cancel["reason"], "cancelled");
    let exit = caller.wait().await;
    let mut out = String::new();
    caller_stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(exit.code(), Some(1), "tap call: {out}");
    let v: Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["errorCode"], "CANCELLED", "{v}");

    // A late result for the cancelled call is ignored silently: the next message the
    // provider gets is the answer to its query, not an error.
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "late"}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    let next = p.recv().await;
    assert_eq!(next["type"], "stream.history", "{next}");
    let status = gw.status().await;
    let provider = &status["providers"][0];
    assert_eq!(provider["state"], "bound", "{status}");
    assert_eq!(provider["inFlight"], 0, "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_into_a_pipe_closed_early_ends_quietly() {
    let gw = GatewayProcess::start().await;
    // `tap status --json | head -c 0`: the reader is gone before tap writes.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd = gw.tap();
    cmd.args(["status", "--json"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped());
    // Not `output()`: it would capture stdout itself.
    let out = cmd
        .spawn()
        .expect("tap starts")
        .wait_with_output()
        .await
        .expect("tap runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

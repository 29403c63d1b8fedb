//! `tap emitters`: emitters started from the CLI in a real `tap session open` session of a
//! real `tap gateway`, running real child processes; their runs, their lines in the
//! session's streams and the ledger, stopping one, the filter's tester and the errors.

use crate::common::{
    eventually, processes_matching, run, tap_command, CliOut, GatewayProcess, SessionOpen,
};
use serde_json::{json, Value};

fn assert_failure(out: &CliOut, code: &str) -> String {
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], code, "{out:?}");
    v["error"].as_str().expect("error message").to_string()
}

/// Output that must succeed.
fn ok(out: &CliOut) -> &str {
    assert_eq!(out.code(), Some(0), "{out:?}");
    &out.stdout
}

/// `tap emitters list --session ID --json`, which must succeed.
async fn listed(gw: &GatewayProcess, session: &str) -> Vec<Value> {
    let out = gw
        .run(&["emitters", "list", "--session", session, "--json"])
        .await;
    out.json().as_array().cloned().expect("a JSON array")
}

/// `tap emitters runs NAME --session ID --json`, which must succeed.
async fn runs_of(gw: &GatewayProcess, session: &str, name: &str) -> Vec<Value> {
    let out = gw
        .run(&["emitters", "runs", name, "--session", session, "--json"])
        .await;
    ok(&out);
    out.json().as_array().cloned().expect("a JSON array")
}

/// Kills, when dropped, every process whose command line holds its needle: a test that
/// fails before `stop` kills the gateway with SIGKILL, which leaves the emitter's process
/// group running (its parent is gone, it is re-parented to init).
struct KillLeftovers(String);

impl Drop for KillLeftovers {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(&self.0)
            {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// `sleep SECS.NNNNNNNNN`: a command line no other test runs, to find in /proc.
fn unique_sleep(secs: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("sleep {secs}.{nanos:09}")
}

/// A gateway whose commands see a `HOME` of their own: emitters run `bash -lc`, and a login
/// shell runs the user's startup files, which here may block (`pyenv init` in `~/.bashrc`
/// takes a machine-wide lock that a killed shell can leave behind, stalling every login
/// shell for 60 s). The tests are about tap, not about the machine's dotfiles.
async fn gateway() -> GatewayProcess {
    let dir = tempfile::tempdir().expect("tempdir");
    GatewayProcess::start_in_with(dir, &[], |cmd, dir| {
        let home = dir.join("user-home");
        std::fs::create_dir_all(&home).expect("create HOME");
        cmd.env("HOME", home);
    })
    .await
}

/// A session whose working directory is the gateway's private directory.
async fn session(gw: &GatewayProcess) -> SessionOpen {
    let cwd = gw.log_dir().to_str().unwrap().to_string();
    SessionOpen::open(gw, &["--cwd", &cwd]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_command_runs_once_and_its_filter_drops_a_line() {
    let gw = gateway().await;
    let s = session(&gw).await;
    let id = s.id.as_str();

    let out = gw
        .run(&[
            "emitters",
            "start",
            "--session",
            id,
            "counter",
            "--command",
            "for i in 1 2 3; do echo line-$i; done",
            "--every",
            "1h",
            "--filter",
            "^line-2$=drop",
            "--description",
            "counts to three",
            "--json",
        ])
        .await;
    ok(&out);
    let started = out.json();
    assert_eq!(started["name"], "counter", "{started}");
    assert_eq!(started["sessionId"], id);
    assert_eq!(started["kind"], "command");
    assert_eq!(started["command"], "for i in 1 2 3; do echo line-$i; done");
    assert_eq!(started["schedule"], "timed");
    assert_eq!(started["every"], "1h");
    assert_eq!(started["stream"], "counter");
    assert_eq!(
        started["eventFilter"],
        json!([{"match": "^line-2$", "outcome": "drop"}])
    );
    assert_eq!(started["description"], "counts to three");

    // One run (the next is an hour away), which ends by itself with exit 0.
    let runs = eventually("the first run ended", || async {
        let runs = runs_of(&gw, id, "counter").await;
        (runs.len() == 1 && runs[0].get("endedAt").is_some()).then_some(runs)
    })
    .await;
    let r = &runs[0];
    assert_eq!(r["run"], 1, "{r}");
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["exitCode"], 0, "{r}");
    assert_eq!(r["lines"]["lines"], 3, "{r}");
    assert_eq!(r["lines"]["kept"], 2, "{r}");
    assert_eq!(r["lines"]["dropped"], 1, "{r}");
    assert!(
        r["traceId"].is_string() && r["startedAt"].is_string(),
        "{r}"
    );

    let out = gw
        .run(&["emitters", "runs", "counter", "--session", id])
        .await;
    let text = ok(&out);
    assert!(
        text.starts_with(&format!(
            "1 run of emitter counter in session {id}, newest first:"
        )),
        "{text}"
    );
    let row = text.lines().nth(2).expect("a run row");
    assert!(
        row.starts_with('1') && row.contains("exited") && row.contains("3/2/1/0/0"),
        "{text}"
    );

    // The kept lines are in the session's stream, in the ledger.
    let kept = eventually("the kept lines in the history", || async {
        let out = gw
            .run(&[
                "streams",
                "history",
                "--session",
                id,
                "--stream",
                "counter",
                "--json",
            ])
            .await;
        ok(&out);
        let kept: Vec<String> = out
            .json()
            .as_array()?
            .iter()
            .filter(|e| e["outcome"] == "keep")
            .map(|e| e["text"].as_str().unwrap_or_default().trim().to_string())
            .collect();
        (kept.len() == 2).then_some(kept)
    })
    .await;
    assert_eq!(kept, ["line-3", "line-1"], "newest first");
    let out = gw
        .run(&["streams", "history", "--session", id, "--stream", "counter"])
        .await;
    let text = ok(&out);
    assert!(text.contains("line-1") && text.contains("line-3"), "{text}");

    // `list --json`: the emitter with its totals, waiting for its next run.
    let e = eventually("the list's totals", || async {
        let list = listed(&gw, id).await;
        let e = list.into_iter().find(|e| e["name"] == "counter")?;
        (e["counts"]["lines"] == 3).then_some(e)
    })
    .await;
    assert_eq!(e["sessionId"], id, "{e}");
    assert_eq!(e["runCount"], 1, "{e}");
    assert_eq!(
        e["counts"],
        json!({"lines": 3, "kept": 2, "dropped": 1, "surfaced": 0, "injected": 0}),
        "{e}"
    );
    assert_eq!(e["status"], "waiting", "{e}");
    assert!(e["nextRunAt"].is_string(), "{e}");
    assert!(
        e["lifespan"].is_string() && e["ownership"].is_string(),
        "{e}"
    );
    assert!(e.get("lastError").is_none(), "{e}");

    // The table: one row, with what it runs when and what came of it.
    let out = gw.run(&["emitters", "list", "--session", id]).await;
    let text = ok(&out);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("STATUS") && header.contains("NEXT RUN"),
        "{text}"
    );
    let row = lines.next().expect("a row");
    assert!(
        row.starts_with("counter")
            && row.contains(id)
            && row.contains("every 1h")
            && row.contains("waiting")
            && row.contains("3/2/1/0/0"),
        "{text}"
    );
    assert_eq!(lines.next(), None, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_continuous_emitter_ends_its_process() {
    let gw = gateway().await;
    let s = session(&gw).await;
    let id = s.id.as_str();
    let sleep = unique_sleep(1000);
    let _leftovers = KillLeftovers(sleep.clone());

    let out = gw
        .run(&[
            "emitters",
            "start",
            "--session",
            id,
            "sleeper",
            "--command",
            &sleep,
        ])
        .await;
    let text = ok(&out);
    assert!(
        text.starts_with(&format!("Started emitter sleeper in session {id}: ")),
        "{text}"
    );
    assert!(text.contains("continuous"), "{text}");
    eventually("the sleep running", || async {
        (!processes_matching(&sleep).is_empty()).then_some(())
    })
    .await;
    let runs = runs_of(&gw, id, "sleeper").await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "running", "{runs:?}");

    // Started from the CLI, it is the user's: the user stops it without --force (only the
    // agent needs force for the user's emitters).
    let out = gw
        .run(&["emitters", "stop", "--session", id, "sleeper", "--json"])
        .await;
    ok(&out);
    let stopped = out.json();
    assert_eq!(stopped["name"], "sleeper", "{stopped}");
    assert!(
        stopped["status"] == "stopping" || stopped["status"] == "stopped",
        "{stopped}"
    );
    eventually("the emitter stopped", || async {
        let list = listed(&gw, id).await;
        list.iter()
            .any(|e| e["name"] == "sleeper" && e["status"] == "stopped")
            .then_some(())
    })
    .await;
    eventually("the sleep gone", || async {
        processes_matching(&sleep).is_empty().then_some(())
    })
    .await;
    let runs = runs_of(&gw, id, "sleeper").await;
    assert_eq!(runs[0]["status"], "stopped", "{runs:?}");
    assert!(runs[0]["endedAt"].is_string(), "{runs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_regex_is_refused_naming_its_rule() {
    let gw = gateway().await;
    let s = session(&gw).await;
    let id = s.id.as_str();
    let out = gw
        .run(&[
            "emitters",
            "start",
            "--session",
            id,
            "broken",
            "--command",
            "echo hi",
            "--filter",
            "ok=keep",
            "--filter",
            "(unclosed=drop",
        ])
        .await;
    let message = assert_failure(&out, "INVALID_JSON");
    assert!(
        message.contains("rule 1") && message.contains("(unclosed"),
        "{message}"
    );
    assert_eq!(out.stdout.trim().lines().count(), 1, "one line: {out:?}");
    // Nothing started.
    let out = gw.run(&["emitters", "list", "--session", id]).await;
    assert_eq!(ok(&out).trim(), format!("No emitters in session {id}."));

    let out = gw
        .run(&["emitters", "test-filter", "--filter", "[z-a]=drop", "x"])
        .await;
    let message = assert_failure(&out, "INVALID_JSON");
    assert!(message.contains("[z-a]"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_filter_names_the_rule_that_decides() {
    let gw = gateway().await;
    let rules = [
        "--filter",
        "error=inject",
        "--filter",
        "warn|error=surface",
        "--filter",
        "^debug=drop",
    ];
    let test = |line: &'static str, json: bool| {
        let mut args = vec!["emitters", "test-filter"];
        args.extend(rules);
        args.push(line);
        if json {
            args.push("--json");
        }
        let gw = &gw;
        async move { gw.run(&args).await }
    };

    let out = test("a WARNING here", false).await;
    assert_eq!(
        ok(&out).trim(),
        "surface: the 2nd --filter, 'warn|error' → surface, matches"
    );
    let out = test("a WARNING here", true).await;
    ok(&out);
    assert_eq!(out.json(), json!({"rule": 1, "outcome": "surface"}));

    let out = test("Build ERROR", true).await;
    ok(&out);
    assert_eq!(out.json(), json!({"rule": 0, "outcome": "inject"}));

    let out = test("all good", false).await;
    assert_eq!(
        ok(&out).trim(),
        "keep: no rule matches (a line no rule matches is kept)"
    );
    let out = test("all good", true).await;
    ok(&out);
    assert_eq!(out.json(), json!({"outcome": "keep"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_sessions_and_emitters_are_refused() {
    let gw = gateway().await;
    let s = session(&gw).await;
    let id = s.id.as_str();
    let out = gw
        .run(&[
            "emitters",
            "start",
            "--session",
            "no-such-session",
            "x",
            "--command",
            "true",
        ])
        .await;
    assert_failure(&out, "INVALID_SESSION");
    let out = gw
        .run(&["emitters", "stop", "--session", id, "nobody"])
        .await;
    let message = assert_failure(&out, "NOT_FOUND");
    assert!(message.contains("nobody"), "{message}");
    let out = gw
        .run(&["emitters", "runs", "nobody", "--session", id])
        .await;
    assert_failure(&out, "NOT_FOUND");
}

/// What clap refuses before anything is sent (exit 2), and no gateway (exit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_and_no_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let tap = |args: &[&str]| {
        let mut cmd = tap_command(&home, &dir.path().join("copilot"));
        cmd.args(args);
        run(cmd)
    };

    let start = ["emitters", "start", "--session", "s-1", "x"];
    let usage: [&[&str]; 6] = [
        &[&start[..], &["--command", "true", "--filter", "x=shout"]].concat(),
        &[&start[..], &["--command", "true", "--filter", "no-outcome"]].concat(),
        &start,
        &[&start[..], &["--command", "true", "--prompt", "hi"]].concat(),
        &[&start[..], &["--command", "true", "--max-runs", "0"]].concat(),
        &["emitters", "test-filter", "a line"],
    ];
    for args in usage {
        let out = tap(args).await;
        assert_eq!(out.code(), Some(2), "tap {args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "tap {args:?}: {out:?}");
    }
    let out = tap(usage[0]).await;
    assert!(
        out.stderr.contains("'shout'") && out.stderr.contains("drop, keep, surface, inject"),
        "{}",
        out.stderr
    );

    let commands: [&[&str]; 5] = [
        &["emitters", "list"],
        &[&start[..], &["--command", "true"]].concat(),
        &["emitters", "stop", "--session", "s-1", "x"],
        &["emitters", "runs", "x", "--session", "s-1"],
        &["emitters", "test-filter", "--filter", "a=drop", "a line"],
    ];
    for args in commands {
        let message = assert_failure(&tap(args).await, "DISCONNECTED");
        assert!(message.contains("tap gateway"), "tap {args:?}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_files_bad_entries_are_warnings_on_stderr() {
    let gw = gateway().await;
    let ws = gw.log_dir().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("tap.config.json"),
        json!({"emitters": [
            {"name": "hourly", "command": "echo hi", "every": "1h"},
            {"name": "broken", "command": "true", "every": "whenever"}
        ]})
        .to_string(),
    )
    .unwrap();
    let s = SessionOpen::open(&gw, &["--cwd", ws.to_str().unwrap()]).await;
    let id = s.id.as_str();
    let out = eventually("the configured emitter and the warning", || async {
        let out = gw
            .run(&["emitters", "list", "--session", id, "--json"])
            .await;
        ok(&out);
        let listed = out.json().as_array().cloned().unwrap_or_default();
        (listed.len() == 1 && out.stderr.contains("broken")).then_some(out)
    })
    .await;
    let e = &out.json()[0];
    assert_eq!(e["name"], "hourly", "{e}");
    assert_eq!(e["ownership"], "userOwned", "{e}");
    let warnings: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].starts_with("tap: warning: ") && warnings[0].contains("'every'"),
        "{}",
        out.stderr
    );

    let out = gw.run(&["emitters", "list", "--session", id]).await;
    let text = ok(&out);
    assert!(text.starts_with("NAME"), "{text}");
    assert!(out.stderr.starts_with("tap: warning: "), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emitters_a_killed_gateway_left_running_are_stopped_by_the_next_one() {
    let gw = gateway().await;
    let s = session(&gw).await;
    let sleep = unique_sleep(1001);
    let _leftovers = KillLeftovers(sleep.clone());
    // The command and a grandchild in the background.
    let command = format!("{sleep} & {sleep}");
    let out = gw
        .run(&[
            "emitters",
            "start",
            "--session",
            &s.id,
            "pair",
            "--command",
            &command,
        ])
        .await;
    ok(&out);
    // The sleeps themselves (the shell's own command line holds the needle too).
    let sleeps = || {
        processes_matching(&sleep)
            .iter()
            .filter(|l| l.starts_with("sleep "))
            .count()
    };
    eventually("both sleeps running", || async {
        (sleeps() == 2).then_some(())
    })
    .await;

    // SIGKILL: the gateway cannot stop anything; the group is re-parented and runs on.
    let GatewayProcess { mut proc, dir, .. } = gw;
    proc.signal("KILL");
    proc.wait().await;
    drop(proc);
    assert_eq!(sleeps(), 2, "orphaned, still running");

    // The next gateway on the same TAP_HOME stops them before it serves.
    let _next = GatewayProcess::start_in_with(dir, &[], |cmd, dir| {
        cmd.env("HOME", dir.join("user-home"));
    })
    .await;
    eventually("the orphaned sleeps gone", || async {
        (sleeps() == 0).then_some(())
    })
    .await;
}

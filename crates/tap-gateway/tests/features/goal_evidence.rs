//! Goal evidence (issue 40): `tap_verify_goal_output` and `tap_audit_claims` called by the
//! agent through its session host on a real gateway, against real files in a temporary
//! workspace (the session's cwd), the session's own streams (memory and the ledger) and
//! output the caller supplies; results kept in the session's `goals` stream. The fence:
//! `..`, absolute paths, symlinks out, dangling symlinks, a FIFO, a session without a cwd.
//! Hostile arguments: huge files read only up to the cap, too many checks, giant and costly
//! patterns, a pattern that backtracks catastrophically elsewhere.

use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use tap_client::HostClient;
use tap_protocol::host::SessionRegister;
use tap_protocol::provider::SessionInfo;
use tap_testkit::*;

/// A session whose workspace is `dir` (or none).
async fn session(host: &HostClient, label: &str, cwd: Option<&Path>) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some(label.into()),
        cwd: cwd.map(|d| d.display().to_string()),
        foreground: true,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Each expectation's `status` and `reason`.
fn statuses(answer: &Value, key: &str) -> Vec<(String, String)> {
    answer[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {answer}"))
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(
        root.join("report.json"),
        r#"{"status": "ok", "count": 3, "items": [{"name": "alpha"}]}"#,
    )
    .unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/notes.txt"), "step one\nALL DONE here\n").unwrap();
    (dir, root)
}

#[tokio::test]
async fn a_goal_is_checked_against_files_streams_and_supplied_output_and_recorded() {
    let gw = TestGateway::start().await;
    let (_dir, root) = workspace();
    let host = gw.host().await;
    let s = session(&host, "goal", Some(&root)).await;
    call_ok(
        &host,
        &s.id,
        "tap_post",
        json!({"channel": "ci", "message": "build 7 passed"}),
    )
    .await;

    let a = call_ok(
&host,
        &s.id,
        "tap_verify_goal_output",
        json!({"goal": "ship the report", "expectations": [
            {"kind": "file", "id": "report", "path": "report.json"},
            {"kind": "file", "path": "out/../out/notes.txt", "pattern": "ALL DONE"},
            {"kind": "file", "path": "report.json", "json": {"pointer": "/status", "equals": "ok"}},
            {"kind": "file", "path": "report.json", "json": {"pointer": "/items/0/name", "pattern": "^al"}},
            {"kind": "file", "path": "report.json", "json": {"pointer": "/count", "equals": 4}},
            {"kind": "file", "path": "report.json", "json": {"pointer": "/missing"}},
            {"kind": "file", "path": "out/notes.txt", "pattern": "FAIL", "absent": true},
            {"kind": "file", "path": "out/later.txt"},
            {"kind": "file", "path": "out/later.txt", "exists": false},
            {"kind": "stream", "stream": "ci", "pattern": "build \\d+ passed"},
            {"kind": "stream", "stream": "ci", "minCount": 2},
            {"kind": "command", "command": "cargo test", "output": "test result: ok. 12 passed", "exitCode": 0,
             "pattern": "test result: ok", "expectExitCode": 0},
            {"kind": "command", "command": "make", "exitCode": 2, "expectExitCode": 0}
        ]}),
    )
    .await;
    let got = statuses(&a, "expectations");
    let want = [
        ("verified", "exists ("),
        ("verified", "matched at line 2: \"ALL DONE here\""),
        ("verified", "the value at '/status' is \"ok\""),
        ("verified", "the value at '/items/0/name' is \"alpha\""),
        ("failed", "the value at '/count' is 3, not 4"),
        ("failed", "has no value at '/missing'"),
        ("verified", "the pattern is not in the file"),
        ("failed", "does not exist"),
        ("verified", "does not exist"),
        (
            "verified",
            "1 matching events in 1 events: \"build 7 passed\"",
        ),
        ("failed", "1 events in 1 events; 2 wanted"),
        ("verified", "exited with 0; matched at line 1"),
        ("failed", "exited with 2, not 0"),
    ];
    assert_eq!(got.len(), want.len(), "{a}");
    for (i, ((status, reason), (ws, wr))) in got.iter().zip(want).enumerate() {
        assert_eq!(status, ws, "expectation {i}: {reason}");
        assert!(
            reason.starts_with(wr),
            "expectation {i}: {reason} (want {wr}…)"
        );
    }
    assert_eq!(a["met"], false);
    assert_eq!(
        (a["verified"].as_u64(), a["failed"].as_u64()),
        (Some(8), Some(5))
    );
    assert_eq!(a["expectations"][0]["id"], "report");
    assert_eq!(a["expectations"][1]["target"], "out/../out/notes.txt");
    assert_eq!(a["recorded"], "goals@emitters");

    // The results are kept in the session's goals stream, and in the ledger.
    let h = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "goals"}),
    )
    .await;
    let kept = &h["streams"]["goals@emitters"][0];
    let text = kept["event"].as_str().unwrap();
    assert!(
        text.starts_with("goal not met: 8 of 13 expectations verified (ship the report)"),
        "{text}"
    );
    assert!(
        text.contains("\nfailed file report.json: the value at '/count' is 3, not 4"),
        "{text}"
    );
    assert_eq!(kept["metadata"]["source"], "tap_verify_goal_output");
    assert_eq!(kept["metadata"]["result"]["met"], false);
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let page = c
        .ok(
            "events.list",
            json!({"sessionId": s.id, "stream": "goals@emitters"}),
        )
        .await;
    assert!(
        page["events"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("goal not met"),
        "{page}"
    );

    // A goal whose expectations all hold is met, and so recorded.
    let a = call_ok(
&host,
        &s.id,
        "tap_verify_goal_output",
        json!({"expectations": [{"kind": "stream", "stream": "goals", "pattern": "^goal not met"}]}),
    )
    .await;
    assert_eq!(a["met"], true, "{a}");
    let h = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "goals"}),
    )
    .await;
    assert!(h["streams"]["goals@emitters"][0]["event"]
        .as_str()
        .unwrap()
        .starts_with("goal met: 1 of 1 expectations verified"));
}

#[tokio::test]
async fn claims_are_verified_contradicted_or_unverified_by_their_evidence() {
    let gw = TestGateway::start().await;
    let (_dir, root) = workspace();
    let host = gw.host().await;
    let s = session(&host, "audit", Some(&root)).await;
    let other = session(&host, "other", Some(&root)).await;
    call_ok(
        &host,
        &other.id,
        "tap_post",
        json!({"channel": "deploys", "message": "deployed v2"}),
    )
    .await;
    let a = call_ok(
&host,
        &s.id,
        "tap_audit_claims",
        json!({"claims": [
            {"claim": "The report says ok and the tests pass", "evidence": [
                {"kind": "file", "path": "report.json", "json": {"pointer": "/status", "equals": "ok"}},
                {"kind": "command", "command": "pytest", "output": "5 passed in 0.1s", "pattern": "\\d+ passed"}
            ]},
            {"claim": "There are four items", "evidence": [
                {"kind": "file", "path": "report.json", "json": {"pointer": "/count", "equals": 4}},
                {"kind": "stream", "stream": "nowhere"}
            ]},
            {"claim": "I refactored the parser"},
            {"claim": "v2 was deployed", "evidence": [
                {"kind": "stream", "stream": "deploys", "pattern": "deployed v2"}
            ]},
            {"claim": "No test failed", "evidence": [
                {"kind": "command", "command": "pytest", "output": "1 failed, 4 passed", "pattern": "failed", "absent": true}
            ]}
        ]}),
    )
    .await;
    let got = statuses(&a, "claims");
    assert_eq!(
        got[0],
        ("verified".into(), "all 2 evidence items hold".into()),
        "{a}"
    );
    assert_eq!(got[1].0, "contradicted", "{a}");
    assert!(
        got[1]
            .1
            .starts_with("evidence 0 (file report.json): the value at '/count' is 3, not 4"),
        "{}",
        got[1].1
    );
    assert_eq!(a["claims"][1]["evidence"][1]["status"], "unverified");
    assert_eq!(got[2], ("unverified".into(), "it cites no evidence".into()));
    // Another session's stream is not this one's evidence.
    assert_eq!(got[3].0, "unverified", "{a}");
    assert!(
        got[3].1.contains("this session has no stream 'deploys'"),
        "{}",
        got[3].1
    );
    assert_eq!(got[4].0, "contradicted");
    assert!(
        got[4].1.contains("found at line 1: \"1 failed, 4 passed\""),
        "{}",
        got[4].1
    );
    assert_eq!(
        (&a["verified"], &a["contradicted"], &a["unverified"]),
        (&json!(1), &json!(2), &json!(2))
    );
    let h = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "goals"}),
    )
    .await;
    let kept = &h["streams"]["goals@emitters"][0];
    assert!(kept["event"].as_str().unwrap().starts_with(
        "claims audited: 1 verified, 2 contradicted, 2 unverified\nverified: The report says ok"
    ));
    assert_eq!(kept["metadata"]["source"], "tap_audit_claims");
}

#[tokio::test]
async fn a_stream_is_searched_past_its_memory_in_the_ledger() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let s = session(&host, "long", None).await;
    call_ok(
        &host,
        &s.id,
        "tap_post",
        json!({"channel": "build", "message": "first: marker"}),
    )
    .await;
    for i in 0..250 {
        call_ok(
            &host,
            &s.id,
            "tap_post",
            json!({"channel": "build", "message": format!("line {i}")}),
        )
        .await;
    }
    let mem = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "build", "limit": 200}),
    )
    .await;
    let events = mem["streams"]["build@emitters"].as_array().unwrap();
    assert!(
        events.iter().all(|e| e["event"] != "first: marker"),
        "evicted from memory"
    );
    let a = call_ok(
        &host,
        &s.id,
        "tap_verify_goal_output",
        json!({"expectations": [
            {"kind": "stream", "stream": "build", "pattern": "^first: marker$"},
            {"kind": "stream", "stream": "build", "pattern": "^line \\d+$", "minCount": 250},
            {"kind": "stream", "stream": "build", "pattern": "^line 9999$", "absent": true},
            {"kind": "stream", "stream": "build", "minCount": 252}
        ]}),
    )
    .await;
    let got = statuses(&a, "expectations");
    assert_eq!(got[0].0, "verified", "{a}");
    assert_eq!(
        got[0].1,
        "1 matching events in 251 events: \"first: marker\""
    );
    assert_eq!(got[1].1, "250 matching events in 251 events: \"line 249\"");
    assert_eq!(
        got[2],
        ("verified".into(), "none of its 251 events match".into())
    );
    assert_eq!(
        got[3],
        (
            "failed".into(),
            "251 events in 251 events; 252 wanted".into()
        )
    );
}

#[tokio::test]
async fn file_evidence_stays_inside_the_workspace() {
    let gw = TestGateway::start().await;
    let (_dir, root) = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOKEN=abc").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
    std::os::unix::fs::symlink(root.join("report.json"), root.join("inside.json")).unwrap();
    let fifo = root.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let secret = outside.path().join("secret.txt").display().to_string();
    let host = gw.host().await;
    let s = session(&host, "fenced", Some(&root.join("out"))).await;
    let a = call_ok(
        &host,
        &s.id,
        "tap_verify_goal_output",
        json!({"expectations": [
            {"kind": "file", "path": "../report.json"},
            {"kind": "file", "path": "../elsewhere/secret.txt", "pattern": "TOKEN"},
            {"kind": "file", "path": secret, "pattern": "TOKEN"},
            {"kind": "file", "path": "../../x/../missing", "exists": false},
            {"kind": "file", "path": "notes.txt", "pattern": "DONE"}
        ]}),
    )
    .await;
    let got = statuses(&a, "expectations");
    for (i, (status, reason)) in got.iter().take(4).enumerate() {
        assert_eq!(status, "failed", "{i}: {reason}");
        assert!(reason.starts_with("Refused: '"), "{i}: {reason}");
        assert!(
            reason.contains("leaves the session's workspace"),
            "{i}: {reason}"
        );
        assert!(!reason.contains("TOKEN"), "{i}: {reason}");
    }
    assert_eq!(
        got[4].0, "verified",
        "the workspace itself is readable: {a}"
    );

    let s = session(&host, "root", Some(&root)).await;
    let a = call_ok(
        &host,
        &s.id,
        "tap_audit_claims",
        json!({"claims": [{"claim": "links", "evidence": [
            {"kind": "file", "path": "link.txt", "pattern": "TOKEN"},
            {"kind": "file", "path": "elsewhere/missing.txt", "exists": false},
            {"kind": "file", "path": "dangling", "exists": false},
            {"kind": "file", "path": "new/../../x", "exists": false},
            {"kind": "file", "path": "pipe", "pattern": "x"},
            {"kind": "file", "path": "inside.json", "json": {"pointer": "/status", "equals": "ok"}},
            {"kind": "file", "path": "out", "pattern": "x"}
        ]}]}),
    )
    .await;
    let ev: Vec<(&str, &str)> = a["claims"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["status"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    assert!(ev[0].1.contains("leaves the session's workspace"), "{ev:?}");
    assert!(ev[1].1.contains("leaves the session's workspace"), "{ev:?}");
    assert!(
        ev[2].1.contains("is a symlink whose target does not exist"),
        "{ev:?}"
    );
    assert!(
        ev[3]
            .1
            .contains("climbs ('..') out of a directory that does not exist"),
        "{ev:?}"
    );
    assert!(
        ev[4].1.starts_with("is not a regular file"),
        "a FIFO is not opened: {ev:?}"
    );
    assert_eq!(ev[5].0, "verified", "a symlink inside is followed: {ev:?}");
    assert!(
        ev[6].1.starts_with("is not a regular file (a directory)"),
        "{ev:?}"
    );
    for (status, _) in ev.iter().take(5) {
        assert_eq!(*status, "unverified", "{ev:?}");
    }
    assert_eq!(a["claims"][0]["status"], "unverified");

    // A session without a working directory checks no file, and says why.
    let s = session(&host, "nowhere", None).await;
    let a = call_ok(
        &host,
        &s.id,
        "tap_verify_goal_output",
        json!({"expectations": [{"kind": "file", "path": "report.json"},
                                {"kind": "command", "exitCode": 0, "expectExitCode": 0}]}),
    )
    .await;
    let got = statuses(&a, "expectations");
    assert_eq!(got[0].0, "failed");
    assert!(
        got[0]
            .1
            .starts_with("Refused: this session has no working directory"),
        "{}",
        got[0].1
    );
    assert_eq!(got[1].0, "verified", "other evidence still is checked");
}

#[tokio::test]
async fn hostile_arguments_are_bounded() {
    let gw = TestGateway::start().await;
    let (_dir, root) = workspace();
    // 3 MiB: a line at the start, one past the cap.
    let mut big = String::from("HEAD marker\n");
    big.push_str(&"a".repeat(3 * 1024 * 1024));
    big.push_str("\nTAIL marker\n");
    std::fs::write(root.join("big.log"), &big).unwrap();
    std::fs::write(
        root.join("big.json"),
        format!("{{\"pad\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)),
    )
    .unwrap();
    std::fs::write(root.join("aaa.txt"), "a".repeat(1024 * 1024)).unwrap();
    let host = gw.host().await;
    let s = session(&host, "hostile", Some(&root)).await;

    let started = Instant::now();
    let a = call_ok(
        &host,
        &s.id,
        "tap_verify_goal_output",
        json!({"expectations": [
            {"kind": "file", "path": "big.log", "pattern": "HEAD marker"},
            {"kind": "file", "path": "big.log", "pattern": "TAIL marker"},
            {"kind": "file", "path": "big.log", "pattern": "TAIL marker", "absent": true},
            {"kind": "file", "path": "big.json", "json": {"pointer": "/pad"}},
            // Catastrophic for a backtracking engine; linear here.
            {"kind": "file", "path": "aaa.txt", "pattern": "^(a|aa)+$"},
            {"kind": "file", "path": "aaa.txt", "pattern": "(a*)*b"}
        ]}),
    )
    .await;
    let got = statuses(&a, "expectations");
    assert_eq!(got[0].0, "verified", "{a}");
    assert_eq!(got[1].0, "failed");
    assert!(
        got[1]
            .1
            .starts_with("the pattern is not in the first 1048576 bytes of"),
        "{}",
        got[1].1
    );
    assert!(
        got[2].1.contains("first 1048576 bytes"),
        "unverified either way: {}",
        got[2].1
    );
    assert!(
        got[3].1.contains("files over 1048576 bytes are not parsed"),
        "{}",
        got[3].1
    );
    assert_eq!(got[4].0, "verified", "{a}");
    assert_eq!(got[5].0, "failed");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    let refused = |args: Value| {
        let host = &host;
        let id = s.id.clone();
        async move {
            let r = call_tool(host, &id, "tap_verify_goal_output", args).await;
            (code(&r).map(str::to_string), r.error.unwrap_or_default())
        }
    };
    let one = json!({"kind": "command", "exitCode": 0, "expectExitCode": 0});
    // Too many expectations: the schema refuses.
    let (c, _) = refused(json!({"expectations": vec![one.clone(); 65]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    // Too many checks across claims, each claim within bounds.
    let claim = json!({"claim": "c", "evidence": [one.clone(), one.clone()]});
    let r = call_tool(
        &host,
        &s.id,
        "tap_audit_claims",
        json!({"claims": vec![claim; 33]}),
    )
    .await;
    assert_eq!(code(&r), Some("INVALID_JSON"));
    assert!(r.error.unwrap().contains("more than 64 evidence items"));
    // A giant pattern; patterns too large together; one too costly to compile; not a regex.
    let item = |p: String| json!({"kind": "command", "output": "x", "pattern": p});
    let (c, _) = refused(json!({"expectations": [item("a".repeat(5000))]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    let (c, e) = refused(json!({"expectations": vec![item("b".repeat(4000)); 5]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    assert!(
        e.contains("patterns are 20000 bytes together; at most 16384"),
        "{e}"
    );
    let (c, e) = refused(
        json!({"expectations": [item("(?i)[\\S][\\S][\\S][\\S][\\S][\\S][\\S][\\S]".into())]}),
    )
    .await;
    assert_eq!(c.as_deref(), Some("PAYLOAD_TOO_LARGE"), "{e}");
    let (c, e) = refused(json!({"expectations": [item("(a)\\1".into())]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    assert!(
        e.contains("expectations[0]: 'pattern' is not a valid regex"),
        "{e}"
    );
    // Malformed items are named.
    let (c, e) = refused(json!({"expectations": [{"kind": "file"}]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    assert!(
        e.contains("expectations[0]: file evidence needs 'path'"),
        "{e}"
    );
    let (_, e) =
        refused(json!({"expectations": [{"kind": "stream", "stream": "s", "path": "x"}]})).await;
    assert!(
        e.contains("expectations[0]: 'path' is not for stream evidence"),
        "{e}"
    );
    let (_, e) = refused(json!({"expectations": [{"kind": "command", "output": "x"}]})).await;
    assert!(e.contains("command evidence needs 'pattern'"), "{e}");
    let (c, _) =
        refused(json!({"expectations": [{"kind": "file", "path": "x".repeat(5000)}]})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"), "a path past its bound");
    let (c, _) = refused(json!({"expectations": [{"kind": "command", "command": "c", "output": "x".repeat(300 * 1024), "pattern": "x"}]})).await;
    assert_eq!(
        c.as_deref(),
        Some("INVALID_JSON"),
        "an output past its bound"
    );
    // Nothing refused was recorded.
    let h = call_ok(
        &host,
        &s.id,
        "tap_stream_history",
        json!({"channel": "goals"}),
    )
    .await;
    assert_eq!(
        h["streams"]["goals@emitters"].as_array().unwrap().len(),
        1,
        "{h}"
    );
}

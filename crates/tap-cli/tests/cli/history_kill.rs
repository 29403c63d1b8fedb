//! History survives a `kill -9` of the real `tap gateway` (issue 11, "Faults"): events the
//! ledger committed before the kill are all in the file, which opens cleanly (SQLite's
//! write-ahead log), and a new gateway on the same TAP_HOME takes it over.

use crate::common::*;
use serde_json::json;
use std::path::Path;
use tap_testkit::Provider;

/// Pushes `count` keep events named `prefix-N` and returns once the gateway handled them
/// (an unknown type's error comes back in order).
async fn push(p: &mut Provider, prefix: &str, count: usize) {
    for i in 0..count {
        p.send(json!({"type": "push", "level": "keep", "stream": "log",
                      "event": format!("{prefix}-{i}")}))
            .await;
    }
    p.fence().await;
}

/// Events whose text starts with `prefix` in the history file, read directly.
fn count(db: &Path, prefix: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("the history file opens");
    conn.query_row(
        "SELECT count(*) FROM events WHERE text LIKE ?1 || '-%'",
        [prefix],
        |r| r.get(0),
    )
    .expect("events can be counted")
}

/// Starts another `tap gateway` on `gw`'s TAP_HOME (after `gw`'s process is gone) and
/// waits for its `gateway.json`.
async fn start_again(gw: &GatewayProcess) -> tap_testkit::Proc {
    let mut cmd = tap_command(&gw.home, &gw.copilot_home);
    cmd.args(["gateway", "--listen", "127.0.0.1:0"]);
    let state_file = gw.home.join("gateway.json");
    std::fs::remove_file(&state_file).ok();
    let next = tap_testkit::Proc::spawn("gateway-again", cmd, gw.log_dir(), false);
    eventually("the new gateway's gateway.json", || async {
        std::fs::read_to_string(&state_file).ok().map(|_| ())
    })
    .await;
    next
}

#[tokio::test]
async fn tap_status_says_when_history_is_in_memory_only_and_why() {
    let mut gw = GatewayProcess::start().await;
    assert!(gw.terminate().await.success());
    std::fs::write(gw.home.join("history.sqlite3"), vec![7u8; 8192]).unwrap();
    let mut next = start_again(&gw).await;
    let out = gw.run(&["status"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let text = &out.stdout;
    assert!(text.contains("History: IN MEMORY ONLY"), "{text}");
    assert!(text.contains("not a SQLite database"), "{text}");
    next.signal("TERM");
    assert!(next.wait().await.success());
}

#[tokio::test]
async fn after_kill_9_the_history_opens_cleanly_and_holds_every_committed_event() {
    let mut gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &["--label", "killed"]).await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    let db = gw.home.join("history.sqlite3");

    push(&mut p, "committed", 500).await;
    // Committed: a reader of the file (another process's view) sees all of them.
    eventually("the first 500 events committed", || async {
        (count(&db, "committed") == 500).then_some(())
    })
    .await;
    // More in flight, then the kill: the queue and an open transaction die with it.
    for i in 0..2000 {
        p.send(json!({"type": "push", "level": "keep", "stream": "log",
                      "event": format!("inflight-{i}")}))
            .await;
    }
    gw.proc.signal("KILL");
    let status = gw.proc.wait().await;
    assert!(!status.success(), "killed: {status}");

    let conn = rusqlite::Connection::open(&db).expect("the history file opens after the kill");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    assert_eq!(count(&db, "committed"), 500, "nothing committed was lost");
    let inflight = count(&db, "inflight");
    assert!((0..=2000).contains(&inflight), "{inflight}");

    // A new gateway on the same TAP_HOME writes to the same file.
    let mut next = start_again(&gw).await;
    let out = gw.run(&["status", "--json"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json()["history"]["durable"], true, "{out:?}");
    next.signal("TERM");
    assert!(next.wait().await.success());
    assert_eq!(count(&db, "committed"), 500);
    drop(session);
}

//! History (issue 11): the ledger keeps stream events (a filter's drops included) across a
//! session's end and a gateway restart on the same TAP_HOME, searches and pages them,
//! remembers sessions after they end, trims by age and size with injected time, and a
//! database file that cannot be used leaves the gateway running with history in memory.

use serde_json::{json, Value};
use std::time::{Duration, SystemTime};
use tap_gateway::{GatewayConfig, GatewayHandle};
use tap_testkit::*;

fn home(gw: &TestGateway) -> std::path::PathBuf {
    gw.dir.path().join("home")
}

/// Stops `gw` gracefully and starts a new gateway on the same TAP_HOME.
async fn restart(gw: TestGateway) -> TestGateway {
    let TestGateway { handle, dir } = gw;
    handle.stop().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = GatewayHandle::start(listener, GatewayConfig::new(dir.path().join("home")))
        .await
        .unwrap();
    TestGateway { handle, dir }
}

fn texts(page: &Value) -> Vec<&str> {
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn events_outlive_their_session_and_a_restart_and_can_be_searched_and_paged() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("ci", &s.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "stream": "build",
                  "rules": [{"match": "noise", "outcome": "drop"}]}),
    )
    .await;
    p.expect("ack").await;
    for text in [
        "build started on linux",
        "noise line",
        "build failed: lint",
        "tests passed",
    ] {
        p.send(
            json!({"type": "push", "level": "keep", "stream": "build", "event": text,
                      "metadata": {"job": "ci-42"}}),
        )
        .await;
    }
    p.fence().await;
    let stored = stored(&host, &s.id, "build@ci").await;
    assert_eq!(stored.len(), 3, "{stored:?}");
    host.end_session(&s.id).await.unwrap();
    drop(p);
    let gw = restart(gw).await;

    let (mut c, _) = Control::authed(&gw).await;
    let page = c.ok("events.list", json!({"sessionId": s.id})).await;
    assert_eq!(
        texts(&page),
        [
            "tests passed",
            "build failed: lint",
            "noise line",
            "build started on linux"
        ]
    );
    assert_eq!(page["ledger"]["durable"], true, "{page}");
    let dropped = &page["events"][2];
    assert_eq!(
        dropped["outcome"], "drop",
        "the filter's drop is on the record"
    );
    assert_eq!(page["events"][0]["metadata"]["job"], "ci-42");
    assert_eq!(page["events"][0]["provider"], "ci");
    assert_eq!(page["events"][0]["stream"], "build");

    let found = c.ok("events.list", json!({"search": "started lin"})).await;
    assert_eq!(
        texts(&found),
        ["build started on linux"],
        "words as prefixes, all of them"
    );
    let prefix = c.ok("events.list", json!({"search": "lin"})).await;
    assert_eq!(
        texts(&prefix).len(),
        3,
        "'lin' is a prefix of linux, lint and line"
    );
    let by_metadata = c.ok("events.list", json!({"search": "ci-42"})).await;
    assert_eq!(by_metadata["events"].as_array().unwrap().len(), 4);
    let odd = c
        .ok("events.list", json!({"search": "\"unbalanced AND ("}))
        .await;
    assert_eq!(
        texts(&odd),
        Vec::<&str>::new(),
        "search text is never query syntax"
    );

    let first = c
        .ok("events.list", json!({"sessionId": s.id, "limit": 2}))
        .await;
    assert_eq!(texts(&first), ["tests passed", "build failed: lint"]);
    let before = first["nextBefore"].as_i64().expect("more pages");
    let second = c
        .ok(
            "events.list",
            json!({"sessionId": s.id, "limit": 2, "before": before}),
        )
        .await;
    assert_eq!(texts(&second), ["noise line", "build started on linux"]);
    assert!(second.get("nextBefore").is_none(), "{second}");

    let sessions = c.ok("ledger.sessions", json!({})).await;
    let ended = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == s.id.as_str())
        .expect("the ended session is remembered");
    assert!(ended["endedAt"].is_string(), "{ended}");
    let ci = sessions["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "ci")
        .expect("the provider is remembered");
    assert_eq!(ci["sessionId"], s.id.as_str());
    assert!(ci["disconnectedAt"].is_string(), "{ci}");
}

#[tokio::test]
async fn retention_removes_what_is_older_than_the_setting_and_keeps_the_rest() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "x", "event": "old"}))
        .await;
    p.fence().await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("settings.set", json!({"historyDays": 7})).await;
    let g = gw.handle.gateway();
    // Six days on: kept.
    g.trim_history(SystemTime::now() + Duration::from_secs(6 * 86_400))
        .await;
    let page = c.ok("events.list", json!({})).await;
    assert_eq!(texts(&page), ["old"]);
    // Eight days on: gone, with the traces of that time.
    g.trim_history(SystemTime::now() + Duration::from_secs(8 * 86_400))
        .await;
    let page = c.ok("events.list", json!({})).await;
    assert_eq!(texts(&page), Vec::<&str>::new());
    let traces = c.ok("traces.list", json!({})).await;
    assert_eq!(traces["traces"].as_array().unwrap().len(), 0, "{traces}");
    // The live session is still named by what comes next.
    let sessions = c.ok("ledger.sessions", json!({})).await;
    assert!(sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["id"] == s.id.as_str()));
}

#[tokio::test]
async fn retention_keeps_the_database_under_its_size_limit_oldest_first() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("big", &s.id, json!([])).await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("settings.set", json!({"historyMaxMib": 16})).await;
    // 40 events of 512 KiB: 20 MiB of text, over the 16 MiB limit.
    let chunk = "x".repeat(512 * 1024);
    for i in 0..40 {
        p.send(json!({"type": "push", "level": "keep", "stream": "blob",
                      "event": format!("{i:02} {chunk}")}))
            .await;
    }
    p.fence().await;
    let newest = host
        .streams_history(&s.id, Some("blob@big"), Some(1))
        .await
        .unwrap();
    let got = &newest.streams["blob@big"];
    assert!(
        got[0].event.starts_with("39 "),
        "{} events, newest {:?}",
        got.len(),
        &got[0].event[..8]
    );
    let g = gw.handle.gateway();
    g.trim_history(SystemTime::now()).await;
    // Page by page: all 40 would not fit one control frame.
    let mut left: Vec<String> = Vec::new();
    let mut before: Option<i64> = None;
    loop {
        let page = c
            .ok("events.list", json!({"limit": 4, "before": before}))
            .await;
        left.extend(texts(&page).iter().map(|t| t[..2].to_string()));
        match page["nextBefore"].as_i64() {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    assert!(!left.is_empty() && left.len() < 40, "{} left", left.len());
    assert_eq!(left[0], "39", "the newest stays");
    let oldest: u32 = left.last().unwrap().parse().unwrap();
    assert_eq!(oldest as usize, 40 - left.len(), "only the oldest went");
    let d = c.ok("diagnostics", json!({})).await;
    let bytes = d["ledger"]["bytes"].as_u64().unwrap();
    assert!(bytes < 24 * 1024 * 1024, "{bytes} bytes on disk");
}

/// A gateway on a TAP_HOME whose history file is `broken` runs with history in memory and
/// says why.
async fn with_unusable_file(broken: impl FnOnce(&std::path::Path)) -> (TestGateway, Value) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    broken(&home.join("history.sqlite3"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = GatewayHandle::start(listener, GatewayConfig::new(home))
        .await
        .unwrap();
    let gw = TestGateway { handle, dir };
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "x", "event": "still here"}))
        .await;
    p.fence().await;
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let page = c.ok("events.list", json!({})).await;
    assert_eq!(
        texts(&page),
        ["still here"],
        "this run's history, in memory"
    );
    let d = c.ok("diagnostics", json!({})).await;
    assert_eq!(d["ledger"]["durable"], false, "{d}");
    (gw, d["ledger"].clone())
}

#[tokio::test]
async fn a_corrupt_database_file_leaves_history_in_memory_and_says_why() {
    let (_gw, ledger) = with_unusable_file(|path| {
        std::fs::write(path, vec![0x5a; 64 * 1024]).unwrap();
    })
    .await;
    let reason = ledger["reason"].as_str().unwrap();
    assert!(reason.contains("history.sqlite3"), "{reason}");
    assert!(reason.contains("not a SQLite database"), "{reason}");
}

#[tokio::test]
async fn an_unwritable_database_path_leaves_history_in_memory() {
    // A directory where the file should be: as unwritable as it gets, even for root.
    let (_gw, ledger) = with_unusable_file(|path| std::fs::create_dir(path).unwrap()).await;
    assert!(
        ledger["reason"]
            .as_str()
            .unwrap()
            .contains("history.sqlite3"),
        "{ledger}"
    );
}

#[tokio::test]
async fn a_database_locked_by_another_process_leaves_history_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.sqlite3");
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch("CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        .unwrap();
    let (_gw, ledger) = with_unusable_file(|target| {
        // The same file under the gateway's name: a hard link shares the lock.
        std::fs::hard_link(&path, target).unwrap();
    })
    .await;
    let reason = ledger["reason"].as_str().unwrap();
    assert!(reason.contains("locked"), "{reason}");
    drop(holder);
}

#[tokio::test]
async fn the_database_file_is_private() {
    let gw = TestGateway::start().await;
    gw.handle.gateway().flush_history().await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = home(&gw).join("history.sqlite3");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
}

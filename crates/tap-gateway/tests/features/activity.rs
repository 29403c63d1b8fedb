//! `activity.query` (issue 42): the tool calls' figures from the ledger's per-minute rollup,
//! through a real gateway, real host and provider sockets and the real ledger file: counts
//! equal the root `tool.call` spans in the file, errors counted, grouped by provider, tool
//! and client, filtered, in every window's buckets with the empty ones filled; retention
//! prunes them; a database of the previous schema version is migrated and counted on; the
//! in-memory ledger answers too (and says so); history off answers empty (and says why).
//! Known latencies and the percentiles' error are in `src/ledger/rollup_tests.rs`.

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};
use tap_client::HostClient;
use tap_gateway::History;
use tap_protocol::host::SessionRegister;
use tap_testkit::*;

/// The figures once they count at least `calls` calls (a call's span is committed a
/// moment after its answer; each `traces.changed` says "look again").
async fn counted(c: &mut Control, params: Value, calls: u64) -> Value {
    loop {
        let r = c.ok("activity.query", params.clone()).await;
        if r["total"]["calls"].as_u64().unwrap() >= calls {
            return r;
        }
        c.event_of("traces.changed").await;
    }
}

/// key → (calls, errors) of a report's rows.
fn rows(r: &Value) -> BTreeMap<String, (u64, u64)> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["key"].as_str().unwrap().to_string(),
                (
                    row["calls"].as_u64().unwrap(),
                    row["errors"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

fn map(pairs: &[(&str, u64, u64)]) -> BTreeMap<String, (u64, u64)> {
    pairs
        .iter()
        .map(|(k, c, e)| (k.to_string(), (*c, *e)))
        .collect()
}

/// Root `tool.call` spans per tool in the ledger file, read on a connection of our own.
fn spans_in_file(gw: &TestGateway) -> BTreeMap<String, (u64, u64)> {
    let path = gw.dir.path().join("home").join("history.sqlite3");
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT tool, count(*), sum(status = 'error') FROM spans
             WHERE root = 1 AND name = 'tool.call' GROUP BY tool",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64),
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

async fn fail(p: &mut Provider, call: &Value, code: &str) {
    p.send(
        json!({"type": "tool.result", "id": call["id"], "error": format!("{code} here"),
                  "errorCode": code}),
    )
    .await;
}

/// Seven calls: from the host `test-host`, `ls` three times and `rm` failing once (provider
/// `files`) and an unknown tool; from the host `copilot`, `fetch` twice (provider `web`).
async fn seven_calls(gw: &TestGateway) -> (HostClient, HostClient) {
    // Both sessions first: a session registered later would send the bound provider a
    // `sessions.updated` where the calls expect their `tool.call`.
    let (host, s) = gw.host_with_session().await;
    let copilot = HostClient::connect(
        &format!("{}/session", gw.url()),
        gw.handle.gateway().host_token(),
        "copilot",
        None,
    )
    .await
    .unwrap();
    let s2 = copilot
        .register_session(SessionRegister {
            label: Some("other".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut files = gw
        .bound("files", &s.id, json!([tool("ls"), tool("rm")]))
        .await;
    let mut web = gw.bound("web", &s2.id, json!([tool("fetch")])).await;
    for _ in 0..3 {
        let r = call_and_answer(&host, &mut files, &s.id, "ls", json!("listed")).await;
        assert_eq!(r.data, Some(json!("listed")));
    }
    let rx = invoke(&host, &s.id, "rm", json!({}));
    let call = files.expect("tool.call").await;
    fail(&mut files, &call, "INTERNAL").await;
    assert_eq!(code(&result_of(rx).await), Some("INTERNAL"));
    let r = invoke_unanswered(&host, &s.id, "nope").await;
    assert_eq!(code(&r), Some("NOT_FOUND"));
    for _ in 0..2 {
        call_and_answer(&copilot, &mut web, &s2.id, "fetch", json!("page")).await;
    }
    (host, copilot)
}

#[tokio::test]
async fn figures_equal_the_calls_in_the_ledger_by_provider_tool_and_client() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("traces.follow", json!({})).await;
    let _hosts = seven_calls(&gw).await;

    let by_tool = counted(&mut c, json!({"window": "1h", "by": "tool"}), 7).await;
    assert_eq!(by_tool["total"]["calls"], 7, "{by_tool}");
    assert_eq!(by_tool["total"]["errors"], 2, "{by_tool}");
    assert_eq!(by_tool["total"]["key"], Value::Null);
    assert_eq!(by_tool["ledger"]["durable"], true);
    // The same calls as the root spans in the file, tool by tool, errors included.
    assert_eq!(rows(&by_tool), spans_in_file(&gw), "{by_tool}");
    assert_eq!(
        rows(&by_tool),
        map(&[("ls", 3, 0), ("rm", 1, 1), ("nope", 1, 1), ("fetch", 2, 0)])
    );
    // Most calls first.
    assert_eq!(by_tool["rows"][0]["key"], "ls");
    assert_eq!(by_tool["truncated"], false);

    let by_provider = c
        .ok("activity.query", json!({"window": "1h", "by": "provider"}))
        .await;
    // The unknown tool reached no provider: key "".
    assert_eq!(
        rows(&by_provider),
        map(&[("files", 4, 1), ("web", 2, 0), ("", 1, 1)])
    );
    let by_client = c
        .ok("activity.query", json!({"window": "1h", "by": "client"}))
        .await;
    assert_eq!(
        rows(&by_client),
        map(&[("test-host", 5, 2), ("copilot", 2, 0)])
    );

    // Filters: one provider's tools; one client's; a tool with no such provider.
    let files = c
        .ok(
            "activity.query",
            json!({"window": "1h", "by": "tool", "provider": "files"}),
        )
        .await;
    assert_eq!(rows(&files), map(&[("ls", 3, 0), ("rm", 1, 1)]));
    let copilot = c
        .ok(
            "activity.query",
            json!({"window": "15m", "client": "copilot"}),
        )
        .await;
    assert_eq!(copilot["total"]["calls"], 2);
    assert_eq!(copilot["rows"], json!([]), "no `by`: the total only");
    // A client row opens that client's traces: the same calls, and only them.
    for (client, calls) in [("copilot", 2), ("test-host", 5), ("nobody", 0)] {
        let traces = c
            .ok(
                "traces.list",
                json!({"client": client, "name": "tool.call"}),
            )
            .await;
        assert_eq!(
            traces["traces"].as_array().unwrap().len(),
            calls,
            "{client}: {traces}"
        );
    }
    let none = c
        .ok(
            "activity.query",
            json!({"window": "1h", "provider": "web", "tool": "ls"}),
        )
        .await;
    assert_eq!(none["total"]["calls"], 0);
    assert_eq!(none["total"]["p95Ms"], Value::Null);

    // Every window: its bucket size, all its buckets (the empty ones as zeros), the same
    // seven calls in the newest one or two (a minute may have turned meanwhile).
    for (window, n, secs) in [
        ("15m", 15, 60),
        ("1h", 60, 60),
        ("24h", 48, 1800),
        ("7d", 56, 10800),
    ] {
        let r = c.ok("activity.query", json!({"window": window})).await;
        assert_eq!(r["window"], window);
        assert_eq!(r["bucketSecs"], secs, "{r}");
        let buckets = r["total"]["buckets"].as_array().unwrap();
        assert_eq!(buckets.len(), n, "{window}");
        let calls: Vec<u64> = buckets
            .iter()
            .map(|b| b["calls"].as_u64().unwrap())
            .collect();
        assert_eq!(calls.iter().sum::<u64>(), 7, "{window}: {calls:?}");
        assert!(
            calls[..n - 2].iter().all(|&c| c == 0),
            "{window}: {calls:?}"
        );
        for b in &buckets[..n - 2] {
            assert_eq!(b["p50Ms"], Value::Null);
        }
        assert!(r["total"]["p95Ms"].as_f64().unwrap() > 0.0, "{r}");
        let from = humantime::parse_rfc3339(r["from"].as_str().unwrap()).unwrap();
        let to = humantime::parse_rfc3339(r["to"].as_str().unwrap()).unwrap();
        assert_eq!(to.duration_since(from).unwrap().as_secs(), n as u64 * secs);
        assert!(to > SystemTime::now());
    }
    // A window the engine does not know is refused like any bad params.
    c.err("activity.query", json!({"window": "2h"}), "INVALID_JSON")
        .await;
}

#[tokio::test]
async fn retention_prunes_the_figures_with_their_limits_while_the_spans_stay() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("traces.follow", json!({})).await;
    let _hosts = seven_calls(&gw).await;
    counted(&mut c, json!({"window": "7d"}), 7).await;
    let g = gw.handle.gateway();
    let total = |r: &Value| r["total"]["calls"].as_u64().unwrap();
    // Two days on: the minute rows are gone (1 h reads them), the half hours stay.
    g.trim_history(SystemTime::now() + Duration::from_secs(2 * 86_400))
        .await;
    assert_eq!(
        total(&c.ok("activity.query", json!({"window": "1h"})).await),
        0
    );
    assert_eq!(
        total(&c.ok("activity.query", json!({"window": "7d"})).await),
        7
    );
    // Eight days on: past the longest window, gone too; the spans (kept 30 days) are not.
    g.trim_history(SystemTime::now() + Duration::from_secs(8 * 86_400))
        .await;
    assert_eq!(
        total(&c.ok("activity.query", json!({"window": "7d"})).await),
        0
    );
    assert_eq!(spans_in_file(&gw).values().map(|v| v.0).sum::<u64>(), 7);
}

#[tokio::test]
async fn a_database_of_the_previous_schema_is_migrated_and_counted_on() {
    let old_span_tool = "before-upgrade";
    let gw = TestGateway::start_with(|config| {
        // The file as the last release left it: schema version 3, one call's span.
        std::fs::create_dir_all(&config.data_dir).unwrap();
        let conn = Connection::open(config.data_dir.join("history.sqlite3")).unwrap();
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL;")
            .unwrap();
        let released = &tap_gateway::ledger_schema_sql()[..3];
        for ddl in released {
            conn.execute_batch(ddl).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 3").unwrap();
        conn.execute(
            "INSERT INTO spans(trace_id, span_id, root, name, start_us, duration_us, status,
                               session_id, tool, attributes)
             VALUES ('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1, 'tool.call',
                     ?1, 1000, 'ok', 's-old', ?2, '{}')",
            rusqlite::params![
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap()
                    .as_micros() as i64
                    - 60_000_000,
                old_span_tool
            ],
        )
        .unwrap();
    })
    .await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("traces.follow", json!({})).await;
    let d = c.ok("diagnostics", json!({})).await;
    assert_eq!(d["ledger"]["durable"], true, "{d}");
    // The old call's trace is still there; the figures start with the upgrade.
    let old = c.ok("traces.list", json!({"tool": old_span_tool})).await;
    assert_eq!(old["traces"].as_array().unwrap().len(), 1, "{old}");
    let _hosts = seven_calls(&gw).await;
    let r = counted(&mut c, json!({"window": "1h", "by": "tool"}), 7).await;
    assert_eq!(r["total"]["calls"], 7, "{r}");
    assert!(!rows(&r).contains_key(old_span_tool));
    let path = gw.dir.path().join("home").join("history.sqlite3");
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version as usize, tap_gateway::ledger_schema_sql().len());
}

#[tokio::test]
async fn the_memory_ledger_counts_this_run_and_history_off_answers_empty_saying_why() {
    let gw = TestGateway::start_with(|config| config.history = History::Memory).await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("traces.follow", json!({})).await;
    let _hosts = seven_calls(&gw).await;
    let r = counted(&mut c, json!({"window": "15m", "by": "client"}), 7).await;
    assert_eq!(r["ledger"]["durable"], false, "{r}");
    assert!(
        r["ledger"]["reason"].as_str().unwrap().contains("memory"),
        "{r}"
    );
    assert_eq!(rows(&r), map(&[("test-host", 5, 2), ("copilot", 2, 0)]));

    let gw = TestGateway::start_with(|config| config.history = History::Off).await;
    let (mut c, _) = Control::authed(&gw).await;
    let _hosts = seven_calls(&gw).await;
    gw.handle.gateway().flush_history().await;
    let r = c
        .ok("activity.query", json!({"window": "15m", "by": "tool"}))
        .await;
    assert_eq!(r["total"]["calls"], 0, "{r}");
    assert_eq!(r["total"]["buckets"].as_array().unwrap().len(), 15);
    assert_eq!(r["ledger"]["reason"], "history is turned off", "{r}");
}

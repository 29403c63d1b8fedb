//! The activity rollup on a real SQLite file (`history.sqlite3` in a temp dir): spans with
//! known start times and durations written through the ledger's writer thread, read back
//! by `figures::query` as `activity.query` does. Calls through a real gateway are in
//! `tests/features/activity.rs`.

use super::figures::query;
use super::histogram::PERCENTILE_ERROR;
use super::record::{Attr, Record, SpanRow};
use super::rollup::{CALL_SPAN, CLIENT_ATTR};
use super::Ledger;
use crate::limits::{ACTIVITY_KEPT, ACTIVITY_MINUTES_KEPT, ACTIVITY_ROWS};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tap_protocol::activity::{ActivityBy, ActivityQuery, ActivityReport, ActivityWindow};
use tap_protocol::ledger::SpanStatus;

/// A fixed "now": 30 s into a minute, and 2 h 10 min into a 3 h bucket.
fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_764_396_000 + 2 * 3600 + 10 * 60 + 30)
}

struct Call<'a> {
    at: SystemTime,
    took: Duration,
    provider: &'a str,
    tool: &'a str,
    client: Option<&'a str>,
    ok: bool,
}

impl<'a> Call<'a> {
    fn new(at: SystemTime, tool: &'a str) -> Self {
        Self {
            at,
            took: Duration::from_millis(5),
            provider: "files",
            tool,
            client: Some("claude-code"),
            ok: true,
        }
    }

    fn span(&self) -> Record {
        let mut attributes = vec![("via", Attr::from("host"))];
        if let Some(c) = self.client {
            attributes.push((CLIENT_ATTR, Attr::from(c)));
        }
        Record::Span(Box::new(SpanRow {
            trace_id: rand::random(),
            span_id: rand::random(),
            parent_id: None,
            remote_parent: false,
            name: CALL_SPAN,
            start: self.at,
            duration: self.took,
            status: if self.ok {
                SpanStatus::Ok
            } else {
                SpanStatus::Error
            },
            error_code: (!self.ok).then(|| "TIMEOUT".into()),
            message: None,
            session_id: Some("s-1".into()),
            provider: (!self.provider.is_empty()).then(|| self.provider.into()),
            tool: Some(self.tool.into()),
            attributes,
            events: Vec::new(),
        }))
    }
}

async fn ledger_with(calls: impl IntoIterator<Item = Record>) -> (Ledger, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path());
    assert!(ledger.state().durable, "{:?}", ledger.state().reason);
    for record in calls {
        ledger.write(record).await;
    }
    ledger.flush().await;
    (ledger, dir)
}

fn ask(window: ActivityWindow, by: Option<ActivityBy>) -> ActivityQuery {
    ActivityQuery {
        window,
        by,
        provider: None,
        tool: None,
        client: None,
    }
}

fn figures(ledger: &Ledger, p: &ActivityQuery) -> ActivityReport {
    query(ledger, p, now()).unwrap()
}

fn close(got: Option<f64>, truth_ms: f64) {
    let got = got.expect("a percentile");
    assert!(
        (got - truth_ms).abs() <= truth_ms * PERCENTILE_ERROR,
        "{got} ms for {truth_ms} ms"
    );
}

#[tokio::test]
async fn percentiles_of_known_latencies_are_within_the_documented_error() {
    let mut calls = Vec::new();
    // This minute: 1, 2, …, 100 ms. The minute before: twenty calls of 1 s.
    for ms in 1..=100 {
        let mut c = Call::new(now(), "read");
        c.took = Duration::from_millis(ms);
        calls.push(c.span());
    }
    for _ in 0..20 {
        let mut c = Call::new(now() - Duration::from_secs(60), "read");
        c.took = Duration::from_secs(1);
        calls.push(c.span());
    }
    let (ledger, _dir) = ledger_with(calls).await;
    let r = figures(&ledger, &ask(ActivityWindow::Minutes15, None));
    assert_eq!(r.bucket_secs, 60);
    assert_eq!(r.total.buckets.len(), 15);
    let (this, before) = (&r.total.buckets[14], &r.total.buckets[13]);
    assert_eq!((this.calls, before.calls), (100, 20));
    // Nearest rank: the 50th and the 95th of 100.
    close(this.p50_ms, 50.0);
    close(this.p95_ms, 95.0);
    close(before.p50_ms, 1000.0);
    close(before.p95_ms, 1000.0);
    // The window: rank 60 of 120 is 60 ms, rank 114 one of the 1 s calls.
    assert_eq!(r.total.calls, 120);
    close(r.total.p50_ms, 60.0);
    close(r.total.p95_ms, 1000.0);
    // Every other minute is there, empty.
    for b in &r.total.buckets[..13] {
        assert_eq!((b.calls, b.errors, b.p50_ms, b.p95_ms), (0, 0, None, None));
    }
    assert!(r.rows.is_empty() && !r.truncated);
}

#[tokio::test]
async fn each_window_groups_its_periods_into_its_buckets() {
    // One call an hour for 8 days back (the oldest day outside every window), and an error
    // every fifth hour.
    let calls: Vec<Record> = (0..8 * 24)
        .map(|h| {
            let mut c = Call::new(now() - Duration::from_secs(h * 3600), "hourly");
            c.ok = h % 5 != 0;
            c.span()
        })
        .collect();
    let (ledger, _dir) = ledger_with(calls).await;
    let now_s = now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    for (window, buckets, bucket) in [
        (ActivityWindow::Minutes15, 15, 60),
        (ActivityWindow::Hour1, 60, 60),
        (ActivityWindow::Hours24, 48, 1800),
        (ActivityWindow::Days7, 56, 10800),
    ] {
        let r = figures(&ledger, &ask(window, Some(ActivityBy::Tool)));
        assert_eq!(r.bucket_secs, bucket);
        let bucket = u64::from(bucket);
        assert_eq!(r.total.buckets.len(), buckets);
        let to = (now_s / bucket + 1) * bucket;
        let from = to - window.secs();
        assert_eq!(
            r.to,
            crate::time::rfc3339(UNIX_EPOCH + Duration::from_secs(to))
        );
        assert_eq!(
            r.from,
            crate::time::rfc3339(UNIX_EPOCH + Duration::from_secs(from))
        );
        // What each bucket should hold, from the calls' own times.
        let mut want = vec![(0u64, 0u64); buckets];
        for h in 0..8 * 24u64 {
            let at = now_s - h * 3600;
            if at >= from && at < to {
                let b = &mut want[((at - from) / bucket) as usize];
                b.0 += 1;
                b.1 += u64::from(h % 5 == 0);
            }
        }
        let got: Vec<(u64, u64)> = r
            .total
            .buckets
            .iter()
            .map(|b| (b.calls, b.errors))
            .collect();
        assert_eq!(got, want, "{window:?}");
        assert_eq!(r.total.calls, want.iter().map(|b| b.0).sum::<u64>());
        assert_eq!(r.total.errors, want.iter().map(|b| b.1).sum::<u64>());
        assert_eq!(r.rows.len(), 1);
        assert_eq!(r.rows[0].key.as_deref(), Some("hourly"));
        assert_eq!(r.rows[0].buckets, r.total.buckets);
    }
}

#[tokio::test]
async fn rows_group_filter_and_stop_at_the_limit() {
    let mut calls = Vec::new();
    // More tools than the limit, one call each, and one busier tool of another provider
    // and client, and a call no provider answered (an unknown tool) with no client.
    for i in 0..ACTIVITY_ROWS + 10 {
        calls.push(Call::new(now(), &format!("tool-{i:02}")).span());
    }
    for _ in 0..5 {
        let mut c = Call::new(now(), "search");
        c.provider = "web";
        c.client = Some("copilot");
        calls.push(c.span());
    }
    let mut unknown = Call::new(now(), "nope");
    unknown.provider = "";
    unknown.client = None;
    unknown.ok = false;
    calls.push(unknown.span());
    let (ledger, _dir) = ledger_with(calls).await;
    let n = ACTIVITY_ROWS as u64 + 10;

    let by_tool = figures(&ledger, &ask(ActivityWindow::Hour1, Some(ActivityBy::Tool)));
    assert_eq!(by_tool.total.calls, n + 6);
    assert_eq!(by_tool.rows.len(), ACTIVITY_ROWS);
    assert!(by_tool.truncated);
    assert_eq!(by_tool.rows[0].key.as_deref(), Some("search"));
    assert_eq!(by_tool.rows[0].calls, 5);
    // Ties (one call each) in name order.
    assert_eq!(by_tool.rows[1].key.as_deref(), Some("nope"));
    assert_eq!(by_tool.rows[2].key.as_deref(), Some("tool-00"));

    let by_provider = figures(
        &ledger,
        &ask(ActivityWindow::Hour1, Some(ActivityBy::Provider)),
    );
    let keys: Vec<(Option<&str>, u64, u64)> = by_provider
        .rows
        .iter()
        .map(|r| (r.key.as_deref(), r.calls, r.errors))
        .collect();
    assert_eq!(
        keys,
        [(Some("files"), n, 0), (Some("web"), 5, 0), (Some(""), 1, 1)]
    );
    assert!(!by_provider.truncated);

    let by_client = figures(
        &ledger,
        &ask(ActivityWindow::Hour1, Some(ActivityBy::Client)),
    );
    let keys: Vec<(Option<&str>, u64)> = by_client
        .rows
        .iter()
        .map(|r| (r.key.as_deref(), r.calls))
        .collect();
    assert_eq!(
        keys,
        [
            (Some("claude-code"), n),
            (Some("copilot"), 5),
            (Some(""), 1)
        ]
    );

    // Filters are exact and combine.
    let mut p = ask(ActivityWindow::Hour1, Some(ActivityBy::Tool));
    p.provider = Some("web".into());
    let web = figures(&ledger, &p);
    assert_eq!(web.total.calls, 5);
    assert_eq!(web.rows.len(), 1);
    p.client = Some("claude-code".into());
    assert_eq!(figures(&ledger, &p).total.calls, 0);
    let mut p = ask(ActivityWindow::Hour1, None);
    p.client = Some(String::new());
    p.tool = Some("nope".into());
    let nope = figures(&ledger, &p);
    assert_eq!((nope.total.calls, nope.total.errors), (1, 1));
    p.tool = Some("tool-0".into()); // a prefix is not a match
    assert_eq!(figures(&ledger, &p).total.calls, 0);
}

#[tokio::test]
async fn only_the_root_span_of_a_tool_call_counts() {
    let root = Call::new(now(), "read").span();
    let Record::Span(row) = &root else {
        unreachable!()
    };
    let mut child = (**row).clone();
    child.name = "provider.call";
    child.parent_id = Some(row.span_id);
    // A call under the caller's trace (`traceparent`) is still a root here.
    let mut remote = (**row).clone();
    remote.parent_id = Some(7);
    remote.remote_parent = true;
    // A `tool.call` under one of our own spans is not a call of its own.
    let mut nested = (**row).clone();
    nested.parent_id = Some(row.span_id);
    let records = [
        Record::Span(Box::new(child)),
        Record::Span(Box::new(remote)),
        Record::Span(Box::new(nested)),
        root,
    ];
    let (ledger, _dir) = ledger_with(records).await;
    assert_eq!(
        figures(&ledger, &ask(ActivityWindow::Minutes15, None))
            .total
            .calls,
        2
    );
}

fn rollup_rows(ledger: &Ledger, period: i64) -> i64 {
    ledger
        .read(|c| {
            c.query_row(
                "SELECT count(*) FROM call_rollup WHERE period = ?1",
                [period],
                |r| r.get(0),
            )
        })
        .unwrap()
}

async fn trim(ledger: &Ledger, at: SystemTime, max_age: Duration) {
    ledger
        .write(Record::Trim {
            now: at,
            max_age,
            max_bytes: u64::MAX,
        })
        .await;
    ledger.flush().await;
}

#[tokio::test]
async fn retention_prunes_the_rollup_by_the_spans_age_rule_and_its_own_limits() {
    let (ledger, _dir) = ledger_with([Call::new(now(), "read").span()]).await;
    let month = Duration::from_secs(30 * 86_400);
    let (minutes, halves) = (super::rollup::MINUTE, super::rollup::HALF_HOUR);
    assert_eq!(
        (rollup_rows(&ledger, minutes), rollup_rows(&ledger, halves)),
        (1, 1)
    );
    // A minute row lives its own limit, a half-hour row the longest window.
    trim(
        &ledger,
        now() + ACTIVITY_MINUTES_KEPT - Duration::from_secs(60),
        month,
    )
    .await;
    assert_eq!(rollup_rows(&ledger, minutes), 1);
    trim(
        &ledger,
        now() + ACTIVITY_MINUTES_KEPT + Duration::from_secs(60),
        month,
    )
    .await;
    assert_eq!(
        (rollup_rows(&ledger, minutes), rollup_rows(&ledger, halves)),
        (0, 1)
    );
    let seven_days = ask(ActivityWindow::Days7, None);
    assert_eq!(figures(&ledger, &seven_days).total.calls, 1);
    assert_eq!(
        figures(&ledger, &ask(ActivityWindow::Hour1, None))
            .total
            .calls,
        0
    );
    trim(
        &ledger,
        now() + ACTIVITY_KEPT + Duration::from_secs(1800),
        month,
    )
    .await;
    assert_eq!(rollup_rows(&ledger, halves), 0);
    assert_eq!(figures(&ledger, &seven_days).total.calls, 0);
    // The spans themselves follow their own (30-day) rule: still there.
    let spans: i64 = ledger
        .read(|c| c.query_row("SELECT count(*) FROM spans", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(spans, 1);

    // History kept for a day only: the rollup goes with it, before its own limit.
    let (ledger, _dir) = ledger_with([Call::new(now(), "read").span()]).await;
    trim(
        &ledger,
        now() + Duration::from_secs(86_400 + 3600),
        Duration::from_secs(86_400),
    )
    .await;
    assert_eq!(
        (rollup_rows(&ledger, minutes), rollup_rows(&ledger, halves)),
        (0, 0)
    );
}

#[tokio::test]
async fn without_the_rollup_spans_are_written_and_nothing_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path());
    ledger.without_rollup();
    ledger.write(Call::new(now(), "read").span()).await;
    ledger.flush().await;
    assert_eq!(
        figures(&ledger, &ask(ActivityWindow::Minutes15, None))
            .total
            .calls,
        0
    );
    assert_eq!(rollup_rows(&ledger, super::rollup::MINUTE), 0);
}

//! S12: what the activity figures cost (issue 42).
//!
//! - Written: S2 (`call_tool`, 10 providers, 64 in flight) against two in-process gateways
//!   with the ledger on its file, one counting the calls in the activity rollup and one not
//!   (`GatewayConfig::activity_rollup`, the code as it was before), interleaved run by run
//!   so the machine's drift weighs on both alike. Target: within 5 % (ratio ≥ 0.95). What
//!   a call adds is shown in µs too: 1/rate with the rollup − 1/rate without.
//! - Read: a week of one call per second (604,800 calls over 10 tools of 4 providers and 3
//!   clients, one in 50 failing) written into a real ledger file through the ledger's own
//!   writer (`tap_gateway::ledger_prefill_calls`), then a gateway started on it answers
//!   `activity.query` (its `Gateway::activity`, as the control method does). Target: the
//!   7 d window grouped by tool in ≤ 50 ms (median of the timed queries).

use crate::options::Counts;
use crate::repeat::{counted_rate, repeated_per_rig};
use crate::report::{Report, Row};
use crate::running::progress;
use crate::scenarios::{self, Rig};
use crate::setup::{fan_rig, Counted, Setup};
use crate::stats::{per_sec, ratio, thousands};
use crate::tempdir::TempDir;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tap_gateway::History;
use tap_protocol::activity::{ActivityBy, ActivityQuery, ActivityWindow};

const WRITE: &str = "S12 activity rollup, S2 calls";
const READ: &str = "S12 activity.query, 7 d of 1 call/s";
/// A week of one call per second.
const WEEK_OF_CALLS: u64 = 7 * 24 * 3600;
const TOOLS: u64 = 10;
const CLIENTS: [&str; 3] = ["claude-code", "copilot", "cursor"];

/// One prefilled call: start, duration, provider, tool, client, succeeded.
type Call = (SystemTime, Duration, String, String, String, bool);

pub async fn rows(n: &Counts, out: &mut Report) {
    progress(WRITE);
    if let Err(e) = written(n, out).await {
        out.fail(WRITE, e);
    }
    progress(READ);
    if let Err(e) = read(n, out).await {
        out.fail(READ, e);
    }
}

async fn rig(rollup: bool) -> Result<Setup, String> {
    let dir = TempDir::new(if rollup { "rollup" } else { "no-rollup" })?;
    let rig = Rig::start_in(dir, History::File, |c| c.activity_rollup = rollup).await?;
    fan_rig(rig, History::File).await
}

async fn written(n: &Counts, out: &mut Report) -> Result<(), String> {
    // Index 0: without the rollup (before), 1: with it (after).
    let setups = [rig(false).await?, rig(true).await?];
    let (calls, in_flight) = (n.fan_calls, n.in_flight);
    // At least three runs each, even in quick mode: the difference sought is a few %.
    let runs = repeated_per_rig(2, n.reps.max(3), n.limit, counted_rate, |r, _| {
        let s = &setups[r];
        async move {
            let before = s.written();
            let l = scenarios::s2_in_process(&s.rig, &s.fan, calls, in_flight).await?;
            s.rig.gateway().flush_history().await;
            Ok(Counted {
                run: l,
                records: s.written() - before,
            })
        }
    })
    .await;
    let counted = setups[1]
        .rig
        .gateway()
        .activity(&ActivityQuery {
            window: ActivityWindow::Hour1,
            by: None,
            provider: None,
            tool: None,
            client: None,
        })
        .map_err(|e| e.to_string())?
        .total
        .calls;
    for s in setups {
        s.rig.stop().await;
    }
    let runs = runs?;
    let (off, on) = (&runs[0], &runs[1]);
    let (before, after) = (off.median.run.rate(), on.median.run.rate());
    let r = ratio(after, before);
    out.rows.push(
        Row::info(
            WRITE,
            "calls (call_tool), ledger on, rollup on / off",
            per_sec(after),
        )
        .vs(format!("rollup off: {}", per_sec(before)), r)
        .target(">= 0.95x", r >= 0.95),
    );
    out.rows.extend(on.range_row(WRITE));
    out.rows.extend(off.range_row_of(WRITE, ", rollup off"));
    let added_us = (1.0 / after - 1.0 / before) * 1e6;
    out.rows.push(Row::info(
        WRITE,
        "added per call (1/rate on - 1/rate off)",
        format!("{added_us:+.2} us"),
    ));
    // Every timed call (and the warm-up the rig did not have) is counted once.
    out.rows.push(Row::info(
        WRITE,
        "calls counted by activity.query (1 h)",
        thousands(counted),
    ));
    Ok(())
}

/// The week of calls, newest `now`: call `i` started `i` seconds before it.
fn week(now: SystemTime) -> impl Iterator<Item = Call> {
    (0..WEEK_OF_CALLS).map(move |i| {
        let tool = i % TOOLS;
        (
            now - Duration::from_secs(i),
            Duration::from_micros(500 + (i * 7919) % 400_000),
            format!("provider-{}", tool % 4),
            format!("tool_{tool}"),
            CLIENTS[(i % 3) as usize].to_string(),
            i % 50 != 0,
        )
    })
}

async fn read(n: &Counts, out: &mut Report) -> Result<(), String> {
    let dir = TempDir::new("week")?;
    let home = dir.path().join("home");
    let now = SystemTime::now();
    let start = Instant::now();
    tap_gateway::ledger_prefill_calls(&home, week(now)).await?;
    let filled = start.elapsed();
    let bytes = std::fs::metadata(home.join("history.sqlite3"))
        .map(|m| m.len())
        .unwrap_or(0);
    out.rows.push(Row::info(
        READ,
        "calls written through the ledger (prefill)",
        format!(
            "{} in {:.1} s, file {:.0} MiB",
            thousands(WEEK_OF_CALLS),
            filled.as_secs_f64(),
            bytes as f64 / 1_048_576.0
        ),
    ));
    let rig = Rig::start_in(dir, History::File, |_| {}).await?;
    let gw = rig.gateway();
    let times = if n.reps > 1 { 21 } else { 7 };
    let result = queries(&gw, now, times, out);
    rig.stop().await;
    result
}

/// Times each query `times` times against the gateway on the week's file, checking its count.
fn queries(
    gw: &tap_gateway::Gateway,
    now: SystemTime,
    times: usize,
    out: &mut Report,
) -> Result<(), String> {
    for (window, by, judged) in [
        (ActivityWindow::Days7, Some(ActivityBy::Tool), true),
        (ActivityWindow::Days7, None, false),
        (ActivityWindow::Hours24, Some(ActivityBy::Tool), false),
        (ActivityWindow::Hour1, Some(ActivityBy::Client), false),
    ] {
        let q = ActivityQuery {
            window,
            by,
            provider: None,
            tool: None,
            client: None,
        };
        let mut took = Vec::with_capacity(times);
        let mut report = None;
        for _ in 0..times {
            let t = Instant::now();
            report = Some(gw.activity(&q).map_err(|e| e.to_string())?);
            took.push(t.elapsed());
        }
        let report = report.expect("timed at least once");
        // The count is checked on one more query, against the window the gateway had when
        // it answered: the prefill takes a while, so a bucket may have turned since `now`
        // (the 1 h window starts a minute later then). Asked again if one turns meanwhile.
        let now_s = secs(now);
        let (counted, made) = loop {
            let before = window_start(window, SystemTime::now());
            let got = gw.activity(&q).map_err(|e| e.to_string())?;
            if window_start(window, SystemTime::now()) == before {
                // The week's calls are one per second up to `now`'s second.
                let made = match before > now_s {
                    true => 0,
                    false => (now_s - before + 1).min(WEEK_OF_CALLS),
                };
                break (got.total.calls, made);
            }
        };
        if counted != made {
            return Err(format!(
                "{}: {counted} calls counted, {made} made in it",
                window.as_str()
            ));
        }
        took.sort();
        let (p50, max) = (took[took.len() / 2], took[took.len() - 1]);
        let by_name = by.map_or("total only", |b| match b {
            ActivityBy::Tool => "by tool",
            ActivityBy::Provider => "by provider",
            ActivityBy::Client => "by client",
        });
        let metric = format!(
            "{} {by_name}: median of {times} (max), {} calls, {} rows",
            window.as_str(),
            thousands(report.total.calls),
            report.rows.len()
        );
        let value = format!(
            "{:.2} ms ({:.2} ms)",
            p50.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        );
        let row = Row::info(READ, &metric, value);
        out.rows.push(match judged {
            true => row.target("<= 50 ms", p50 <= Duration::from_millis(50)),
            false => row,
        });
    }
    Ok(())
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// The first second of `window` as the gateway reckons it at `at`: its buckets end with the
/// current one.
fn window_start(window: ActivityWindow, at: SystemTime) -> u64 {
    let bucket = window.bucket_secs();
    (secs(at) / bucket + 1) * bucket - window.secs()
}

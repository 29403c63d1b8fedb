//! S2, S3 and S4: calls, pushes and provider connections under load, against E0's
//! floors, and (S2, S3) with the ledger on against off.

use super::floors::{allocs_row, Floors};
use super::{records_row, spread};
use crate::alloc_count::allocations_per;
#[cfg(feature = "lock-count")]
use crate::alloc_count::per_message;
use crate::options::{ledger_label, Counts, Options};
use crate::repeat::{counted_rate, rate_of, repeated, repeated_per_rig};
use crate::report::{Report, Row};
use crate::running::progress;
use crate::scenarios;
use crate::setup::{Counted, Setup};
use crate::stats::{per_sec, ratio, thousands};
use std::future::Future;

/// `", ledger off"`: the second gateway's rows' tag.
fn off_tag(setups: &[Setup]) -> String {
    format!(", {}", ledger_label(setups[1].history))
}

/// A throughput row of the first gateway against the second (ledger on / off): the rate
/// ratio, with the target "within 10 %" when `judged`.
fn rate_vs_ledger(
    label: &str,
    what: &str,
    setups: &[Setup],
    on: f64,
    off: f64,
    judged: bool,
) -> Row {
    let (l_on, l_off) = (
        ledger_label(setups[0].history),
        ledger_label(setups[1].history),
    );
    let r = ratio(on, off);
    let row = Row::info(label, &format!("{what} {l_on} / off"), per_sec(on))
        .vs(format!("{l_off}: {}", per_sec(off)), r);
    if judged {
        row.target(">= 0.90x", r >= 0.90)
    } else {
        row
    }
}

/// S2 and S3 against each in-process gateway, interleaved; S4 against the first.
pub async fn throughput(
    opts: &Options,
    n: &Counts,
    setups: &[Setup],
    floors: &Floors,
    out: &mut Report,
) {
    let (rig, main) = (&setups[0].rig, setups[0].main.as_str());
    let rigs = setups.len();
    if opts.wants("s2") {
        let s2_label = format!("S2 10 providers, {} in flight", n.in_flight);
        progress(&s2_label);
        s2(&s2_label, false, n, setups, floors, out).await;
        progress("S2 via the host socket");
        s2(&s2_label, true, n, setups, floors, out).await;
    }

    if opts.wants("s3") {
        let s3 = format!("S3 {} pushes (keep)", thousands(n.pushes as u64));
        progress(&s3);
        let pushes = n.pushes;
        match repeated_per_rig(
            rigs,
            n.reps,
            n.limit,
            |c: &Counted<f64>| c.run,
            |r, i| {
                let s = &setups[r];
                async move {
                    let before = s.written();
                    let rate = scenarios::s3_pushes(&s.rig, &s.main, pushes, i).await?;
                    // Outside the timed part: the next run starts with an empty queue.
                    s.rig.gateway().flush_history().await;
                    Ok(Counted {
                        run: rate,
                        records: s.written() - before,
                    })
                }
            },
        )
        .await
        {
            Ok(runs) => {
                let r = &runs[0];
                let rate = r.median.run;
                let mut row = Row::info(&s3, "pushes", per_sec(rate));
                if let Some(b) = floors.sink {
                    row = row.vs(per_sec(b), ratio(rate, b));
                }
                out.rows
                    .push(row.target("> 1,000,000/s", rate > 1_000_000.0));
                out.rows.extend(r.range_row(&s3));
                out.rows
                    .extend(records_row(&s3, setups, r.median.records, pushes, "push"));
                if let Some(off) = runs.get(1) {
                    out.rows.push(rate_vs_ledger(
                        &s3,
                        "pushes",
                        setups,
                        rate,
                        off.median.run,
                        true,
                    ));
                    out.rows.extend(off.range_row_of(&s3, &off_tag(setups)));
                }
            }
            Err(e) => out.fail(&s3, e),
        }
        let floor = floors.sink_allocs.map(|f| (f, "frame"));
        allocs_rows(&s3, "push", pushes, setups, floor, out, |s, r| async move {
            scenarios::s3_pushes(&s.rig, &s.main, pushes, 1_000 + r).await
        })
        .await;
    }

    if opts.wants("s4") {
        let s4 = format!("S4 provider churn x{}", n.churn_workers);
        progress(&s4);
        match repeated(n.reps, n.limit, rate_of, |_| {
            scenarios::s4_churn(rig, main, n.churn, n.churn_workers)
        })
        .await
        {
            Ok(r) => {
                let rate = r.median.rate();
                let mut row = Row::info(&s4, "connections", per_sec(rate));
                if let Some(b) = floors.churn {
                    row = row.vs(per_sec(b), ratio(rate, b));
                }
                out.rows.push(row.target("> 10,000/s", rate > 10_000.0));
                out.rows.extend(r.range_row(&s4));
                out.rows.push(spread(&s4, "connection", &r.median));
            }
            Err(e) => out.fail(&s4, e),
        }
    }
}

/// S2 through one path against each gateway: `call_tool` in process, or (`host`) the host
/// socket's invoke, two hops, so set against half the floor and not judged.
async fn s2(
    label: &str,
    host: bool,
    n: &Counts,
    setups: &[Setup],
    floors: &Floors,
    out: &mut Report,
) {
    let (calls, in_flight) = (n.fan_calls, n.in_flight);
    let what = if host { "host invoke" } else { "call_tool" };
    let runs = repeated_per_rig(setups.len(), n.reps, n.limit, counted_rate, |r, _| {
        let s = &setups[r];
        async move {
            let before = s.written();
            let l = if host {
                scenarios::s2_host(&s.rig, &s.fan, calls, in_flight).await?
            } else {
                scenarios::s2_in_process(&s.rig, &s.fan, calls, in_flight).await?
            };
            s.rig.gateway().flush_history().await;
            Ok(Counted {
                run: l,
                records: s.written() - before,
            })
        }
    })
    .await;
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => return out.fail(label, e),
    };
    let r = &runs[0];
    let rate = r.median.run.rate();
    let mut row = Row::info(label, &format!("calls ({what})"), per_sec(rate));
    if let Some(e) = floors.pipelined {
        row = match host {
            true => row.vs(format!("1/2 x {}", per_sec(e)), ratio(rate, e / 2.0)),
            false => row.vs(per_sec(e), ratio(rate, e)),
        };
    }
    out.rows.push(match host {
        true => row,
        false => row.target("> 100,000/s", rate > 100_000.0),
    });
    out.rows.extend(r.range_row(label));
    out.rows.push(spread(label, what, &r.median.run));
    let per = if host { "invoke" } else { "call" };
    out.rows
        .extend(records_row(label, setups, r.median.records, calls, per));
    if let Some(off) = runs.get(1) {
        let off_rate = off.median.run.rate();
        out.rows
            .push(rate_vs_ledger(label, what, setups, rate, off_rate, !host));
        if !host {
            out.rows.extend(off.range_row_of(label, &off_tag(setups)));
        }
    }
    if !host {
        let floor = floors.pipelined_allocs.map(|f| (f, "round trip"));
        allocs_rows(
            label,
            "call",
            calls,
            setups,
            floor,
            out,
            |s, _| async move { scenarios::s2_in_process(&s.rig, &s.fan, calls, in_flight).await },
        )
        .await;
    }
}

/// Allocations per `what` against each gateway: one counted run of `n` messages each,
/// after the timed runs, with the ledger's queue flushed inside it so its writer's work
/// counts too; E0's `floor` (allocations per its message) beside it.
async fn allocs_rows<'a, F, T>(
    label: &str,
    what: &str,
    n: usize,
    setups: &'a [Setup],
    floor: Option<(f64, &str)>,
    out: &mut Report,
    run: impl Fn(&'a Setup, usize) -> F,
) where
    F: Future<Output = Result<T, String>>,
{
    for (r, s) in setups.iter().enumerate() {
        #[cfg(feature = "lock-count")]
        let locks = tap_gateway::state_locks();
        let counted = allocations_per(n, async {
            let result = run(s, r).await;
            s.rig.gateway().flush_history().await;
            result
        });
        let per = match counted.await {
            Ok(per) => per,
            Err(e) => {
                out.fail(label, e);
                continue;
            }
        };
        let mut row = allocs_row(label, &format!("{what}, {}", ledger_label(s.history)), per);
        // E0's figure is shown, not divided by: it can be zero (an echo reuses its buffers).
        if let Some((f, of)) = floor {
            row.baseline = format!("E0 {f:.1} per {of}");
        }
        out.rows.push(row);
        #[cfg(feature = "lock-count")]
        out.rows.push(Row::info(
            label,
            &format!("state locks per {what}, {}", ledger_label(s.history)),
            format!("{:.2}", per_message(tap_gateway::state_locks() - locks, n)),
        ));
    }
}

//! E0's throughput floors: the bare echo's numbers the gateway's throughput rows are
//! compared with, measured in the same run.

use crate::alloc_count::allocations_per;
use crate::bare;
use crate::options::{Counts, Options};
use crate::repeat::{rate_of, repeated, same};
use crate::report::{Report, Row};
use crate::running::progress;
use crate::scenarios;
use crate::stats::per_sec;

/// The bare-echo numbers the gateway rows are compared with.
#[derive(Default)]
pub struct Floors {
    pub pipelined: Option<f64>,
    pub sink: Option<f64>,
    pub churn: Option<f64>,
    /// Allocations per pipelined round trip and per sunk frame, each from a counted run.
    pub pipelined_allocs: Option<f64>,
    pub sink_allocs: Option<f64>,
}

/// E0's throughput floors: pipelined echo, and (when S3 / S4 run) sink and churn.
pub async fn floors(opts: &Options, n: &Counts, bare: &bare::BareEcho, out: &mut Report) -> Floors {
    let url = bare.url();
    let mut floors = Floors::default();
    let e0p = format!("E0 bare echo, {} in flight", n.in_flight);
    progress(&e0p);
    match repeated(n.reps, n.limit, same, |_| {
        bare::pipelined(&url, n.pipelined, n.in_flight)
    })
    .await
    {
        Ok(r) => {
            out.rows
                .push(Row::info(&e0p, "round trips", per_sec(r.median)));
            out.rows.extend(r.range_row(&e0p));
            floors.pipelined = Some(r.median);
            let run = bare::pipelined(&url, n.pipelined, n.in_flight);
            match allocations_per(n.pipelined, run).await {
                Ok(per) => {
                    out.rows.push(allocs_row(&e0p, "round trip", per));
                    floors.pipelined_allocs = Some(per);
                }
                Err(e) => out.fail(&e0p, e),
            }
        }
        Err(e) => out.fail(&e0p, e),
    }
    if opts.wants("s3") {
        const E0I: &str = "E0 bare sink (S3 floor)";
        progress(E0I);
        match repeated(n.reps, n.limit, same, |_| {
            scenarios::bare_ingest(&url, n.pushes)
        })
        .await
        {
            Ok(r) => {
                out.rows
                    .push(Row::info(E0I, "frames in", per_sec(r.median)));
                out.rows.extend(r.range_row(E0I));
                floors.sink = Some(r.median);
                match allocations_per(n.pushes, scenarios::bare_ingest(&url, n.pushes)).await {
                    Ok(per) => {
                        out.rows.push(allocs_row(E0I, "frame", per));
                        floors.sink_allocs = Some(per);
                    }
                    Err(e) => out.fail(E0I, e),
                }
            }
            Err(e) => out.fail(E0I, e),
        }
    }
    if opts.wants("s4") {
        let e0c = format!("E0 bare churn x{} (S4 floor)", n.churn_workers);
        progress(&e0c);
        match repeated(n.reps, n.limit, rate_of, |_| {
            scenarios::bare_churn(&url, n.churn, n.churn_workers)
        })
        .await
        {
            Ok(r) => {
                out.rows
                    .push(Row::info(&e0c, "connections", per_sec(r.median.rate())));
                out.rows.extend(r.range_row(&e0c));
                floors.churn = Some(r.median.rate());
            }
            Err(e) => out.fail(&e0c, e),
        }
    }
    floors
}

/// "allocations per `what`": counted in a run of its own after the timed ones, every
/// thread of the bench's process included (`alloc_count`).
pub fn allocs_row(scenario: &str, what: &str, per: f64) -> Row {
    Row::info(
        scenario,
        &format!("allocations per {what}"),
        format!("{per:.1}"),
    )
}

//! What `run` (main.rs) does for each scenario: runs it, against its floor where it has
//! one, and turns the results into rows of the table. One file per scenario (S2-S4 in one,
//! as they run together), so that main.rs holds only the flow; here, the row builders
//! several of them share. S7 out of process and S8 keep their rows beside their
//! measurement (`s7_process.rs`, `flood.rs`).

mod floors;
mod s1;
mod s3d;
mod s5;
mod s6;
mod s7;
mod throughput;

pub use floors::floors;
pub use s1::s1_rows;
pub use s3d::s3d;
pub use s5::s5;
pub use s6::s6;
pub use s7::s7;
pub use throughput::throughput;

use crate::report::Row;
use crate::setup::Setup;
use crate::stats::{secs, Latencies};
use tap_gateway::History;

/// `ledger records per call` of the first gateway, when its ledger is on: what the on /
/// off ratios are the cost of (0 means the path writes nothing to the ledger).
pub fn records_row(
    label: &str,
    setups: &[Setup],
    records: u64,
    ops: usize,
    per: &str,
) -> Option<Row> {
    (setups[0].history != History::Off).then(|| {
        Row::info(
            label,
            &format!("ledger records per {per}"),
            format!("{:.2}", records as f64 / ops.max(1) as f64),
        )
    })
}

/// Context switches per operation of a sequential run, as an information row.
pub fn switches_row(scenario: &str, per: &str, l: &Latencies) -> Option<Row> {
    let s = l.switches_per_op()?;
    Some(Row::info(
        scenario,
        &format!("ctx switches {per}"),
        format!("{s:.1}"),
    ))
}

/// `p50 / p99 / max` of one operation under load, as an information row.
pub fn spread(scenario: &str, what: &str, l: &Latencies) -> Row {
    Row::info(
        scenario,
        &format!("{what} p50/p99/max"),
        format!(
            "{:.0}/{:.0}/{:.0} us",
            secs(l.p50()) * 1e6,
            secs(l.p99()) * 1e6,
            secs(l.max()) * 1e6
        ),
    )
}

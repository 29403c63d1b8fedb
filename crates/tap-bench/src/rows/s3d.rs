//! S3d: what the ledger can take (`ledger.rs`), against a bare SQLite insert of the same
//! rows.

use crate::ledger;
use crate::options::Counts;
use crate::repeat::{same, summarize};
use crate::report::{Report, Row};
use crate::running::{bounded, progress};
use crate::stats::{mib, per_sec, ratio, thousands};

/// S3d: pushes into the ledger's file against a bare SQLite bulk insert of the same rows,
/// interleaved run by run; every run must leave exactly its pushes in `events`.
pub async fn s3d(n: &Counts, out: &mut Report) {
    const FLOOR: &str = "E0 bare SQLite insert (S3d floor)";
    let count = n.ledger_pushes;
    let label = format!("S3d {} pushes into the ledger", thousands(count as u64));
    progress(&label);
    let (mut floor_runs, mut runs) = (Vec::new(), Vec::new());
    for i in 0..n.reps.max(1) {
        match bounded(n.limit, ledger::bare_insert(count, i)).await {
            Ok(r) => floor_runs.push(r),
            Err(e) => return out.fail(FLOOR, e),
        }
        match bounded(n.limit, ledger::s3d(count, i)).await {
            Ok(r) => runs.push(r),
            Err(e) => return out.fail(&label, e),
        }
    }
    let lost: Vec<String> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.rows != count as u64)
        .map(|(i, r)| format!("run {}: {} rows", i + 1, thousands(r.rows)))
        .collect();
    let floor = summarize(floor_runs, same);
    out.rows.push(Row::info(
        FLOOR,
        &format!("rows, {} per transaction", 1024),
        per_sec(floor.median),
    ));
    out.rows.extend(floor.range_row(FLOOR));
    // The highest peak of any run (the first usually: later runs reuse the heap it grew).
    let rss = runs
        .iter()
        .filter_map(|r| r.rss)
        .max_by_key(|&(_, peak)| peak);
    let r = summarize(runs, |r: &ledger::LedgerRun| r.rate);
    let x = ratio(r.median.rate, floor.median);
    out.rows.push(
        Row::info(&label, "pushes, first to flushed", per_sec(r.median.rate))
            .vs(format!("sqlite: {}", per_sec(floor.median)), x)
            .target(">= 0.7x the insert", x >= 0.7),
    );
    out.rows.extend(r.range_row(&label));
    out.rows.push(Row::info(
        &label,
        "producer waits (queue full)",
        thousands(r.median.waits),
    ));
    if let Some((start, peak)) = rss {
        out.rows.push(Row::info(
            &label,
            "peak RSS (bench process, highest run)",
            format!("{} (+{})", mib(peak), mib(peak.saturating_sub(start))),
        ));
    }
    if lost.is_empty() {
        out.rows.push(
            Row::info(&label, "rows in events, every run", thousands(count as u64))
                .target(&format!("== {}", thousands(count as u64)), true),
        );
    } else {
        out.fail(
            &label,
            format!(
                "rows lost: expected {} in events, found {}",
                thousands(count as u64),
                lost.join(", ")
            ),
        );
    }
}

//! S6: a command emitter through a filter into a stream and the ledger (`emitter.rs`),
//! against a bare reader of the same command's stdout.

use crate::emitter;
use crate::options::Counts;
use crate::repeat::summarize;
use crate::report::{Report, Row};
use crate::running::{bounded, progress};
use crate::stats::{mib, per_sec, ratio, secs, thousands};

/// S6: one command emitter (`seq 1 N`) through a 3-rule filter into a stream and the
/// ledger, against a bare reader of the same command's stdout, interleaved run by run (bare,
/// S6, S6 with a filter that stores one line), each S6 run on a fresh gateway. Every run's
/// counts must be what the rules give and its stored lines must all be in `events`.
pub async fn s6(n: &Counts, out: &mut Report) {
    const FLOOR: &str = "E0 bare reader (S6 floor)";
    const ONE: &str = "S6 same, filter storing 2 lines";
    let lines = n.emitter_lines;
    let label = format!("S6 emitter `seq 1 {lines}`, 3 rules");
    progress(&label);
    let (mut floor_runs, mut runs, mut one_runs) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n.reps.max(1) {
        match bounded(n.limit, emitter::bare_reader(lines)).await {
            Ok(r) => floor_runs.push(r),
            Err(e) => return out.fail(FLOOR, e),
        }
        match bounded(n.limit, emitter::s6(lines, emitter::Filter::Keeps, i)).await {
            Ok(r) => runs.push(r),
            Err(e) => return out.fail(&label, e),
        }
        match bounded(n.limit, emitter::s6(lines, emitter::Filter::Ends, i)).await {
            Ok(r) => one_runs.push(r),
            Err(e) => return out.fail(ONE, e),
        }
    }
    let mut broken = Vec::new();
    for (which, list) in [("3 rules", &runs), ("2 lines", &one_runs)] {
        for (i, r) in list.iter().enumerate() {
            let (c, e) = (&r.counts, &r.expected);
            if c != e {
                broken.push(format!(
                    "{which}, run {}: lines/kept/dropped/surfaced {}/{}/{}/{}, the rules give {}/{}/{}/{}",
                    i + 1,
                    c.lines, c.kept, c.dropped, c.surfaced,
                    e.lines, e.kept, e.dropped, e.surfaced
                ));
            }
            if r.rows != emitter::stored(c) {
                broken.push(format!(
                    "{which}, run {}: {} rows in events for {} stored lines",
                    i + 1,
                    thousands(r.rows),
                    thousands(emitter::stored(c))
                ));
            }
        }
    }
    let want = runs[0].expected;
    let floor = summarize(floor_runs, |b: &emitter::BareRun| b.rate);
    out.rows.push(Row::info(
        FLOOR,
        "lines (bash -lc, BufReader)",
        per_sec(floor.median.rate),
    ));
    out.rows.extend(floor.range_row(FLOOR));
    out.rows.push(Row::info(
        FLOOR,
        "spawn to first line (login shell)",
        format!("{:.0} ms", secs(floor.median.first_line) * 1e3),
    ));
    out.rows.push(Row::info(
        FLOOR,
        "lines, first to last line",
        per_sec(floor.median.steady),
    ));
    let bare_steady = floor.median.steady;
    let floor = floor.median.rate;
    // The run with the highest peak, and the largest growth of any run from its second
    // quarter (after the ramp) to its last.
    let rss = runs.iter().filter_map(|r| r.rss).max_by_key(|t| t.peak);
    let growth = runs
        .iter()
        .filter_map(|r| r.rss)
        .map(|t| t.quarters[3].saturating_sub(t.quarters[1]))
        .max();
    let r = summarize(runs, |r: &emitter::EmitterRunResult| r.rate);
    let x = ratio(r.median.rate, floor);
    out.rows.extend([
        Row::info(&label, "lines, run duration", per_sec(r.median.rate))
            .vs(format!("bare: {}", per_sec(floor)), x)
            .target(">= 0.5x the bare reader", x >= 0.5),
        Row::info(&label, "lines, absolute", per_sec(r.median.rate)).target(
            ">= 2,700,000/s (10x reference)",
            r.median.rate >= 2_700_000.0,
        ),
    ]);
    out.rows.extend(r.range_row(&label));
    out.rows
        .extend(steady_row(&label, r.median.steady, bare_steady));
    out.rows.extend([
        Row::info(
            &label,
            "lines, start to flushed",
            per_sec(r.median.flushed_rate),
        ),
        Row::info(
            &label,
            "stored (rows) / dropped",
            format!(
                "{} / {}",
                thousands(emitter::stored(&want)),
                thousands(want.dropped)
            ),
        ),
        Row::info(&label, "ledger producer waits", thousands(r.median.waits)),
    ]);
    if let Some(t) = rss {
        out.rows.push(Row::info(
            &label,
            &format!(
                "RSS before / peak ({} samples, {} before the first line)",
                t.samples, t.before_first_line
            ),
            format!(
                "{} / {} (+{})",
                mib(t.before),
                mib(t.peak),
                mib(t.peak.saturating_sub(t.before))
            ),
        ));
    }
    if let Some(t) = rss {
        let [a, b, c, d] = t.quarters.map(|k| format!("{:.1}", k as f64 / 1024.0));
        out.rows.push(Row::info(
            &label,
            "RSS peak by quarter of the lines (highest-peak run)",
            format!("{a} / {b} / {c} / {d} MiB"),
        ));
    }
    if let Some(g) = growth {
        out.rows.push(
            Row::info(
                &label,
                "RSS growth, 2nd line quarter to 4th (worst run)",
                format!("+{}", mib(g)),
            )
            .target("flat: <= +4 MiB", g <= 4 * 1024),
        );
    }
    if broken.is_empty() {
        out.rows.push(
            Row::info(
                &label,
                "rows in events == stored, every run",
                thousands(emitter::stored(&want)),
            )
            .target("all stored lines", true),
        );
    } else {
        out.fail(&label, broken.join("; "));
    }
    let one = summarize(one_runs, |r: &emitter::EmitterRunResult| r.rate);
    let y = ratio(one.median.rate, floor);
    out.rows.push(
        Row::info(ONE, "lines, run duration", per_sec(one.median.rate))
            .vs(format!("bare: {}", per_sec(floor)), y),
    );
    out.rows.extend(one.range_row(ONE));
    out.rows
        .extend(steady_row(ONE, one.median.steady, bare_steady));
}

/// S6's rate from its first stored line to its last (the ledger's timestamps) against the
/// bare reader's from its first line to its last: both without the login shell's startup.
fn steady_row(label: &str, steady: Option<f64>, bare: f64) -> Option<Row> {
    let s = steady?;
    Some(
        Row::info(label, "lines, first to last line", per_sec(s))
            .vs(format!("bare: {}", per_sec(bare)), ratio(s, bare)),
    )
}

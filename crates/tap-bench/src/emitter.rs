//! S6: lines/s from one command emitter. The gateway (`History::File`, a fresh one per run)
//! runs `bash -lc "seq 1 N"` as a command emitter of a session whose working directory is a
//! temp dir; every line goes through a 3-rule EventFilter into the stream `s6-rI@emitters`
//! and the ledger. The rate is lines / the run's `durationMs` (the engine's own clock: spawn
//! to the child reaped, every line routed). Afterwards the ledger's `events` table must hold
//! exactly the lines the filter stored for that stream, and the run's counts must be the
//! ones the rules give for `seq 1 N`.
//!
//! The baseline, measured in the same run: the same command spawned with tokio, its stdout
//! read with a 64 KiB `BufReader` (the emitter's buffer), each line decoded and trimmed like
//! the emitter does, the non-empty ones counted. Timed from spawn to the child reaped.
//!
//! The filter (see [`rules`]): the last line (`^N$`) is `surface` (the "done" line reaching
//! the timeline), lines ending in 7 are `drop` (noise), lines starting with 9 `keep`
//! explicitly, and the rest are kept by the no-match default. For N = 1,000,000 that stores
//! 900,000 lines (899,999 kept + 1 surfaced) and drops 100,000. The ledger stores them in
//! chunk rows (many lines a row, each line with its own id) and indexes them for search
//! after the run's rows are committed: the "start to flushed" rate includes that indexing. A second, information-only variant
//! keeps line 1 (`^1$`), surfaces the last and drops everything else (`.`): the same
//! reading and three-rule matching with (almost) no stream or ledger work, to show what
//! the stored lines cost.
//!
//! `bash -l` reads the login profile before `seq` starts (0.1–0.9 s on the shared machines,
//! which run `pyenv init` there), and both sides pay it once per run. Besides the rates over
//! the whole run, each side therefore also reports its rate from the first line to the last:
//! the bare reader by its own clock, the emitter by the ledger's `at_us` of its first and
//! last stored lines (line 1 and line N in both filters).

use crate::ledger::PeakRss;
use crate::rss;
use crate::scenarios::Rig;
use crate::stats::rate;
use crate::tempdir::TempDir;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tap_gateway::History;
use tap_protocol::emitters::{EmitterRef, EmitterRule, EmitterStart, EmitterStatus, LineCounts};
use tap_protocol::ledger::EventOutcome;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How often the bench polls the run's status, and samples the RSS, while it runs.
const POLL: Duration = Duration::from_millis(10);

/// The command both sides run.
pub fn command(lines: usize) -> String {
    format!("seq 1 {lines}")
}

/// Which filter a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Surface the last line, drop lines ending in 7, keep the rest (90 % stored).
    Keeps,
    /// Keep line 1, surface the last line, drop everything else (2 lines stored).
    Ends,
}

/// The 3 rules, first match wins, no match keeps.
pub fn rules(lines: usize, filter: Filter) -> Vec<EmitterRule> {
    let rule = |pattern: &str, outcome| EmitterRule {
        pattern: pattern.to_string(),
        outcome,
    };
    let (second, third) = match filter {
        Filter::Keeps => (
            rule("7$", EventOutcome::Drop),
            rule("^9", EventOutcome::Keep),
        ),
        Filter::Ends => (
            rule("^1$", EventOutcome::Keep),
            rule(".", EventOutcome::Drop),
        ),
    };
    vec![
        rule(&format!("^{lines}$"), EventOutcome::Surface),
        second,
        third,
    ]
}

/// What [`rules`] make of `seq 1 lines`: the last line surfaced (under the 10 deliveries/s
/// limit), then lines ending in 7 dropped and the rest kept; or, with [`Filter::Ends`],
/// line 1 kept and the rest dropped.
pub fn expected(lines: usize, filter: Filter) -> LineCounts {
    let lines = lines as u64;
    if lines == 0 {
        return LineCounts::default();
    }
    // 1..=lines-1 ending in 7: 7, 17, 27, …
    let sevens = (lines + 2) / 10;
    let rest = lines - 1 - sevens;
    let (kept, dropped) = match filter {
        Filter::Keeps => (rest, sevens),
        Filter::Ends => {
            let first = u64::from(lines > 1);
            (first, lines - 1 - first)
        }
    };
    LineCounts {
        lines,
        kept,
        dropped,
        surfaced: 1,
        injected: 0,
    }
}

/// Lines a run stored in its stream (and so in the ledger).
pub fn stored(c: &LineCounts) -> u64 {
    c.kept + c.surfaced + c.injected
}

/// The bench process's resident set around one run, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct RssTrace {
    /// Just before the emitter started.
    pub before: u64,
    /// Highest over the run: the samples and `VmHWM` (reset at the start).
    pub peak: u64,
    /// Highest sample in each quarter of the run's lines (by the emitter's live count of
    /// lines routed, not by time: the login shell's start takes a third of a fast run, and
    /// time quarters would compare RSS before the first line with RSS during the flow). The
    /// first quarter holds the ramp: the ledger's queue filling, SQLite's cache warming.
    pub quarters: [u64; 4],
    pub samples: usize,
    /// Samples taken before the first line was routed (the spawn).
    pub before_first_line: usize,
}

/// One S6 run.
pub struct EmitterRunResult {
    /// Lines / the run's `durationMs`.
    pub rate: f64,
    /// Lines / (emitters.start to `flush_history` resolved): includes the ledger's tail.
    pub flushed_rate: f64,
    /// Lines / (the last stored line's `at` - the first's): the rate without the startup.
    pub steady: Option<f64>,
    pub counts: LineCounts,
    pub expected: LineCounts,
    /// Rows in `events` for the run's stream.
    pub rows: u64,
    /// How often the emitter waited for room in the ledger's queue.
    pub waits: u64,
    pub rss: Option<RssTrace>,
}

/// S6 against a fresh gateway (its own temp `TAP_HOME`, history in the file).
pub async fn s6(lines: usize, filter: Filter, run: usize) -> Result<EmitterRunResult, String> {
    let rig = Rig::start(History::File).await?;
    let result = emit_into(&rig, lines, filter, run).await;
    rig.stop().await;
    result
}

async fn emit_into(
    rig: &Rig,
    lines: usize,
    filter: Filter,
    run: usize,
) -> Result<EmitterRunResult, String> {
    let gw = rig.gateway();
    let ledger = gw.diagnostics().ledger;
    if !ledger.durable {
        return Err(format!(
            "the ledger is not on its file: {}",
            ledger.reason.unwrap_or_default()
        ));
    }
    // Commands run in the session's workspace.
    let workspace = TempDir::new("s6")?;
    let session = rig.session_in("s6", workspace.path()).await?;
    let name = format!("s6-r{run}");
    let start_params = EmitterStart {
        session_id: session.clone(),
        name: name.clone(),
        command: Some(command(lines)),
        // Runs at once, then not again within the bench.
        every: Some("1h".into()),
        max_runs: Some(1),
        event_filter: Some(rules(lines, filter)),
        ..Default::default()
    };
    let at = EmitterRef {
        session_id: session,
        name: name.clone(),
        force: None,
        lifespan: None,
    };
    let waits_before = gw.diagnostics().ledger.waits;
    // The session's own records are committed before the clock starts.
    gw.flush_history().await;
    let pid = std::process::id();
    let peak = PeakRss::reset();
    let before = rss::vm_kib(pid, "VmRSS").ok();
    // (VmRSS KiB, lines routed so far) per poll.
    let mut samples: Vec<(u64, u64)> = Vec::new();
    let start = Instant::now();
    gw.emitters_start(&start_params)
        .map_err(|e| format!("emitters.start: {:?}: {}", e.code, e.message))?;
    let done = loop {
        tokio::time::sleep(POLL).await;
        if let Ok(kib) = rss::vm_kib(pid, "VmRSS") {
            let routed = gw
                .emitters_list(Some(&at.session_id))
                .emitters
                .iter()
                .find(|e| e.name == name)
                .map_or(0, |e| e.counts.lines);
            samples.push((kib, routed));
        }
        let runs = gw
            .emitters_runs(&at)
            .map_err(|e| format!("emitters.runs: {:?}: {}", e.code, e.message))?;
        if let Some(r) = runs.runs.iter().find(|r| r.run == 1) {
            if r.status != EmitterStatus::Running && r.status != EmitterStatus::Stopping {
                break r.clone();
            }
        }
    };
    gw.flush_history().await;
    let flushed = start.elapsed();
    let hwm = peak.read();
    if done.status != EmitterStatus::Exited || done.error.is_some() {
        return Err(format!(
            "the run ended {:?} (exit {:?}): {}",
            done.status,
            done.exit_code,
            done.error.unwrap_or_default()
        ));
    }
    let ms = done
        .duration_ms
        .ok_or("the run record has no durationMs")?
        .max(1);
    let waits = gw.diagnostics().ledger.waits.saturating_sub(waits_before);
    let path = std::path::PathBuf::from(&ledger.path);
    let (rows, span_us) = tokio::task::spawn_blocking(move || count_stream(&path, &name))
        .await
        .map_err(|e| format!("counting rows: {e}"))??;
    let rss = before.map(|before| {
        let sampled = samples.iter().map(|&(k, _)| k).max().unwrap_or(before);
        RssTrace {
            before,
            peak: hwm.map_or(sampled, |(_, p)| p.max(sampled)),
            quarters: line_quarters(&samples, lines as u64, before),
            samples: samples.len(),
            before_first_line: samples.iter().take_while(|&&(_, n)| n == 0).count(),
        }
    });
    Ok(EmitterRunResult {
        rate: done.lines.lines as f64 / (ms as f64 / 1000.0),
        flushed_rate: rate(lines, flushed),
        steady: span_us
            .filter(|&us| us > 0 && lines > 1)
            .map(|us| (lines - 1) as f64 / (us as f64 / 1e6)),
        counts: done.lines,
        expected: expected(lines, filter),
        rows,
        waits,
        rss,
    })
}

/// The highest RSS sample in each quarter of `total` lines routed; samples before the first
/// line are left out. A quarter passed between two polls takes the first sample after it
/// (the RSS as the run left that quarter), so a fast run still has four figures.
fn line_quarters(samples: &[(u64, u64)], total: u64, before: u64) -> [u64; 4] {
    let quarter_of = |n: u64| ((n.saturating_mul(4)) / total.max(1)).min(3) as usize;
    let mut out = [None::<u64>; 4];
    for &(kib, n) in samples.iter().filter(|&&(_, n)| n > 0) {
        let q = quarter_of(n);
        out[q] = Some(out[q].map_or(kib, |m| m.max(kib)));
    }
    let mut result = [before; 4];
    for q in (0..4).rev() {
        result[q] = match out[q] {
            Some(kib) => kib,
            None if q < 3 => result[q + 1],
            None => samples.last().map_or(before, |&(k, _)| k),
        };
    }
    result
}

/// Lines of the emitters' stream `stream` in `events` (chunk rows hold many: their
/// `lines`), and the microseconds from its first row's `at_us` to its last's, read on a
/// connection of our own.
fn count_stream(path: &Path, stream: &str) -> Result<(u64, Option<i64>), String> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    conn.query_row(
        "SELECT coalesce(sum(lines), 0), max(at_us) - min(at_us) FROM events
         WHERE provider = 'emitters' AND stream = ?1",
        [stream],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, Option<i64>>(1)?)),
    )
    .map_err(|e| format!("counting {}: {e}", path.display()))
}

/// One baseline run.
pub struct BareRun {
    /// Lines/s, spawn to reaped.
    pub rate: f64,
    /// Spawn to the first line: mostly `bash -l` reading the login profile, which both
    /// sides pay once per run.
    pub first_line: Duration,
    /// Lines/s from the first line to the last.
    pub steady: f64,
}

/// The baseline: the same command, its lines counted; lines/s from spawn to reaped.
pub async fn bare_reader(lines: usize) -> Result<BareRun, String> {
    let start = Instant::now();
    let mut child = tokio::process::Command::new("bash")
        .arg("-lc")
        .arg(command(lines))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawning bash: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (counted, first, last) = count_lines(stdout)
        .await
        .map_err(|e| format!("reading stdout: {e}"))?;
    let status = child
        .wait()
        .await
        .map_err(|e| format!("waiting for bash: {e}"))?;
    let elapsed = start.elapsed();
    if !status.success() || counted != lines as u64 {
        return Err(format!(
            "`{}` gave {counted} lines ({status})",
            command(lines)
        ));
    }
    Ok(BareRun {
        rate: rate(lines, elapsed),
        first_line: first.map_or(elapsed, |t| t.duration_since(start)),
        steady: match (first, last) {
            (Some(a), Some(b)) if lines > 1 => rate(lines - 1, b.duration_since(a)),
            _ => 0.0,
        },
    })
}

/// Non-empty lines of `pipe`, each decoded (lossy UTF-8) and trimmed as the emitter does,
/// and when the first and the last were read.
pub async fn count_lines<R: AsyncRead + Unpin>(
    pipe: R,
) -> std::io::Result<(u64, Option<Instant>, Option<Instant>)> {
    let mut reader = BufReader::with_capacity(64 * 1024, pipe);
    let mut line = Vec::new();
    let (mut n, mut first, mut last) = (0, None, None);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok((n, first, last));
        }
        if !String::from_utf8_lossy(&line).trim().is_empty() {
            n += 1;
            let now = Instant::now();
            first.get_or_insert(now);
            last = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_quarters_follow_the_lines_routed_and_skip_the_spawn() {
        // Four polls during the spawn at 10 MiB, then the flow.
        let samples = [
            (10, 0),
            (10, 0),
            (10, 0),
            (10, 0),
            (20, 100),
            (21, 300),
            (22, 600),
            (23, 900),
            (24, 1000),
        ];
        assert_eq!(line_quarters(&samples, 1000, 9), [20, 21, 22, 24]);
        // A quarter passed between two polls takes the next sample.
        assert_eq!(
            line_quarters(&[(5, 0), (30, 100), (31, 900)], 1000, 4),
            [30, 31, 31, 31]
        );
        // No line at all: the last sample throughout.
        assert_eq!(line_quarters(&[(7, 0), (8, 0)], 1000, 6), [8, 8, 8, 8]);
    }

    /// The rules applied by hand to `seq 1 n`.
    fn brute(n: usize, filter: Filter) -> LineCounts {
        let mut c = LineCounts::default();
        for i in 1..=n {
            let s = i.to_string();
            c.lines += 1;
            if i == n {
                c.surfaced += 1;
            } else if filter == Filter::Ends {
                if i == 1 {
                    c.kept += 1;
                } else {
                    c.dropped += 1;
                }
            } else if s.ends_with('7') {
                c.dropped += 1;
            } else {
                c.kept += 1;
            }
        }
        c
    }

    #[test]
    fn expected_counts_follow_the_rules() {
        for n in [1, 6, 7, 8, 17, 99, 100, 1_000, 12_347] {
            for f in [Filter::Keeps, Filter::Ends] {
                assert_eq!(expected(n, f), brute(n, f), "n = {n}, {f:?}");
            }
        }
        let full = expected(1_000_000, Filter::Keeps);
        assert_eq!(
            (full.kept, full.dropped, full.surfaced),
            (899_999, 100_000, 1)
        );
        assert_eq!(stored(&full), 900_000);
        assert_eq!(stored(&expected(1_000_000, Filter::Ends)), 2);
    }

    #[test]
    fn rules_are_three_and_surface_only_the_last_line() {
        let r = rules(1_000, Filter::Keeps);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].pattern, "^1000$");
        assert_eq!(r[0].outcome, EventOutcome::Surface);
        let e = rules(1_000, Filter::Ends);
        assert_eq!(e.len(), 3);
        assert_eq!(
            (e[1].pattern.as_str(), e[1].outcome),
            ("^1$", EventOutcome::Keep)
        );
        assert_eq!(
            (e[2].pattern.as_str(), e[2].outcome),
            (".", EventOutcome::Drop)
        );
    }

    #[tokio::test]
    async fn the_bare_reader_counts_trimmed_non_empty_lines() {
        let input: &[u8] = b"1\n 2 \r\n\n   \n3";
        let (n, first, last) = count_lines(input).await.unwrap();
        assert_eq!(n, 3);
        assert!(first.unwrap() <= last.unwrap());
    }
}

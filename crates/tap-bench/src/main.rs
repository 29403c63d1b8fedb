//! `tap-bench`: measures the Tap gateway against a bare WebSocket echo run in the same
//! process, on loopback, and prints one table with ratios, targets and PASS/MISS.
//!
//! ```text
//! cargo build --release -p tap-cli          # S5 runs the `tap` binary as a child
//! cargo run --release -p tap-bench [-- --quick] [--only s1,s3,s6] [--history on|off|both] [--tap PATH]
//! cargo run -p tap-bench -- soak [--short] [--calls N]   # the gateway under faults
//! ```
//!
//! `docs/performance.md` says what each scenario measures and how to read the numbers.
#![forbid(unsafe_code)]

mod bare;
mod emitter;
mod flood;
mod host_inline;
mod http1;
mod ledger;
mod machine;
mod mcp;
mod options;
mod provider;
mod report;
mod rss;
mod s7_process;
mod scenarios;
mod soak;
mod stats;
mod tempdir;
mod threads;
mod wire;

use machine::{print_background_load, print_machine};
use options::{ledger_label, Counts, Options, USAGE};

use report::{Row, Verdict};
use stats::{mib, micros, per_sec, thousands, Latencies};
use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;
use tap_gateway::History;

fn main() -> ExitCode {
    // `soak` is a mode of its own (issue 14); `soak-provider N` is one of its provider
    // processes, this binary run again.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("soak") => return soak::main(&args[1..]),
        Some("soak-provider") => return soak::provider_main(args.get(1).map_or("0", |s| s)),
        Some("s7-provider") => return s7_process::provider_main(),
        _ => {}
    }
    let opts = match Options::parse() {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tap-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(runtime) = runtime("tap-bench") else {
        return ExitCode::FAILURE;
    };
    // The bench drives its clients from a task on the runtime, as the gateway's own callers
    // run (host connections, MCP requests, emitters): driven from `block_on` on the main
    // thread, every in-process hand-off to a gateway task crossed threads (a futex wake each
    // way), which no caller in the product pays (run 26 in docs/performance.md).
    runtime.block_on(async {
        tokio::spawn(run(opts))
            .await
            .expect("the bench task panicked")
    })
}

/// The multi-thread runtime every mode runs on; `None` (said on stderr as `who`) when it
/// cannot start.
fn runtime(who: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("{who}: cannot start the runtime: {e}");
            None
        }
    }
}

/// Runs `fut` for at most `limit`.
async fn bounded<T>(
    limit: Duration,
    fut: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| Err(format!("did not finish within {} s", limit.as_secs())))
}

/// Progress goes to stderr so stdout is just the report.
fn progress(what: &str) {
    eprintln!("running {what} ...");
}

/// A throughput scenario run `reps` times: the median run, and the range of the rates.
struct Repeated<T> {
    median: T,
    min: f64,
    max: f64,
    reps: usize,
}

impl<T> Repeated<T> {
    /// The `min / max` row, when there was more than one run.
    fn range_row(&self, scenario: &str) -> Option<Row> {
        self.range_row_of(scenario, "")
    }

    /// The same, with `tag` after the metric (`", ledger off"`).
    fn range_row_of(&self, scenario: &str, tag: &str) -> Option<Row> {
        (self.reps > 1).then(|| {
            Row::info(
                scenario,
                &format!("min / max of {} runs{tag}", self.reps),
                format!("{} / {}", per_sec(self.min), per_sec(self.max)),
            )
        })
    }
}

async fn repeated<T, F, Fut>(
    reps: usize,
    limit: Duration,
    rate_of: impl Fn(&T) -> f64,
    mut run: F,
) -> Result<Repeated<T>, String>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut runs = Vec::with_capacity(reps);
    for i in 0..reps.max(1) {
        runs.push(bounded(limit, run(i)).await?);
    }
    Ok(summarize(runs, rate_of))
}

/// The same for each of `rigs` in-process gateways, interleaved (rig 0, rig 1, rig 0, …) so
/// that drift of the machine weighs on each alike: `run(rig, i)`; one summary per rig.
async fn repeated_per_rig<T, F, Fut>(
    rigs: usize,
    reps: usize,
    limit: Duration,
    rate_of: impl Fn(&T) -> f64,
    mut run: F,
) -> Result<Vec<Repeated<T>>, String>
where
    F: FnMut(usize, usize) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut runs: Vec<Vec<T>> = (0..rigs).map(|_| Vec::with_capacity(reps)).collect();
    for i in 0..reps.max(1) {
        for (r, list) in runs.iter_mut().enumerate() {
            list.push(bounded(limit, run(r, i)).await?);
        }
    }
    Ok(runs
        .into_iter()
        .map(|list| summarize(list, &rate_of))
        .collect())
}

/// The median of `runs` (at least one) by `rate_of`, and the range of the rates.
fn summarize<T>(mut runs: Vec<T>, rate_of: impl Fn(&T) -> f64) -> Repeated<T> {
    runs.sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
    let (min, max) = (rate_of(&runs[0]), rate_of(&runs[runs.len() - 1]));
    let reps = runs.len();
    let median = runs.swap_remove(reps / 2);
    Repeated {
        median,
        min,
        max,
        reps,
    }
}

fn same(r: &f64) -> f64 {
    *r
}

fn rate_of(l: &Latencies) -> f64 {
    l.rate()
}

fn counted_rate(c: &Counted<Latencies>) -> f64 {
    c.run.rate()
}

/// Results and errors, in table order.
struct Report {
    rows: Vec<Row>,
    errors: Vec<String>,
}

impl Report {
    fn fail(&mut self, scenario: &str, e: String) {
        self.rows.push(Row::failed(scenario, &e));
        self.errors.push(format!("{scenario}: {e}"));
    }

    /// The `tap` binary for a scenario that starts it as a child process; without one the
    /// scenario shows `SKIP` and says how to build it.
    pub(crate) fn tap_for(
        &mut self,
        scenario: &str,
        explicit: Option<&std::path::Path>,
    ) -> Option<std::path::PathBuf> {
        match rss::locate_tap(explicit) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("tap-bench: {scenario} skipped: {e}");
                self.rows.push(Row::skipped(
                    scenario,
                    "no tap binary: cargo build --release -p tap-cli",
                ));
                None
            }
        }
    }
}

/// An in-process gateway the scenarios run against, with its two sessions: `main` (one
/// provider, tool `echo`) and `fan` (10 providers, one tool each).
struct Setup {
    history: History,
    rig: scenarios::Rig,
    main: String,
    fan: String,
}

impl Setup {
    /// Records the ledger has committed so far (after a flush: everything queued).
    fn written(&self) -> u64 {
        self.rig.gateway().diagnostics().ledger.written
    }
}

/// A run, with the ledger records it caused (committed; counted after a flush).
struct Counted<T> {
    run: T,
    records: u64,
}

/// `ledger records per call` of the first gateway, when its ledger is on: what the on /
/// off ratios are the cost of (0 means the path writes nothing to the ledger).
fn records_row(label: &str, setups: &[Setup], records: u64, ops: usize, per: &str) -> Option<Row> {
    (setups[0].history != History::Off).then(|| {
        Row::info(
            label,
            &format!("ledger records per {per}"),
            format!("{:.2}", records as f64 / ops.max(1) as f64),
        )
    })
}

/// The bare-echo numbers the gateway rows are compared with.
#[derive(Default)]
struct Floors {
    pipelined: Option<f64>,
    sink: Option<f64>,
    churn: Option<f64>,
}

async fn run(opts: Options) -> ExitCode {
    wire::set_nodelay(opts.nodelay);
    print_machine(&opts);
    print_background_load().await;
    let n = Counts::new(opts.quick);
    let mut out = Report {
        rows: Vec::new(),
        errors: Vec::new(),
    };

    let bare = match bare::BareEcho::start().await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("tap-bench: cannot start the bare echo server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let in_process_wanted = ["s1", "s2", "s3", "s4", "s7"].iter().any(|s| opts.wants(s));
    // The first gateway is the one every scenario runs against; with `--history both`,
    // S1-S3 also run against the second, interleaved, for the on / off ratio.
    let mut setups = Vec::new();
    let compared = ["s1", "s2", "s3"].iter().any(|s| opts.wants(s));
    let settings = opts.history.settings();
    // Without S1-S3 only the first gateway is used: start no idle second one.
    let settings = if compared { settings } else { &settings[..1] };
    if in_process_wanted {
        for &history in settings {
            match bounded(n.limit, setup_rig(history)).await {
                Ok(s) => setups.push(s),
                Err(e) => out.fail(&format!("S1-S4 setup ({})", ledger_label(history)), e),
            }
        }
    }

    // E0 sequential, S1a and S1b (per gateway), interleaved.
    let s1: Vec<(&scenarios::Rig, &str)> = setups
        .iter()
        .filter(|_| opts.wants("s1"))
        .map(|s| (&s.rig, s.main.as_str()))
        .collect();
    progress(if s1.is_empty() {
        "E0 sequential"
    } else {
        "E0 sequential, S1a, S1b (interleaved)"
    });
    let written: Vec<u64> = s1.iter().zip(&setups).map(|(_, s)| s.written()).collect();
    let sequential = bounded(
        n.limit,
        scenarios::sequential_suite(&bare.url(), &s1, n.warmup, n.sequential, n.rounds),
    )
    .await;
    let echo = match sequential {
        Ok(seq) => {
            const E0S: &str = "E0 bare echo, sequential";
            out.rows.push(Row::info(E0S, "p50", micros(seq.echo.p50())));
            out.rows.push(Row::info(E0S, "p99", micros(seq.echo.p99())));
            out.rows
                .push(Row::info(E0S, "round trips", per_sec(seq.echo.rate())));
            out.rows
                .extend(switches_row(E0S, "per round trip", &seq.echo));
            Some(seq)
        }
        Err(e) => {
            out.fail("E0 sequential / S1", e);
            None
        }
    };

    let floors = floors(&opts, &n, &bare, &mut out).await;
    drop(bare);

    if let Some(seq) = &echo {
        s1_rows(seq, &setups, &mut out);
        if let (Some(before), Some(first)) = (written.first(), setups.first()) {
            // S1a and S1b, warm-up included: two calls per round trip of E0.
            let calls = 2 * (n.warmup + n.sequential);
            out.rows.extend(records_row(
                "S1a + S1b",
                &setups,
                first.written() - before,
                calls,
                "call",
            ));
        }
    }
    if !setups.is_empty() {
        throughput(&opts, &n, &setups, &floors, &mut out).await;
        if opts.wants("s7") {
            s7(&n, &setups[0].rig, &setups[0].main, &mut out).await;
        }
    }
    for s in setups {
        s.rig.stop().await;
    }

    // With the in-process gateways stopped, so this process holds only S7's clients.
    if opts.wants("s7") {
        s7_process::rows(opts.tap.as_deref(), &n, &mut out).await;
    }
    if opts.wants("s8") {
        flood::rows(opts.tap.as_deref(), &n, &mut out).await;
    }

    if opts.wants("s3d") {
        s3d(&n, &mut out).await;
    }

    if opts.wants("s6") {
        s6(&n, &mut out).await;
    }

    if opts.wants("s5") {
        s5(&opts, &n, &mut out).await;
    }

    report::print(&out.rows);
    let judged: Vec<_> = out
        .rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Pass | Verdict::Miss))
        .collect();
    let met = judged.iter().filter(|r| r.verdict == Verdict::Pass).count();
    println!("\ntargets met: {met} of {}", judged.len());
    if out.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("\nscenarios that broke:");
        for e in &out.errors {
            println!("  {e}");
        }
        ExitCode::FAILURE
    }
}

/// E0's throughput floors: pipelined echo, and (when S3 / S4 run) sink and churn.
async fn floors(opts: &Options, n: &Counts, bare: &bare::BareEcho, out: &mut Report) -> Floors {
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

/// S1a / S1b rows against the interleaved E0 sequential numbers (the first gateway), and
/// the first gateway's against the second's (ledger on / off).
fn s1_rows(seq: &scenarios::SequentialResults, setups: &[Setup], out: &mut Report) {
    const S1A: &str = "S1a call_tool (1 hop)";
    const S1B: &str = "S1b host invoke (2 hops)";
    let e = &seq.echo;
    let Some((a, b)) = seq.gateways.first() else {
        return;
    };
    // The second gateway's S1a and S1b, with the ledger settings, when there is one.
    let other = match (seq.gateways.get(1), setups) {
        (Some((a_off, b_off)), [on, off, ..]) => Some((on.history, off.history, [a_off, b_off])),
        _ => None,
    };
    for (i, (label, hops, l)) in [(S1A, 1.0, a), (S1B, 2.0, b)].into_iter().enumerate() {
        let times = if hops > 1.0 { "2 x " } else { "" };
        let r50 = ratio(secs(l.p50()), hops * secs(e.p50()));
        let r99 = ratio(secs(l.p99()), hops * secs(e.p99()));
        // Per hop: the gateway path's rate against the echo's (halved for two hops).
        let base = if hops > 1.0 {
            format!("1/2 x {}", per_sec(e.rate()))
        } else {
            per_sec(e.rate())
        };
        out.rows.extend([
            Row::info(label, "p50", micros(l.p50()))
                .vs(format!("{times}{}", micros(e.p50())), r50)
                .target("<= 1.3x per hop", r50 <= 1.3),
            Row::info(label, "p99", micros(l.p99())).vs(format!("{times}{}", micros(e.p99())), r99),
            Row::info(label, "calls", per_sec(l.rate())).vs(base, ratio(l.rate(), e.rate() / hops)),
        ]);
        out.rows.extend(switches_row(label, "per call", l));
        if let Some((on, off, ls)) = &other {
            out.rows
                .extend(latency_vs_ledger(label, *on, *off, l, ls[i]));
        }
    }
}

/// A sequential scenario with one ledger setting against the other: p50 (target: within
/// 10 %), p99, calls/s and the second's context switches.
fn latency_vs_ledger(
    label: &str,
    on: History,
    off: History,
    l_on: &Latencies,
    l_off: &Latencies,
) -> Vec<Row> {
    let (on, off) = (ledger_label(on), ledger_label(off));
    let r50 = ratio(secs(l_on.p50()), secs(l_off.p50()));
    let mut rows = vec![
        Row::info(label, &format!("p50 {on} / off"), micros(l_on.p50()))
            .vs(format!("{off}: {}", micros(l_off.p50())), r50)
            .target("<= 1.10x", r50 <= 1.10),
        Row::info(label, &format!("p99 {on} / off"), micros(l_on.p99())).vs(
            format!("{off}: {}", micros(l_off.p99())),
            ratio(secs(l_on.p99()), secs(l_off.p99())),
        ),
        Row::info(label, &format!("calls {on} / off"), per_sec(l_on.rate())).vs(
            format!("{off}: {}", per_sec(l_off.rate())),
            ratio(l_on.rate(), l_off.rate()),
        ),
    ];
    rows.extend(switches_row(label, &format!("per call, {off}"), l_off));
    rows
}

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
async fn throughput(
    opts: &Options,
    n: &Counts,
    setups: &[Setup],
    floors: &Floors,
    out: &mut Report,
) {
    let (rig, main) = (&setups[0].rig, setups[0].main.as_str());
    let rigs = setups.len();
    if opts.wants("s2") {
        let s2 = format!("S2 10 providers, {} in flight", n.in_flight);
        progress(&s2);
        let (calls, in_flight) = (n.fan_calls, n.in_flight);
        match repeated_per_rig(rigs, n.reps, n.limit, counted_rate, |r, _| {
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
        .await
        {
            Ok(runs) => {
                let r = &runs[0];
                let rate = r.median.run.rate();
                let mut row = Row::info(&s2, "calls (call_tool)", per_sec(rate));
                if let Some(e) = floors.pipelined {
                    row = row.vs(per_sec(e), ratio(rate, e));
                }
                out.rows.push(row.target("> 100,000/s", rate > 100_000.0));
                out.rows.extend(r.range_row(&s2));
                out.rows.push(spread(&s2, "call_tool", &r.median.run));
                out.rows
                    .extend(records_row(&s2, setups, r.median.records, calls, "call"));
                if let Some(off) = runs.get(1) {
                    let off_rate = off.median.run.rate();
                    out.rows.push(rate_vs_ledger(
                        &s2,
                        "call_tool",
                        setups,
                        rate,
                        off_rate,
                        true,
                    ));
                    out.rows.extend(off.range_row_of(&s2, &off_tag(setups)));
                }
            }
            Err(e) => out.fail(&s2, e),
        }
        progress("S2 via the host socket");
        match repeated_per_rig(rigs, n.reps, n.limit, counted_rate, |r, _| {
            let s = &setups[r];
            async move {
                let before = s.written();
                let l = scenarios::s2_host(&s.rig, &s.fan, calls, in_flight).await?;
                s.rig.gateway().flush_history().await;
                Ok(Counted {
                    run: l,
                    records: s.written() - before,
                })
            }
        })
        .await
        {
            Ok(runs) => {
                let r = &runs[0];
                let rate = r.median.run.rate();
                let mut row = Row::info(&s2, "calls (host invoke)", per_sec(rate));
                if let Some(e) = floors.pipelined {
                    row = row.vs(format!("1/2 x {}", per_sec(e)), ratio(rate, e / 2.0));
                }
                out.rows.push(row);
                out.rows.extend(r.range_row(&s2));
                out.rows.push(spread(&s2, "host invoke", &r.median.run));
                out.rows
                    .extend(records_row(&s2, setups, r.median.records, calls, "invoke"));
                if let Some(off) = runs.get(1) {
                    out.rows.push(rate_vs_ledger(
                        &s2,
                        "host invoke",
                        setups,
                        rate,
                        off.median.run.rate(),
                        false,
                    ));
                }
            }
            Err(e) => out.fail(&s2, e),
        }
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

/// S7: MCP over Streamable HTTP against the session-host WebSocket, same calls, same run.
async fn s7(n: &Counts, rig: &scenarios::Rig, main: &str, out: &mut Report) {
    const S7: &str = "S7 MCP tools/call over HTTP";
    progress(S7);
    let sequential = n.sequential / 4;
    match bounded(n.limit, mcp::s7(rig, main, n.warmup, sequential, n.rounds)).await {
        Ok(r) => {
            for (generation, l) in [("initialize", &r.legacy), ("2026-07-28", &r.stateless)] {
                let label = format!("{S7} ({generation})");
                let r50 = ratio(secs(l.p50()), secs(r.host.p50()));
                // Information since run 19: the target is judged out of process
                // (`s7_process.rs`), where the gateway's work is not mixed with the clients'.
                out.rows.extend([
                    Row::info(&label, "p50", micros(l.p50()))
                        .vs(format!("host {}", micros(r.host.p50())), r50),
                    Row::info(&label, "p99", micros(l.p99())).vs(
                        format!("host {}", micros(r.host.p99())),
                        ratio(secs(l.p99()), secs(r.host.p99())),
                    ),
                    Row::info(&label, "calls", per_sec(l.rate()))
                        .vs(per_sec(r.host.rate()), ratio(l.rate(), r.host.rate())),
                ]);
                out.rows.extend(switches_row(&label, "per call", l));
            }
            out.rows.extend(switches_row(
                &format!("{S7} (host socket)"),
                "per call",
                &r.host,
            ));
            // Information only: both clients in the caller's task (no client-side task
            // hand-offs on either side), to tell the clients' cost from the gateway's.
            let label = format!("{S7} (2026-07-28, in-task clients)");
            let (l, h) = (&r.stateless_inline, &r.host_inline);
            out.rows.extend(s7_process::in_task_rows(&label, l, h));
            out.rows.extend(switches_row(&label, "per call", l));
            out.rows.extend(switches_row(
                &format!("{S7} (host socket, in-task client)"),
                "per call",
                h,
            ));
        }
        Err(e) => out.fail(S7, e),
    }
}

/// S3d: pushes into the ledger's file against a bare SQLite bulk insert of the same rows,
/// interleaved run by run; every run must leave exactly its pushes in `events`.
async fn s3d(n: &Counts, out: &mut Report) {
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

/// S6: one command emitter (`seq 1 N`) through a 3-rule filter into a stream and the
/// ledger, against a bare reader of the same command's stdout, interleaved run by run (bare,
/// S6, S6 with a filter that stores one line), each S6 run on a fresh gateway. Every run's
/// counts must be what the rules give and its stored lines must all be in `events`.
async fn s6(n: &Counts, out: &mut Report) {
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

/// S5: the `tap` binary as a child process.
async fn s5(opts: &Options, n: &Counts, out: &mut Report) {
    const S5: &str = "S5 gateway RSS (process)";
    let Some(tap) = out.tap_for(S5, opts.tap.as_deref()) else {
        return;
    };
    progress(S5);
    match bounded(n.limit, rss::measure(&tap, n.rss_load_calls)).await {
        Ok(r) => {
            out.rows
                .push(Row::info(S5, "idle", mib(r.idle)).target("< 12 MiB", r.idle < 12 * 1024));
            let per_provider = r.per_provider();
            let bound = |n| format!("{n}x{} tools bound, no call yet", rss::TOOLS_EACH);
            out.rows
                .push(Row::info(S5, &bound(rss::PROVIDERS / 2), mib(r.half_bound)));
            out.rows
                .push(Row::info(S5, &bound(rss::PROVIDERS), mib(r.bound_uncalled)));
            out.rows.push(
                Row::info(
                    S5,
                    "per bound provider (the last 25)",
                    format!("{per_provider} KiB"),
                )
                .target("<= 16 KiB", per_provider <= 16),
            );
            out.rows.push(Row::info(
                S5,
                &format!(
                    "{}x{} tools bound, each called once",
                    rss::PROVIDERS,
                    rss::TOOLS_EACH
                ),
                mib(r.bound),
            ));
            out.rows.push(Row::info(
                S5,
                &format!("after {} calls", thousands(r.load_calls as u64)),
                mib(r.loaded),
            ));
            out.rows.push(Row::info(S5, "peak (VmHWM)", mib(r.peak)));
        }
        Err(e) => out.fail(S5, e),
    }
}

/// An in-process gateway keeping history as `history` says, with a session for S1/S3/S4
/// (one provider, tool `echo`) and a session for S2 (10 providers, one tool each).
async fn setup_rig(history: History) -> Result<Setup, String> {
    let mut rig = scenarios::Rig::start(history).await?;
    let main = rig.session("bench").await?;
    rig.provider("echo-provider", &main, &["echo".to_string()])
        .await?;
    let fan = rig.session("bench-fan").await?;
    for (i, tool) in scenarios::fan_tools().into_iter().enumerate() {
        rig.provider(&format!("fan-{i}"), &fan, &[tool]).await?;
    }
    Ok(Setup {
        history,
        rig,
        main,
        fan,
    })
}

/// Context switches per operation of a sequential run, as an information row.
fn switches_row(scenario: &str, per: &str, l: &Latencies) -> Option<Row> {
    let s = l.switches_per_op()?;
    Some(Row::info(
        scenario,
        &format!("ctx switches {per}"),
        format!("{s:.1}"),
    ))
}

/// `p50 / p99 / max` of one operation under load, as an information row.
fn spread(scenario: &str, what: &str, l: &Latencies) -> Row {
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

fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(f64::MIN_POSITIVE)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

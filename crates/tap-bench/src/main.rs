//! `tap-bench`: measures the Tap gateway against a bare WebSocket echo run in the same
//! process, on loopback, and prints one table with ratios, targets and PASS/MISS.
//!
//! ```text
//! cargo build --release -p tap-cli          # S5 runs the `tap` binary as a child
//! cargo run --release -p tap-bench [-- --quick] [--only s1,s3,s6] [--history on|off|both] [--tap PATH] [--mcp-proxy PATH]
//! cargo run -p tap-bench -- soak [--short] [--calls N]   # the gateway under faults
//! ```
//!
//! `docs/performance.md` says what each scenario measures and how to read the numbers.
// `deny`, not `forbid`: the counting allocator (`alloc_count`) is the one module that needs
// `unsafe`, and says why.
#![deny(unsafe_code)]

mod alloc_count;
mod bare;
mod emitter;
mod flood;
mod host_inline;
mod http1;
mod ledger;
mod machine;
mod mcp;
mod mcp_echo;
mod mcp_echo_http;
mod options;
mod provider;
mod repeat;
mod report;
mod rows;
mod rss;
mod running;
mod s10;
mod s10_remote;
mod s11;
mod s12;
mod s7_process;
mod s9;
mod s9_paths;
mod scenarios;
mod setup;
mod soak;
mod stats;
mod tempdir;
mod threads;
mod wire;

use machine::{print_background_load, print_machine};
use options::{ledger_label, Counts, Options, USAGE};

use report::{Report, Row, Verdict};
use rows::{floors, records_row, s1_rows, s3d, s5, s6, s7, switches_row, throughput};
use running::{bounded, progress, runtime};
use setup::setup_rig;
use stats::{micros, per_sec};

/// The allocator the `tap` binary runs the gateway with, so S1-S4 measure the in-process
/// gateway as users run it (glibc's malloc cost it a third of the ledger writer's time in
/// frees of records other threads allocated: docs/performance-log.md, run 31). E0 runs with
/// it too, so the ratios compare like with like. Wrapped to count allocations per message
/// in a run of their own (`alloc_count`).
#[global_allocator]
static ALLOCATOR: alloc_count::Counting<mimalloc::MiMalloc> =
    alloc_count::Counting(mimalloc::MiMalloc);
use std::process::ExitCode;

fn main() -> ExitCode {
    // `soak` is a mode of its own (issue 14); `soak-provider N` is one of its provider
    // processes, this binary run again.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("soak") => return soak::main(&args[1..]),
        Some("soak-provider") => return soak::provider_main(args.get(1).map_or("0", |s| s)),
        Some("s7-provider") => return s7_process::provider_main(),
        Some(s9::ECHO_MODE) => return mcp_echo::main(&args[1..]),
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
    // way), which no caller in the product pays (run 26 in docs/performance-log.md).
    runtime.block_on(async {
        tokio::spawn(run(opts))
            .await
            .expect("the bench task panicked")
    })
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
    if opts.wants("s9") {
        s9::rows(&opts, &n, &mut out).await;
    }
    if opts.wants("s10") {
        s10::rows(&opts, &n, &mut out).await;
    }

    if opts.wants("s11") {
        progress("S11 approvals: an allowed call with 1,000 rules and 1,000 grants");
        s11::rows(&n, &mut out).await;
    }

    if opts.wants("s12") {
        s12::rows(&n, &mut out).await;
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

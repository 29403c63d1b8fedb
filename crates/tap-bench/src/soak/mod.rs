//! `tap-bench soak`: the gateway under faults (issue 14). A `tap gateway` child on
//! loopback, 50 provider processes and one MCP stdio server the gateway runs (issue 36),
//! calls `IN_FLIGHT` at a time through one session-host socket, while the chaos task kills
//! providers and the MCP server, drops the host socket, sends hostile frames and abandons
//! connections. Then it checks that every call got exactly one terminal result, none hung,
//! that the MCP server came back and answers, and that memory, descriptors and threads
//! came back, and prints one line. `docs/reliability.md` says how to run it and what it last found.

mod chaos;
mod host;
mod mcp;
mod probe;
mod providers;

use crate::tempdir::TempDir;
use host::{Host, Tally};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use providers::provider_main;

const USAGE: &str = "\
usage: tap-bench soak [--short] [--calls N] [--tap PATH]

  --short            the CI version: 15,000 calls (under a minute on 2 cores, debug build)
  --calls N          calls in all (default 1,000,000); the first 5% (at least 5,000) are
                     the warm-up
  --tap PATH         the `tap` binary (default: `tap` next to this executable)";

/// Provider processes (issue 14; also the gateway's `MAX_PROVIDER_CONNECTIONS`).
const PROVIDERS: usize = 50;
const LONG_CALLS: u64 = 1_000_000;
const SHORT_CALLS: u64 = 15_000;
/// The warm-up's share of the calls (in percent): memory, descriptors and threads are
/// measured after it, under the same chaos, so that pools and caches are already grown.
const WARMUP_PERCENT: u64 = 5;
/// …and at least this many: with fewer (a 1,000-call warm-up) the short run's baseline was
/// taken before the gateway's memory had levelled off and read as 6-7% growth.
const WARMUP_MIN_CALLS: u64 = 5_000;
/// RSS may grow by less than this (percent): at rest, from the end of the warm-up to the end
/// (both measured once the chaos's sockets have closed: an allocator that returns freed
/// memory shows a loaded gateway bigger than a resting one, which is not growth); and under
/// load, over the run (see [`probe::creep`]).
const MAX_RSS_GROWTH_PERCENT: f64 = 5.0;
/// Every provider (re)started and bound: with 50 debug processes starting on 2 cores.
const BIND_WITHIN: Duration = Duration::from_secs(30);
/// The gateway closes the chaos's sockets and retires idle blocking threads (tokio keeps
/// one 10 s after its last job) within this after the chaos stops.
const SETTLE_WITHIN: Duration = Duration::from_secs(15);
/// Waiting for the ledger's writer to catch up before each RSS reading (at ~5k calls/s
/// it writes a full queue, ~3,000 records, in well under a second).
const DRAIN_WITHIN: Duration = Duration::from_secs(30);
/// Waiting for the chaos's last sockets to close before the baseline is taken.
const STEADY_WITHIN: Duration = Duration::from_secs(5);
/// The whole soak is bounded: this much for starting, binding and settling…
const FIXED_LIMIT: Duration = Duration::from_secs(120);
/// …plus the calls at this rate, well below what a debug build does under the chaos
/// (about 400 calls/s on 2 cores), so only a soak that has stalled hits the bound.
const MIN_CALLS_PER_SEC: u64 = 50;
/// RSS samples printed from the run after the warm-up (evenly spread).
const RSS_STEPS: usize = 11;
/// The gateway writes `gateway.json` within this after it starts.
const START_WITHIN: Duration = Duration::from_secs(10);
/// Calls to the MCP server's tool alone once the chaos is over: each must succeed.
const MCP_CHECK_CALLS: u64 = 20;
/// The only codes a call to the MCP server may end with besides success: `DISCONNECTED`
/// (retryable: it was killed with the call in flight, or a host drop kept the call from
/// running) and `NOT_FOUND` (its tool had left the session while the supervisor started it
/// again).
const MCP_EXPECTED_ERRORS: [&str; 2] = ["DISCONNECTED", "NOT_FOUND"];

struct Plan {
    calls: u64,
    tap: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Option<Plan>, String> {
    let mut plan = Plan {
        calls: LONG_CALLS,
        tap: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--short" => plan.calls = SHORT_CALLS,
            "--calls" => {
                let v = it.next().ok_or("--calls needs a value")?;
                plan.calls = v
                    .replace('_', "")
                    .parse()
                    .map_err(|_| format!("--calls: not a number: {v}"))?;
            }
            "--tap" => plan.tap = Some(PathBuf::from(it.next().ok_or("--tap needs a value")?)),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if plan.calls <= WARMUP_MIN_CALLS {
        return Err(format!(
            "--calls: more than the warm-up's {WARMUP_MIN_CALLS}"
        ));
    }
    Ok(Some(plan))
}

/// `tap-bench soak …` (the arguments after `soak`).
pub fn main(args: &[String]) -> ExitCode {
    let plan = match parse(args) {
        Ok(Some(p)) => p,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tap-bench soak: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(runtime) = crate::running::runtime("tap-bench soak") else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run(plan)) {
        Ok(failures) if failures.is_empty() => ExitCode::SUCCESS,
        Ok(failures) => {
            eprintln!("soak FAILED: {}", failures.join("; "));
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("soak FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the soak; `Ok` holds the assertions that failed.
async fn run(plan: Plan) -> Result<Vec<String>, String> {
    let tap = crate::rss::locate_tap(plan.tap.as_deref())?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let dir = TempDir::new("soak")?;
    let home = dir.path().join("home");
    let log_path = dir.path().join("gateway.log");
    mcp::configure(&home, &exe)?;
    let mut gateway = crate::rss::start_gateway(&tap, dir.path(), &home, &log_path)?;
    let limit = FIXED_LIMIT + Duration::from_secs(plan.calls / MIN_CALLS_PER_SEC);
    let result = tokio::time::timeout(limit, soak(&plan, &exe, &mut gateway, &home))
        .await
        .unwrap_or_else(|_| Err(format!("did not finish within {} s", limit.as_secs())));
    let _ = gateway.start_kill();
    let _ = gateway.wait().await;
    result.map_err(|e| {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{e}\ngateway log (last lines):\n{}", tail.join("\n"))
    })
}

async fn soak(
    plan: &Plan,
    exe: &Path,
    gateway: &mut Child,
    home: &Path,
) -> Result<Vec<String>, String> {
    let started = Instant::now();
    let pid = gateway.id().ok_or("gateway exited at once")?;
    let address = tokio::time::timeout(
        START_WITHIN,
        crate::rss::wait_for_gateway(gateway, home, pid),
    )
    .await
    .map_err(|_| "gateway did not start".to_string())??;
    let host_token = crate::rss::read_token(&home.join("host-token"))?;
    let provider_token = crate::rss::read_token(&home.join("provider-token"))?;

    let mut host = Host::connect(&format!("{address}/session"), &host_token).await?;
    host.register(providers::SESSION).await?;
    let mut mcp_server = mcp::McpServer::connect(&address, home).await?;
    mcp_server.in_flight = host.mcp_in_flight.clone();
    let fleet = providers::Fleet::start(exe, &format!("{address}/"), &provider_token, PROVIDERS);
    // Every provider's tool and the MCP server's.
    let tools: Vec<String> = (0..PROVIDERS)
        .map(|i| format!("echo_{i}"))
        .chain([mcp::TOOL.to_string()])
        .collect();
    host.wait_tools(tools.len(), BIND_WITHIN)
        .await
        .map_err(|e| {
            format!(
                "providers binding: {e} ({} of {} tools bound)",
                host.tools_now,
                tools.len()
            )
        })?;

    let mut tally = Tally::default();
    let warmup = (plan.calls * WARMUP_PERCENT / 100).max(WARMUP_MIN_CALLS);
    let warm = phase(
        &mut host,
        &fleet,
        &mcp_server,
        &address,
        &tools,
        warmup,
        &mut tally,
    )
    .await?;
    mcp_server.ready(BIND_WITHIN).await?;
    host.wait_tools(tools.len(), BIND_WITHIN).await?;
    let status = std::sync::Arc::new(crate::rss::bench_host(&address, &host_token).await?);
    let queued = probe::drained(&status, DRAIN_WITHIN).await;
    let base = probe::steady(pid, STEADY_WITHIN).await?;
    eprintln!(
        "soak: warm-up done ({warmup} calls); baseline {base:?} ({queued} records queued); running {} more",
        plan.calls - warmup
    );

    let tracing = CancellationToken::new();
    let trace = tokio::spawn(probe::rss_over_time(pid, status.clone(), tracing.clone()));
    let main = phase(
        &mut host,
        &fleet,
        &mcp_server,
        &address,
        &tools,
        plan.calls - warmup,
        &mut tally,
    )
    .await;
    tracing.cancel();
    let trace = trace.await.unwrap_or_default();
    let main = main?;
    let mcp_entry = mcp_server.ready(BIND_WITHIN).await?;
    host.wait_tools(tools.len(), BIND_WITHIN).await?;
    // Measured as the baseline was: once the ledger has written what the calls left queued
    // and the chaos's last sockets have closed.
    let queued_at_end = probe::drained(&status, DRAIN_WITHIN).await;
    let at_end = probe::steady(pid, STEADY_WITHIN).await?;
    if queued_at_end > 0 {
        eprintln!("soak: {queued_at_end} records still queued for the ledger at the end");
    }
    let rss_end = at_end.rss_kib;
    let creep = probe::creep(&trace.rss_kib);
    let end = probe::settle(pid, SETTLE_WITHIN, |s| {
        s.fds <= base.fds && s.threads <= base.threads
    })
    .await?;
    let kills = fleet.kills.load(std::sync::atomic::Ordering::Relaxed);
    let exits = fleet.exits.load(std::sync::atomic::Ordering::Relaxed);
    let fleet_reasons = fleet.exit_reasons.clone();
    // The server the chaos killed answers again, every time.
    let mut after = Tally::default();
    let (_no_drops, mut no_drops) = mpsc::unbounded_channel();
    let only_mcp = [mcp::TOOL.to_string()];
    host.drive(MCP_CHECK_CALLS, &only_mcp, &mut after, &mut no_drops)
        .await?;
    host.close().await;
    fleet.stop().await;
    let elapsed = started.elapsed();

    let chaos = chaos::Counts {
        host_drops: warm.host_drops + main.host_drops,
        hostile_frames: warm.hostile_frames + main.hostile_frames,
        hostile_connections: warm.hostile_connections + main.hostile_connections,
        abandoned: warm.abandoned + main.abandoned,
        mcp_kills: warm.mcp_kills + main.mcp_kills,
    };
    let growth = (rss_end as f64 / base.rss_kib as f64 - 1.0) * 100.0;
    println!(
        "{}",
        summary(&tally, kills, exits, &chaos, base, end, at_end, growth, creep, elapsed)
    );
    let steps: Vec<String> = probe::spread(&trace.rss_kib, RSS_STEPS)
        .iter()
        .map(|m| format!("{m:.1}"))
        .collect();
    println!(
        "soak: RSS (MiB) over the calls after the warm-up: {}",
        steps.join(" ")
    );
    println!(
        "soak: ledger queue at most {} of {} records; {} waits for room",
        trace.ledger_peak, trace.ledger_capacity, trace.ledger_waits
    );
    for (reason, n) in fleet_reasons.lock().unwrap().iter() {
        println!("soak: {n} provider exit(s) on their own: {reason}");
    }
    let mcp = McpOutcome {
        calls: &tally.mcp,
        kills: chaos.mcp_kills,
        restarts: mcp_entry.restarts,
        after_ok: after.ok,
    };
    println!("{}", mcp.summary());
    let mut failed = failures(plan, &tally, kills, base, end, growth, creep);
    failed.extend(mcp.failures());
    Ok(failed)
}

/// What became of the MCP server and the calls to it.
struct McpOutcome<'a> {
    calls: &'a std::collections::BTreeMap<String, u64>,
    kills: u64,
    restarts: u32,
    /// Of the `MCP_CHECK_CALLS` made once the chaos was over.
    after_ok: u64,
}

impl McpOutcome<'_> {
    fn summary(&self) -> String {
        let outcomes: Vec<String> = self.calls.iter().map(|(k, n)| format!("{n} {k}")).collect();
        format!(
            "soak: MCP server: {} calls ({}); {} kills mid-call, {} restarts; after the chaos {}/{MCP_CHECK_CALLS} ok",
            self.calls.values().sum::<u64>(),
            outcomes.join(", "),
            self.kills,
            self.restarts,
            self.after_ok
        )
    }

    fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        let unexpected: Vec<String> = self
            .calls
            .iter()
            .filter(|(k, _)| {
                // The code is the first word (`DISCONNECTED (never ran, at a drop)`).
                let code = k.split(' ').next().unwrap_or_default();
                code != "ok" && !MCP_EXPECTED_ERRORS.contains(&code)
            })
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        if !unexpected.is_empty() {
            f.push(format!(
                "MCP calls ended other than ok or {MCP_EXPECTED_ERRORS:?}: {}",
                unexpected.join(", ")
            ));
        }
        if self.kills == 0 || self.calls.get("ok").is_none_or(|n| *n == 0) {
            f.push("vacuous: no MCP server kill or no successful MCP call".into());
        }
        if (self.restarts as u64) < self.kills {
            f.push(format!(
                "MCP server killed {} times, restarted {}",
                self.kills, self.restarts
            ));
        }
        if self.after_ok != MCP_CHECK_CALLS {
            f.push(format!(
                "after the chaos {} of {MCP_CHECK_CALLS} MCP calls succeeded",
                self.after_ok
            ));
        }
        f
    }
}

/// Calls with the chaos running; the chaos stops when the last call has its result.
async fn phase(
    host: &mut Host,
    fleet: &providers::Fleet,
    mcp_server: &mcp::McpServer,
    address: &str,
    tools: &[String],
    calls: u64,
    tally: &mut Tally,
) -> Result<chaos::Counts, String> {
    let (drop_tx, mut drop_rx) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let chaos = chaos::run(
        address.to_string(),
        fleet,
        mcp_server,
        drop_tx,
        stop.clone(),
    );
    let calls = async {
        let r = host.drive(calls, tools, tally, &mut drop_rx).await;
        stop.cancel();
        r
    };
    let (counts, driven) = tokio::join!(chaos, calls);
    driven.map(|()| counts)
}

#[allow(clippy::too_many_arguments)]
fn summary(
    t: &Tally,
    kills: u64,
    exits: u64,
    c: &chaos::Counts,
    base: probe::Sample,
    end: probe::Sample,
    at_end: probe::Sample,
    growth: f64,
    creep: Option<f64>,
    elapsed: Duration,
) -> String {
    let creep = creep.map_or("too short to tell".into(), |c| format!("{c:+.1}%"));
    let mib = |kib: u64| kib as f64 / 1024.0;
    let errors: String = t
        .errors
        .iter()
        .map(|(code, n)| format!(", {n} {code}"))
        .collect();
    format!(
        "soak: {} calls, {} ok{errors}, {} lost, {} hung, {} duplicate, {} unknown; \
         {kills} provider kills (+{exits} exits), {} host drops (+{} unasked), \
         {} hostile frames on {} connections, {} abandoned connections; \
         RSS at rest {:.1} -> {:.1} MiB ({growth:+.1}%; anon {:.1} -> {:.1}, mapped {:.1} -> {:.1}), \
         under load {creep}; \
         fds {} -> {}; threads {} -> {}; {} s",
        t.issued,
        t.ok,
        t.lost,
        t.hung,
        t.duplicates,
        t.unknown,
        t.host_drops,
        t.unexpected_drops,
        c.hostile_frames,
        c.hostile_connections,
        c.abandoned,
        mib(base.rss_kib),
        mib(at_end.rss_kib),
        mib(base.anon_kib),
        mib(at_end.anon_kib),
        mib(base.mapped_kib),
        mib(at_end.mapped_kib),
        base.fds,
        end.fds,
        base.threads,
        end.threads,
        elapsed.as_secs()
    )
}

/// The assertions of issue 14, as the sentences that say which failed.
fn failures(
    plan: &Plan,
    t: &Tally,
    kills: u64,
    base: probe::Sample,
    end: probe::Sample,
    growth: f64,
    creep: Option<f64>,
) -> Vec<String> {
    let mut f = Vec::new();
    if t.issued != plan.calls || t.terminal() != plan.calls {
        f.push(format!(
            "{} calls issued, {} terminal results, {} expected",
            t.issued,
            t.terminal(),
            plan.calls
        ));
    }
    if t.lost > 0 {
        f.push(format!(
            "{} calls in flight at a host drop never got a result",
            t.lost
        ));
    }
    if t.hung > 0 {
        f.push(format!("{} calls hung past their timeout", t.hung));
    }
    if t.duplicates + t.unknown > 0 {
        f.push(format!(
            "{} second results and {} results for unknown calls",
            t.duplicates, t.unknown
        ));
    }
    if t.ok == 0 || kills == 0 || t.host_drops == 0 {
        f.push("vacuous: no successful call, provider kill or host drop".into());
    }
    if growth >= MAX_RSS_GROWTH_PERCENT {
        f.push(format!(
            "RSS grew {growth:.1}% at rest (limit {MAX_RSS_GROWTH_PERCENT}%)"
        ));
    }
    if let Some(creep) = creep.filter(|c| *c >= MAX_RSS_GROWTH_PERCENT) {
        f.push(format!(
            "RSS grew {creep:.1}% under load (limit {MAX_RSS_GROWTH_PERCENT}%)"
        ));
    }
    if end.fds > base.fds {
        f.push(format!("open descriptors {} -> {}", base.fds, end.fds));
    }
    if end.threads > base.threads {
        f.push(format!("threads {} -> {}", base.threads, end.threads));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_the_command_line() {
        let p = parse(&args(&[])).unwrap().unwrap();
        assert_eq!(p.calls, LONG_CALLS);
        let p = parse(&args(&["--short"])).unwrap().unwrap();
        assert_eq!(p.calls, SHORT_CALLS);
        let p = parse(&args(&["--calls", "200_000"])).unwrap().unwrap();
        assert_eq!(p.calls, 200_000);
        assert!(parse(&args(&["--calls", "5000"])).is_err());
        assert!(parse(&args(&["--bogus"])).is_err());
        assert!(parse(&args(&["--help"])).unwrap().is_none());
    }

    #[test]
    fn mcp_calls_may_end_ok_disconnected_or_not_found_and_must_succeed_after() {
        let mut calls = std::collections::BTreeMap::new();
        calls.insert("ok".to_string(), 10);
        calls.insert("DISCONNECTED".to_string(), 3);
        calls.insert("DISCONNECTED (never ran, at a drop)".to_string(), 1);
        calls.insert("NOT_FOUND".to_string(), 2);
        let mut m = McpOutcome {
            calls: &calls,
            kills: 2,
            restarts: 2,
            after_ok: MCP_CHECK_CALLS,
        };
        assert!(m.failures().is_empty(), "{:?}", m.failures());
        m.after_ok -= 1;
        m.restarts = 1;
        assert_eq!(m.failures().len(), 2, "{:?}", m.failures());
        calls.insert("TIMEOUT".to_string(), 1);
        let m = McpOutcome {
            calls: &calls,
            kills: 0,
            restarts: 0,
            after_ok: MCP_CHECK_CALLS,
        };
        let f = m.failures();
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[0].contains("1 TIMEOUT"), "{f:?}");
    }

    #[test]
    fn a_clean_run_has_no_failures() {
        let plan = Plan {
            calls: 100,
            tap: None,
        };
        let mut t = Tally {
            issued: 100,
            ok: 98,
            host_drops: 1,
            ..Tally::default()
        };
        t.errors.insert("DISCONNECTED".into(), 2);
        let s = probe::Sample {
            rss_kib: 1000,
            anon_kib: 900,
            mapped_kib: 100,
            fds: 60,
            threads: 5,
        };
        assert!(failures(&plan, &t, 1, s, s, 1.0, Some(1.0)).is_empty());
        assert!(failures(&plan, &t, 1, s, s, 1.0, None).is_empty());
        t.hung = 1;
        t.ok = 97;
        let more = probe::Sample { fds: 61, ..s };
        let f = failures(&plan, &t, 1, s, more, 6.0, Some(5.5));
        assert_eq!(f.len(), 5, "{f:?}");
        // Lost at a host drop: short of a terminal result, and said so.
        t.hung = 0;
        t.lost = 1;
        assert_eq!(failures(&plan, &t, 1, s, s, 1.0, None).len(), 2);
    }
}

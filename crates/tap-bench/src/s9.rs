//! S9: an MCP server run by the gateway (issue 36), against the same server called directly.
//!
//! The server is `tap-bench mcp-echo-server` (`mcp_echo.rs`), this binary again: a
//! one-thread stdio echo, so the server is never what is measured. Each path has its own
//! copy of it, the same code:
//!
//! - **direct**: the bench spawns the server and speaks MCP stdio to it (`StdioMcp`, below:
//!   `initialize`, then `tools/call` lines, answers matched by id by a reader task, as the
//!   stdio clients of the MCP SDKs do). The floor.
//! - **gateway**: `tap gateway` as a child process, the server configured in its
//!   `$TAP_HOME/mcp.json` as `bench`, called as `bench__echo` over `/mcp/<session>`
//!   (Streamable HTTP, the `initialize` generation) with S7's hyper client (`mcp.rs`). The
//!   ledger is on (a temp `TAP_HOME`), the product's default.
//! - **mcp-proxy** (when it is installed): the PyPI stdio ↔ Streamable HTTP bridge, the peer
//!   the issue names, on the same server, with the same client at its `/mcp/`. Found with
//!   `--mcp-proxy PATH`, else `mcp-proxy` on `PATH`; without it its rows say so.
//!
//! Two measurements, each path against the direct one in the same run:
//!
//! - **sequential**: one call at a time on one client, the paths interleaved round by round
//!   (as S1 and S7): p50 and p99. Target: the gateway's p50 ≤ 1.3x direct.
//! - **32 in flight**: 32 tasks calling at once, each on its own HTTP connection (an
//!   HTTP/1.1 connection carries one request at a time); directly, 32 tasks on the one stdio
//!   pipe. Calls/s, each path run `reps` times in turn, the median shown. Target: the
//!   gateway ≥ 0.5x direct.
//!
//! Against mcp-proxy the issue asks the gateway to be ahead on both.

use crate::bare::run_workers;
use crate::options::{Counts, Options};
use crate::repeat::{rate_of, repeated_per_rig, Repeated};
use crate::report::{Report, Row};
use crate::rows::spread;
use crate::running::{bounded, progress};
use crate::s9_paths::{GatewaySide, ProxySide, Side, StdioMcp};
use crate::stats::{
    micros, own_cpu, per_sec, process_cpu, process_switches, ratio, secs, Latencies, Sampler,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use crate::s9_paths::{write_mcp_json, ECHO_MODE};

const S9: &str = "S9 MCP stdio server";
/// Calls at once in the throughput measurement.
pub const IN_FLIGHT: usize = 32;

/// S9's rows: direct, through the gateway, through mcp-proxy when it is there.
pub async fn rows(opts: &Options, n: &Counts, out: &mut Report) {
    let Some(tap) = out.tap_for(S9, opts.tap.as_deref()) else {
        return;
    };
    progress(&format!("{S9} (direct, tap gateway, mcp-proxy)"));
    let proxy = locate_mcp_proxy(opts.mcp_proxy.as_deref());
    match bounded(2 * n.limit, measure(&tap, proxy.as_deref(), n)).await {
        Ok(r) => push_rows(&r, out),
        Err(e) => out.fail(S9, e),
    }
}

/// `--mcp-proxy PATH`, else `mcp-proxy` on `PATH`.
fn locate_mcp_proxy(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("mcp-proxy"))
        .find(|p| p.is_file())
}

/// One path's results (S10's too).
pub(crate) struct PathResult {
    pub(crate) sequential: Latencies,
    pub(crate) loaded: Repeated<Latencies>,
    /// Sequential: context switches per call of the path's other processes (the gateway
    /// or mcp-proxy, then the server), `None` where a count failed.
    pub(crate) peers: Vec<Option<f64>>,
    /// 32 in flight: CPU microseconds per call of the bench, then of each of the path's
    /// processes, over all its runs (where the machine's two cores go).
    pub(crate) cpu: Vec<Option<f64>>,
}

struct Results {
    direct: PathResult,
    gateway: PathResult,
    /// `None`: mcp-proxy is not installed.
    proxy: Option<PathResult>,
}

async fn measure(tap: &Path, proxy: Option<&Path>, n: &Counts) -> Result<Results, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let stdio = StdioMcp::spawn(&exe).await?;
    let mut pids = vec![stdio.child.id().into_iter().collect::<Vec<_>>()];
    let direct = Side::Direct(Arc::new(stdio));
    let gateway = GatewaySide::start(tap, &exe).await?;
    pids.push(with_child(gateway.child.id()));
    let mut sides = vec![direct, gateway.sides[0].clone()];
    let peer = match proxy {
        Some(p) => match ProxySide::start(p, &exe).await {
            Ok(s) => Some(s),
            Err(e) => return gateway.stop(Err(format!("mcp-proxy: {e}"))).await,
        },
        None => None,
    };
    if let Some(p) = &peer {
        sides.push(p.side.clone());
        pids.push(with_child(p.child.id()));
    }
    let result = run_sides(&sides, &pids, n).await;
    drop(sides);
    if let Some(p) = peer {
        p.stop().await;
    }
    let mut results = gateway.stop(result).await?.into_iter();
    let mut next = || results.next();
    let (Some(direct), Some(gateway)) = (next(), next()) else {
        return Err("a path has no results".into());
    };
    Ok(Results {
        direct,
        gateway,
        proxy: next(),
    })
}

/// `pid` and its first child (the echo server a gateway or mcp-proxy started).
fn with_child(pid: Option<u32>) -> Vec<u32> {
    let Some(pid) = pid else {
        return Vec::new();
    };
    let child = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .find_map(|c| c.split_whitespace().next().and_then(|p| p.parse().ok()));
    std::iter::once(pid).chain(child).collect()
}

/// The sequential rounds, then the loaded runs, every side in turn; `pids[i]` are side
/// `i`'s processes whose context switches are counted (S10 runs its paths through it too).
pub(crate) async fn run_sides(
    sides: &[Side],
    pids: &[Vec<u32>],
    n: &Counts,
) -> Result<Vec<PathResult>, String> {
    let seq = n.sequential / 4;
    let mut fresh = Vec::with_capacity(sides.len());
    for side in sides {
        fresh.push(side.fresh(1).await?);
    }
    let sides = &fresh[..];
    for side in sides {
        for _ in 0..n.warmup / 4 {
            side.call(0).await?;
        }
    }
    let mut samplers: Vec<Sampler> = sides.iter().map(|_| Sampler::new(seq)).collect();
    let mut totals: Vec<Vec<Option<u64>>> = pids.iter().map(|p| vec![Some(0); p.len()]).collect();
    let per_round = seq.div_ceil(n.rounds.max(1));
    let mut left = seq;
    while left > 0 {
        let k = per_round.min(left);
        left -= k;
        for ((side, sampler), (pids, totals)) in sides
            .iter()
            .zip(&mut samplers)
            .zip(pids.iter().zip(&mut totals))
        {
            let before: Vec<_> = pids.iter().map(|&p| process_switches(p)).collect();
            sampler.begin();
            for _ in 0..k {
                sampler.time(side.call(0)).await?;
            }
            sampler.end();
            for ((total, &pid), before) in totals.iter_mut().zip(pids).zip(before) {
                *total = match (*total, before, process_switches(pid)) {
                    (Some(t), Some(b), Some(a)) => Some(t + a.saturating_sub(b)),
                    _ => None,
                };
            }
        }
    }
    let calls = n.mcp_calls;
    // CPU time of the bench and of each of the side's processes over its loaded runs.
    let cpu: Vec<Mutex<Vec<Option<Duration>>>> = pids
        .iter()
        .map(|p| Mutex::new(vec![Some(Duration::ZERO); p.len() + 1]))
        .collect();
    let loaded = repeated_per_rig(sides.len(), n.reps, n.limit, rate_of, |s, _| {
        let (side, pids, cpu) = (&sides[s], &pids[s], &cpu[s]);
        async move {
            let side = side.fresh(IN_FLIGHT).await?;
            let read = || -> Vec<Option<Duration>> {
                std::iter::once(own_cpu())
                    .chain(pids.iter().map(|&p| process_cpu(p)))
                    .collect()
            };
            let before = read();
            let run = run_workers(calls, IN_FLIGHT, move |w, _| {
                let side = side.clone();
                async move { side.call(w).await }
            })
            .await;
            let mut total = cpu.lock().unwrap();
            for ((t, b), a) in total.iter_mut().zip(before).zip(read()) {
                *t = match (*t, b, a) {
                    (Some(t), Some(b), Some(a)) => Some(t + a.saturating_sub(b)),
                    _ => None,
                };
            }
            run
        }
    })
    .await?;
    let loaded_calls = (calls * n.reps.max(1)).max(1) as f64;
    let per_call = |t: Option<u64>| t.map(|t| t as f64 / seq.max(1) as f64);
    Ok(samplers
        .into_iter()
        .zip(loaded)
        .zip(totals)
        .zip(cpu)
        .map(|(((s, loaded), totals), cpu)| PathResult {
            sequential: s.finish(),
            loaded,
            peers: totals.into_iter().map(per_call).collect(),
            cpu: cpu
                .into_inner()
                .unwrap()
                .into_iter()
                .map(|t| t.map(|t| t.as_secs_f64() * 1e6 / loaded_calls))
                .collect(),
        })
        .collect())
}

fn push_rows(r: &Results, out: &mut Report) {
    let d = &r.direct;
    let direct = format!("{S9} (direct, stdio)");
    out.rows.extend([
        Row::info(&direct, "p50", micros(d.sequential.p50())),
        Row::info(&direct, "p99", micros(d.sequential.p99())),
        Row::info(&direct, "calls, sequential", per_sec(d.sequential.rate())),
        Row::info(
            &direct,
            &format!("calls, {IN_FLIGHT} in flight"),
            per_sec(d.loaded.median.rate()),
        ),
        spread(&direct, &format!("{IN_FLIGHT} in flight"), &d.loaded.median),
    ]);
    out.rows.extend(d.loaded.range_row(&direct));
    out.rows.push(switches(&direct, "bench / server", d));
    out.rows.push(cpu_row(&direct, "bench / server", d));
    let gateway = format!("{S9} (through the gateway)");
    path_rows(&gateway, &r.gateway, d, true, out);
    out.rows
        .push(switches(&gateway, "bench / gateway / server", &r.gateway));
    out.rows
        .push(cpu_row(&gateway, "bench / gateway / server", &r.gateway));
    let proxy = format!("{S9} (through mcp-proxy)");
    let Some(p) = &r.proxy else {
        out.rows.push(Row::skipped(
            &proxy,
            "mcp-proxy not installed (pip install mcp-proxy)",
        ));
        out.rows.push(Row::skipped(
            &format!("{S9} (gateway / mcp-proxy)"),
            "mcp-proxy not installed",
        ));
        return;
    };
    path_rows(&proxy, p, d, false, out);
    out.rows
        .push(switches(&proxy, "bench / mcp-proxy / server", p));
    out.rows
        .push(cpu_row(&proxy, "bench / mcp-proxy / server", p));
    // The issue: the gateway ahead of the peer bridge on both.
    let label = format!("{S9} (gateway / mcp-proxy)");
    let g = &r.gateway;
    let r50 = ratio(secs(g.sequential.p50()), secs(p.sequential.p50()));
    let rate = ratio(g.loaded.median.rate(), p.loaded.median.rate());
    out.rows.extend([
        Row::info(&label, "p50", micros(g.sequential.p50()))
            .vs(format!("mcp-proxy {}", micros(p.sequential.p50())), r50)
            .target("< 1x mcp-proxy", r50 < 1.0),
        Row::info(&label, "p99", micros(g.sequential.p99())).vs(
            format!("mcp-proxy {}", micros(p.sequential.p99())),
            ratio(secs(g.sequential.p99()), secs(p.sequential.p99())),
        ),
        Row::info(
            &label,
            &format!("calls, {IN_FLIGHT} in flight"),
            per_sec(g.loaded.median.rate()),
        )
        .vs(per_sec(p.loaded.median.rate()), rate)
        .target("> 1x mcp-proxy", rate > 1.0),
    ]);
}

/// `ctx switches per call (who)`, sequential: the bench's, then each peer's.
pub(crate) fn switches(label: &str, who: &str, l: &PathResult) -> Row {
    let show = |s: Option<f64>| s.map_or("?".to_string(), |s| format!("{s:.1}"));
    let mut text = show(l.sequential.switches_per_op());
    for p in &l.peers {
        text.push_str(" / ");
        text.push_str(&show(*p));
    }
    Row::info(label, &format!("ctx switches per call ({who})"), text)
}

/// `CPU per call, 32 in flight (who)`: the bench's, then each peer's, in microseconds.
pub(crate) fn cpu_row(label: &str, who: &str, l: &PathResult) -> Row {
    let text: Vec<String> = l
        .cpu
        .iter()
        .map(|c| c.map_or("?".to_string(), |c| format!("{c:.1}")))
        .collect();
    Row::info(
        label,
        &format!("CPU us per call, {IN_FLIGHT} in flight ({who})"),
        text.join(" / "),
    )
}

/// A path's rows against the direct one; `judged`: the gateway's targets.
pub(crate) fn path_rows(
    label: &str,
    l: &PathResult,
    d: &PathResult,
    judged: bool,
    out: &mut Report,
) {
    let (s, ds) = (&l.sequential, &d.sequential);
    let r50 = ratio(secs(s.p50()), secs(ds.p50()));
    let p50 =
        Row::info(label, "p50", micros(s.p50())).vs(format!("direct {}", micros(ds.p50())), r50);
    let (lr, dr) = (l.loaded.median.rate(), d.loaded.median.rate());
    let loaded = Row::info(label, &format!("calls, {IN_FLIGHT} in flight"), per_sec(lr))
        .vs(per_sec(dr), ratio(lr, dr));
    let (p50, loaded) = if judged {
        (
            p50.target("<= 1.3x direct", r50 <= 1.3),
            loaded.target(">= 0.5x direct", ratio(lr, dr) >= 0.5),
        )
    } else {
        (p50, loaded)
    };
    out.rows.extend([
        p50,
        Row::info(
            label,
            "p50 added to a call",
            micros(s.p50().saturating_sub(ds.p50())),
        ),
        Row::info(label, "p99", micros(s.p99())).vs(
            format!("direct {}", micros(ds.p99())),
            ratio(secs(s.p99()), secs(ds.p99())),
        ),
        Row::info(label, "calls, sequential", per_sec(s.rate()))
            .vs(per_sec(ds.rate()), ratio(s.rate(), ds.rate())),
        loaded,
        spread(label, &format!("{IN_FLIGHT} in flight"), &l.loaded.median),
    ]);
    out.rows.extend(l.loaded.range_row(label));
}

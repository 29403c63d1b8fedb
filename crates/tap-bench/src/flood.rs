//! S8: a connection flood against a well-behaved provider's calls (issue 14: "a hostile
//! client opening connections as fast as it can must not push the p99 of a well-behaved
//! provider's calls beyond 2×").
//!
//! Against the real `tap gateway` as a child process, with the `echo` provider in a process
//! of its own (both as in S7 out of process), the bench's `HostClient` calls `echo`
//! sequentially, in rounds that alternate between quiet and flooded. While flooded,
//! [`FLOODERS`] tasks in the bench open connections to the provider endpoint as fast as
//! they can: each sends a WebSocket upgrade, reads the answer's status line (101, or 503 at
//! the connection limit) and goes away without a word, the pattern the pre-auth timeout and
//! the slot pool (`socket/slots.rs`) exist for. The judged figure is the calls' p99 while
//! flooded against their p99 in the quiet rounds of the same run.
//!
//! On this 2-core machine the flooders also take CPU from everything else, the gateway
//! included; that is part of what a flood does.

use crate::report::{Report, Row};
use crate::running::{bounded, progress};
use crate::s7_process::ProcessRig;
use crate::scenarios::call_via_host;
use crate::stats::{micros, per_sec, ratio, secs, Latencies, Sampler};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const S8: &str = "S8 calls during a connection flood";
/// Tasks opening connections at once while flooded.
const FLOODERS: usize = 8;
/// Connections the flood has opened before a flooded round starts timing calls.
const FLOOD_UNDER_WAY: u64 = 200;
/// How long a flooder waits for the gateway's answer to its upgrade.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// What the flooders saw.
#[derive(Default)]
struct Outcomes {
    upgraded: AtomicU64,
    refused: AtomicU64,
    /// Connect errors, resets, other statuses, no answer in time.
    other: AtomicU64,
    under_way: Notify,
}

impl Outcomes {
    fn total(&self) -> u64 {
        [&self.upgraded, &self.refused, &self.other]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

struct Results {
    quiet: Latencies,
    flooded: Latencies,
    outcomes: Arc<Outcomes>,
    flood_time: Duration,
}

pub async fn rows(tap: Option<&Path>, n: &crate::options::Counts, out: &mut Report) {
    let Some(tap) = out.tap_for(S8, tap) else {
        return;
    };
    progress(&format!("{S8} (tap gateway, provider process)"));
    let (calls, rounds) = (n.sequential / 4, n.rounds);
    match bounded(n.limit, measure(&tap, n.warmup, calls, rounds)).await {
        Ok(r) => push_rows(&r, out),
        Err(e) => out.fail(S8, e),
    }
}

fn push_rows(r: &Results, out: &mut Report) {
    let (q, f) = (&r.quiet, &r.flooded);
    let r99 = ratio(secs(f.p99()), secs(q.p99()));
    let o = &r.outcomes;
    let opened = o.total();
    out.rows.extend([
        Row::info(S8, "p50", micros(f.p50())).vs(
            format!("quiet {}", micros(q.p50())),
            ratio(secs(f.p50()), secs(q.p50())),
        ),
        Row::info(S8, "p99", micros(f.p99()))
            .vs(format!("quiet {}", micros(q.p99())), r99)
            .target("<= 2x the quiet p99", r99 <= 2.0),
        Row::info(S8, "calls", per_sec(f.rate())).vs(per_sec(q.rate()), ratio(f.rate(), q.rate())),
        Row::info(
            S8,
            "flood connections",
            per_sec(opened as f64 / r.flood_time.as_secs_f64().max(1e-9)),
        ),
        Row::info(
            S8,
            "flood outcomes (upgraded / 503 / other)",
            format!(
                "{} / {} / {}",
                o.upgraded.load(Ordering::Relaxed),
                o.refused.load(Ordering::Relaxed),
                o.other.load(Ordering::Relaxed)
            ),
        ),
    ]);
}

async fn measure(
    tap: &Path,
    warmup: usize,
    calls: usize,
    rounds: usize,
) -> Result<Results, String> {
    let rig = ProcessRig::start(tap, "s8").await?;
    let result = rounds_of(rig.addr, &rig.host, &rig.session, warmup, calls, rounds).await;
    rig.stop(result).await
}

async fn rounds_of(
    addr: SocketAddr,
    host: &tap_client::HostClient,
    session: &str,
    warmup: usize,
    calls: usize,
    rounds: usize,
) -> Result<Results, String> {
    for _ in 0..warmup {
        call_via_host(host, session, "echo").await?;
    }
    let per_round = calls.div_ceil(rounds.max(1));
    let (mut quiet, mut flooded) = (Sampler::new(calls), Sampler::new(calls));
    let outcomes = Arc::new(Outcomes::default());
    let mut flood_time = Duration::ZERO;
    for _ in 0..rounds.max(1) {
        quiet.begin();
        for _ in 0..per_round {
            quiet.time(call_via_host(host, session, "echo")).await?;
        }
        quiet.end();

        let stop = CancellationToken::new();
        let started = Instant::now();
        let flooders: Vec<_> = (0..FLOODERS)
            .map(|_| tokio::spawn(flood(addr, outcomes.clone(), stop.clone())))
            .collect();
        // Timed once the flood is under way, not while its tasks start.
        let target = outcomes.total() + FLOOD_UNDER_WAY;
        while outcomes.total() < target {
            let waiting = outcomes.under_way.notified();
            if outcomes.total() >= target {
                break;
            }
            waiting.await;
        }
        flooded.begin();
        for _ in 0..per_round {
            flooded.time(call_via_host(host, session, "echo")).await?;
        }
        flooded.end();
        stop.cancel();
        for f in flooders {
            let _ = f.await;
        }
        flood_time += started.elapsed();
    }
    Ok(Results {
        quiet: quiet.finish(),
        flooded: flooded.finish(),
        outcomes,
        flood_time,
    })
}

/// One flooder: connect, ask for an upgrade, read the status, go; again, until `stop`.
async fn flood(addr: SocketAddr, outcomes: Arc<Outcomes>, stop: CancellationToken) {
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    while !stop.is_cancelled() {
        let status = tokio::select! {
            s = tokio::time::timeout(ANSWER_WAIT, one(addr, request.as_bytes())) => s.ok().flatten(),
            _ = stop.cancelled() => return,
        };
        let counter = match status {
            Some(101) => &outcomes.upgraded,
            Some(503) => &outcomes.refused,
            _ => &outcomes.other,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        outcomes.under_way.notify_waiters();
    }
}

/// One flood connection: the status the gateway answered, if any.
async fn one(addr: SocketAddr, request: &[u8]) -> Option<u16> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    s.write_all(request).await.ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).await.ok()?;
    // "HTTP/1.1 101"
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

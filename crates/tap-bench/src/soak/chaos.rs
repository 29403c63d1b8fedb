//! The chaos task: while calls run it SIGKILLs random providers and, while a call to it is
//! in flight, the MCP server the gateway runs, drops the host's socket, sends garbage and
//! oversized frames from a hostile connection, and opens and abandons connections. Everything runs inline in one task, each step bounded by a timeout, so the
//! chaos itself holds a bounded number of sockets and spawns nothing.

use super::mcp::{self, McpServer};
use super::providers::Fleet;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tap_protocol::limits::{HARD_FRAME_CAP_BYTES, MAX_MESSAGE_BYTES};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// How often each kind of fault happens.
#[derive(Clone, Copy)]
pub struct Rates {
    pub provider_kill: Duration,
    pub host_drop: Duration,
    pub hostile: Duration,
    pub abandon: Duration,
}

/// Faults of the short run (tens of seconds) and the long one: each kind several times a
/// run, a provider kill often enough that calls are in flight to it when it dies.
pub const RATES: Rates = Rates {
    provider_kill: Duration::from_millis(500),
    host_drop: Duration::from_secs(2),
    hostile: Duration::from_millis(200),
    abandon: Duration::from_millis(100),
};

/// One hostile connection or abandoned socket may take this long; past it the chaos moves
/// on (the socket is dropped).
const STEP_TIMEOUT: Duration = Duration::from_secs(5);
/// Every this many hostile connections, one also sends a frame above the hard frame cap
/// (16 MiB and up: costly to build, so not every time).
const HARD_CAP_EVERY: u64 = 20;

#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    pub host_drops: u64,
    pub hostile_frames: u64,
    pub hostile_connections: u64,
    pub abandoned: u64,
    /// The MCP server's process killed with a call to it in flight.
    pub mcp_kills: u64,
}

/// Runs until `stop`. `address` is the gateway's `ws://host:port`.
pub async fn run(
    address: String,
    fleet: &Fleet,
    mcp_server: &McpServer,
    host_drop: mpsc::UnboundedSender<()>,
    stop: CancellationToken,
) -> Counts {
    let mut counts = Counts::default();
    let mut rng = Rng::seeded();
    let mut kill = tokio::time::interval(RATES.provider_kill);
    let mut drop = tokio::time::interval(RATES.host_drop);
    let mut hostile = tokio::time::interval(RATES.hostile);
    let mut abandon = tokio::time::interval(RATES.abandon);
    // The first tick of an interval is immediate; the chaos starts one period in.
    for i in [&mut kill, &mut drop, &mut hostile, &mut abandon] {
        i.reset();
    }
    let mcp_kill_at = |rng: &mut Rng| {
        let jitter = Duration::from_millis(rng.below(mcp::KILL_JITTER_MS));
        tokio::time::Instant::now() + mcp::KILL_EVERY + jitter
    };
    let mut mcp_due = mcp_kill_at(&mut rng);
    let hostport = address.trim_start_matches("ws://").to_string();
    loop {
        tokio::select! {
            _ = stop.cancelled() => return counts,
            _ = kill.tick() => fleet.kill(rng.below(fleet.len() as u64) as usize),
            // Due: killed as soon as a call to it is in flight (looked at again shortly).
            _ = tokio::time::sleep_until(mcp_due) => {
                mcp_due = match mcp_server.kill_mid_call().await {
                    true => {
                        counts.mcp_kills += 1;
                        mcp_kill_at(&mut rng)
                    }
                    false => tokio::time::Instant::now() + mcp::KILL_POLL,
                };
            }
            _ = drop.tick() => {
                if host_drop.send(()).is_ok() {
                    counts.host_drops += 1;
                }
            }
            _ = hostile.tick() => {
                let n = counts.hostile_connections;
                // Alternately the provider endpoint and the session-host endpoint.
                let path = if n % 2 == 0 { "/" } else { "/session" };
                let hard_cap = n % HARD_CAP_EVERY == HARD_CAP_EVERY - 1;
                counts.hostile_connections += 1;
                let sent = tokio::time::timeout(
                    STEP_TIMEOUT,
                    hostile_connection(&address, path, hard_cap),
                )
                .await
                .unwrap_or(0);
                counts.hostile_frames += sent;
            }
            _ = abandon.tick() => {
                let kind = counts.abandoned % 3;
                counts.abandoned += 1;
                let _ = tokio::time::timeout(STEP_TIMEOUT, abandoned(&address, &hostport, kind)).await;
            }
        }
    }
}

/// Opens a WebSocket on `path` and sends garbage text, garbage binary and a frame above
/// the spec's message limit (and, with `hard_cap`, one above the hard frame cap), without
/// authenticating. Returns how many frames were written before the gateway cut it off.
async fn hostile_connection(address: &str, path: &str, hard_cap: bool) -> u64 {
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(format!("{address}{path}")).await else {
        return 0;
    };
    let mut frames = vec![
        Message::text("{\"type\":\"auth\",\"token\":"),
        Message::binary(vec![0xff, 0x00, 0xfe, 0x13, 0x37]),
        Message::text("x".repeat(MAX_MESSAGE_BYTES + 1)),
    ];
    if hard_cap {
        frames.push(Message::binary(vec![0u8; HARD_FRAME_CAP_BYTES + 1]));
    }
    let mut sent = 0;
    for f in frames {
        if ws.send(f).await.is_err() {
            break;
        }
        sent += 1;
    }
    // Read until the gateway closes it (it must: garbage, then over the pre-auth budget).
    while let Some(Ok(_)) = ws.next().await {}
    sent
}

/// Opens a connection and walks away from it: `0` right after the TCP handshake, `1` in
/// the middle of the HTTP upgrade request, `2` after the upgrade, before `auth`.
async fn abandoned(address: &str, hostport: &str, kind: u64) {
    match kind {
        0 => drop(TcpStream::connect(hostport).await),
        1 => {
            if let Ok(mut s) = TcpStream::connect(hostport).await {
                let _ = s
                    .write_all(
                        b"GET /session HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n",
                    )
                    .await;
            }
        }
        _ => drop(tokio_tungstenite::connect_async(format!("{address}/session")).await),
    }
}

/// xorshift64*: which provider to kill; no `rand` dependency for one number.
struct Rng(u64);

impl Rng {
    fn seeded() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        Self(nanos | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

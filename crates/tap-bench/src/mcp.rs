//! S7: sequential MCP `tools/call` over Streamable HTTP, in each MCP generation (one
//! kept-alive connection each, as MCP clients run it), against the same call through the
//! session-host WebSocket (S1b's path), interleaved in the same run.
//!
//! The target is judged on hyper's client against `HostClient`, out of process
//! (`s7_process.rs`: the `tap` binary as the gateway; docs/performance-log.md, run 19); the
//! in-process rows (the gateway in this process) stay for comparison with earlier runs. In
//! the same rounds, for information, the stateless call and the host invoke also run
//! through clients that work in the caller's task (`http1.rs`, `host_inline.rs`): neither
//! side then pays client-side task hand-offs, so that pair compares the gateway's two paths
//! alone (docs/performance-log.md, run 13). `TAP_BENCH_THREADS=1` prints each phase's
//! context switches per thread.

use crate::host_inline::HostInline;
use crate::http1::Http1;
use crate::scenarios::{call_via_host, Rig};
use crate::stats::{process_switches, Latencies, Sampler};
use crate::threads::PerThread;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

/// S7's latency series: MCP in each generation, and the host socket.
pub struct McpResults {
    pub legacy: Latencies,
    pub stateless: Latencies,
    pub host: Latencies,
    /// The stateless generation through `http1.rs` (in the caller's task).
    pub stateless_inline: Latencies,
    /// The host socket through `host_inline.rs` (in the caller's task).
    pub host_inline: Latencies,
    /// Out of process only: context switches per call of each other process counted (the
    /// `peers` [`phases`] was given, in that order), per phase in [`PHASES`] order.
    pub peers: [Vec<Option<f64>>; 5],
}

/// The phases of a round, in order.
pub const PHASES: [&str; 5] = [
    "initialize",
    "stateless",
    "host",
    "stateless-inline",
    "host-inline",
];

/// What the bench's clients send with `initialize` (over HTTP here, over stdio in S9).
pub fn initialize_params() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {},
           "clientInfo": {"name": "tap-bench", "version": "1"}})
}

/// The stateless generation's protocol version.
const STATELESS: &str = "2026-07-28";

/// How an [`McpHttp`] speaks HTTP/1.1.
enum Transport {
    /// hyper's client, its connection driven by a task of its own.
    Hyper(SendRequest<Full<Bytes>>),
    /// `http1.rs`, in the caller's task.
    Inline(Http1),
}

/// An MCP client of either generation on one HTTP/1.1 connection (S9 uses it too).
pub(crate) struct McpHttp {
    transport: Transport,
    authority: String,
    path: String,
    token: String,
    session: Option<String>,
    /// The 2026-07-28 generation: no `initialize`, the version on every request.
    stateless: bool,
    next_id: u64,
}

impl McpHttp {
    async fn connect(
        addr: std::net::SocketAddr,
        token: &str,
        session: &str,
        stateless: bool,
        inline: bool,
    ) -> Result<Self, String> {
        let path = format!("/mcp/{session}");
        Self::connect_at(addr, token, &path, stateless, inline).await
    }

    /// A client of the MCP endpoint at `path` on `addr` (the gateway's `/mcp/<session>`,
    /// or another server's), `initialize`d unless `stateless`.
    pub(crate) async fn connect_at(
        addr: std::net::SocketAddr,
        token: &str,
        path: &str,
        stateless: bool,
        inline: bool,
    ) -> Result<Self, String> {
        let transport = if inline {
            Transport::Inline(Http1::connect(addr).await?)
        } else {
            let tcp = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            tcp.set_nodelay(true).map_err(|e| e.to_string())?;
            let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
                .await
                .map_err(|e| format!("HTTP handshake: {e}"))?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    eprintln!("tap-bench: S7's HTTP connection failed: {e}");
                }
            });
            Transport::Hyper(send)
        };
        let mut client = Self {
            transport,
            authority: addr.to_string(),
            path: path.to_string(),
            token: token.to_string(),
            session: None,
            stateless,
            next_id: 0,
        };
        if stateless {
            return Ok(client);
        }
        client.request("initialize", initialize_params()).await?;
        client.notify("notifications/initialized").await?;
        Ok(client)
    }

    /// POSTs `body` (a JSON-RPC message); the status, the `Mcp-Session-Id` answered and
    /// the response body.
    async fn post(&mut self, body: Value) -> Result<(u16, Option<String>, Bytes), String> {
        // The stateless generation routes on headers that repeat the body's method and
        // name (SEP-2243).
        let method = body["method"].as_str().unwrap_or_default().to_string();
        let name = body["params"]["name"].as_str().map(str::to_string);
        let authorization = format!("Bearer {}", self.token);
        let mut headers = vec![
            ("host", self.authority.as_str()),
            ("authorization", authorization.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        if let Some(s) = &self.session {
            headers.push(("mcp-session-id", s));
        }
        if self.stateless {
            headers.push(("mcp-protocol-version", STATELESS));
            headers.push(("mcp-method", &method));
            if let Some(name) = &name {
                headers.push(("mcp-name", name));
            }
        }
        let body = body.to_string();
        match &mut self.transport {
            Transport::Inline(http) => {
                let res = http
                    .send("POST", &self.path, &headers, body.as_bytes())
                    .await?;
                let session = res.header("mcp-session-id").map(str::to_string);
                Ok((res.status, session, res.body))
            }
            Transport::Hyper(send) => {
                let mut req = Request::post(&self.path);
                for (name, value) in headers {
                    req = req.header(name, value);
                }
                let req = req
                    .body(Full::new(Bytes::from(body)))
                    .map_err(|e| e.to_string())?;
                // The connection takes the next request only once the previous exchange
                // is over.
                send.ready().await.map_err(|e| format!("connection: {e}"))?;
                let res = send.send_request(req).await.map_err(|e| e.to_string())?;
                let status = res.status().as_u16();
                let session = match res.headers().get("mcp-session-id") {
                    Some(s) => Some(s.to_str().map_err(|e| e.to_string())?.to_string()),
                    None => None,
                };
                let body = res.into_body().collect().await.map_err(|e| e.to_string())?;
                Ok((status, session, body.to_bytes()))
            }
        }
    }

    async fn notify(&mut self, method: &str) -> Result<(), String> {
        let (status, _, body) = self
            .post(json!({"jsonrpc": "2.0", "method": method}))
            .await?;
        if !(200..300).contains(&status) {
            let body = String::from_utf8_lossy(&body);
            return Err(format!("{method}: HTTP {status}: {body}"));
        }
        Ok(())
    }

    /// One request; the result of its response (an SSE stream carrying it, or JSON).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut params = params;
        if self.stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, session, body) = self
            .post(message)
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if !(200..300).contains(&status) {
            let body = String::from_utf8_lossy(&body);
            return Err(format!("{method}: HTTP {status}: {body}"));
        }
        if session.is_some() {
            self.session = session;
        }
        let text = std::str::from_utf8(&body).map_err(|e| e.to_string())?;
        let message = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(text.trim()))
            .find_map(|d| {
                serde_json::from_str::<Value>(d)
                    .ok()
                    .filter(|v| v["id"] == id)
            })
            .ok_or_else(|| format!("{method}: no response in {text:?}"))?;
        match message.get("result") {
            Some(r) => Ok(r.clone()),
            None => Err(format!("{method}: {}", message["error"])),
        }
    }

    async fn call(&mut self, tool: &str) -> Result<(), String> {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": {"n": 1}}))
            .await?;
        if r["isError"] == true || r["structuredContent"] != json!({"ok": true}) {
            return Err(format!("tools/call answered {r}"));
        }
        Ok(())
    }
}

/// One of S7's clients.
enum Client {
    Mcp(McpHttp),
    Host(std::sync::Arc<tap_client::HostClient>),
    HostInline(HostInline),
}

impl Client {
    async fn call(&mut self, session: &str) -> Result<(), String> {
        match self {
            Client::Mcp(c) => c.call("echo").await,
            Client::Host(h) => call_via_host(h, session, "echo").await,
            Client::HostInline(h) => h.call(session, "echo").await,
        }
    }
}

/// `n` MCP calls and `n` host calls of `echo` in `session`, after `warmup` of each,
/// alternating in `rounds` rounds, against the rig's in-process gateway.
pub async fn s7(
    rig: &Rig,
    session: &str,
    warmup: usize,
    n: usize,
    rounds: usize,
) -> Result<McpResults, String> {
    let gw = rig.gateway();
    let plan = Plan { warmup, n, rounds };
    phases(
        gw.address(),
        gw.host_token(),
        rig.host(),
        session,
        plan,
        &[],
    )
    .await
}

/// Diagnosis only: `TAP_BENCH_S7_PHASES=stateless-inline,host-inline` runs only those of
/// [`PHASES`] (to profile one path alone); the others report no samples.
fn wanted_phases() -> [bool; 5] {
    let only = std::env::var("TAP_BENCH_S7_PHASES").unwrap_or_default();
    let listed: Vec<&str> = only.split(',').map(str::trim).collect();
    PHASES.map(|p| only.is_empty() || listed.contains(&p))
}

/// How much [`phases`] runs: `warmup` calls of each phase, then `n` timed ones in
/// `rounds` rounds.
#[derive(Clone, Copy)]
pub struct Plan {
    pub warmup: usize,
    pub n: usize,
    pub rounds: usize,
}

/// S7's rounds against the gateway at `addr`, `host` being a session host of it and
/// `session` a session with the `echo` tool bound; `peers` are other processes (pids)
/// whose context switches are counted per phase.
pub async fn phases(
    addr: std::net::SocketAddr,
    token: &str,
    host: std::sync::Arc<tap_client::HostClient>,
    session: &str,
    plan: Plan,
    peers: &[u32],
) -> Result<McpResults, String> {
    let Plan { warmup, n, rounds } = plan;
    // In this order, round after round: the two hyper/`HostClient` pairs the target is
    // judged on, then the same calls with clients that run in the caller's task.
    let mut phases = [
        Client::Mcp(McpHttp::connect(addr, token, session, false, false).await?),
        Client::Mcp(McpHttp::connect(addr, token, session, true, false).await?),
        Client::Host(host),
        Client::Mcp(McpHttp::connect(addr, token, session, true, true).await?),
        Client::HostInline(HostInline::connect(addr, token).await?),
    ];
    let wanted = wanted_phases();
    for _ in 0..warmup {
        for (c, _) in phases.iter_mut().zip(wanted).filter(|(_, w)| *w) {
            c.call(session).await?;
        }
    }
    let mut samplers: Vec<(Sampler, PerThread)> = phases
        .iter()
        .map(|_| (Sampler::new(n), PerThread::default()))
        .collect();
    // Switches of each peer over each phase's rounds (`None` once a count failed).
    let mut peer_totals = vec![vec![Some(0u64); peers.len()]; phases.len()];
    let per_round = n.div_ceil(rounds.max(1));
    let mut left = n;
    while left > 0 {
        let k = per_round.min(left);
        left -= k;
        let rows = phases.iter_mut().zip(samplers.iter_mut());
        let rows = rows.zip(peer_totals.iter_mut()).zip(wanted);
        for (((c, (sampler, threads)), totals), _) in rows.filter(|(_, w)| *w) {
            let before: Vec<Option<u64>> = peers.iter().map(|&p| process_switches(p)).collect();
            sampler.begin();
            threads.begin();
            for _ in 0..k {
                sampler.time(c.call(session)).await?;
            }
            threads.end();
            sampler.end();
            for ((total, &pid), before) in totals.iter_mut().zip(peers).zip(before) {
                *total = match (*total, before, process_switches(pid)) {
                    (Some(t), Some(b), Some(a)) => Some(t + a.saturating_sub(b)),
                    _ => None,
                };
            }
        }
    }
    let per_call = |t: &Option<u64>| t.map(|t| t as f64 / n.max(1) as f64);
    let mut peer_rates = peer_totals
        .iter()
        .map(|totals| totals.iter().map(per_call).collect::<Vec<_>>());
    let peers: [Vec<Option<f64>>; 5] =
        std::array::from_fn(|_| peer_rates.next().unwrap_or_default());
    let mut results = samplers
        .into_iter()
        .zip(PHASES)
        .map(|((sampler, threads), name)| {
            threads.print(name, n);
            sampler.finish()
        });
    let mut next = || results.next().expect("one result per phase");
    Ok(McpResults {
        legacy: next(),
        stateless: next(),
        host: next(),
        stateless_inline: next(),
        host_inline: next(),
        peers,
    })
}

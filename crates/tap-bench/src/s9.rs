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
use crate::mcp::McpHttp;
use crate::mcp_echo;
use crate::options::{Counts, Options};
use crate::repeat::{rate_of, repeated_per_rig, Repeated};
use crate::report::{Report, Row};
use crate::rows::spread;
use crate::rss;
use crate::running::{bounded, progress};
use crate::stats::{micros, per_sec, process_switches, ratio, secs, Latencies, Sampler};
use crate::tempdir::TempDir;
use crate::wire::PATIENCE;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const S9: &str = "S9 MCP stdio server";
/// Calls at once in the throughput measurement.
pub const IN_FLIGHT: usize = 32;
/// The server's name in the gateway's `mcp.json`: its tool is `bench__echo` in sessions.
const SERVER: &str = "bench";
/// What every call sends and must get back.
const TEXT: &str = "tap-bench S9: the same text back";

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

/// One path's results.
struct PathResult {
    sequential: Latencies,
    loaded: Repeated<Latencies>,
    /// Sequential: context switches per call of the path's other processes (the gateway
    /// or mcp-proxy, then the server), `None` where a count failed.
    peers: Vec<Option<f64>>,
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
    let mut sides = vec![direct, gateway.side.clone()];
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
/// `i`'s processes whose context switches are counted.
async fn run_sides(
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
    let loaded = repeated_per_rig(sides.len(), n.reps, n.limit, rate_of, |s, _| {
        let side = &sides[s];
        async move {
            let side = side.fresh(IN_FLIGHT).await?;
            run_workers(calls, IN_FLIGHT, move |w, _| {
                let side = side.clone();
                async move { side.call(w).await }
            })
            .await
        }
    })
    .await?;
    let per_call = |t: Option<u64>| t.map(|t| t as f64 / seq.max(1) as f64);
    Ok(samplers
        .into_iter()
        .zip(loaded)
        .zip(totals)
        .map(|((s, loaded), totals)| PathResult {
            sequential: s.finish(),
            loaded,
            peers: totals.into_iter().map(per_call).collect(),
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
    let gateway = format!("{S9} (through the gateway)");
    path_rows(&gateway, &r.gateway, d, true, out);
    out.rows
        .push(switches(&gateway, "bench / gateway / server", &r.gateway));
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
fn switches(label: &str, who: &str, l: &PathResult) -> Row {
    let show = |s: Option<f64>| s.map_or("?".to_string(), |s| format!("{s:.1}"));
    let mut text = show(l.sequential.switches_per_op());
    for p in &l.peers {
        text.push_str(" / ");
        text.push_str(&show(*p));
    }
    Row::info(label, &format!("ctx switches per call ({who})"), text)
}

/// A path's rows against the direct one; `judged`: the gateway's targets.
fn path_rows(label: &str, l: &PathResult, d: &PathResult, judged: bool, out: &mut Report) {
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

/// Whether a `tools/call` result is the echo of [`TEXT`].
fn check_echo(result: &Value) -> Result<(), String> {
    if result["isError"] == true || result["content"][0]["text"] != TEXT {
        return Err(format!("tools/call answered {result}"));
    }
    Ok(())
}

/// One path to the server, shared by the tasks that call through it.
#[derive(Clone)]
enum Side {
    Direct(Arc<StdioMcp>),
    /// HTTP clients (one connection each; worker `w` uses client `w`) of an endpoint.
    Http(Arc<Vec<tokio::sync::Mutex<McpHttp>>>, Arc<Endpoint>),
}

/// An MCP endpoint over HTTP and the echo tool's name there.
struct Endpoint {
    addr: SocketAddr,
    token: String,
    path: String,
    tool: &'static str,
}

impl Side {
    /// One `tools/call` of the echo, from worker `w`.
    async fn call(&self, w: usize) -> Result<(), String> {
        match self {
            Side::Direct(c) => c.call_echo().await,
            Side::Http(clients, endpoint) => {
                let mut c = clients[w % clients.len()].lock().await;
                let r = c
                    .request(
                        "tools/call",
                        json!({"name": endpoint.tool, "arguments": {"text": TEXT}}),
                    )
                    .await?;
                check_echo(&r)
            }
        }
    }

    /// `clients` clients of `endpoint`, each `initialize`d.
    async fn http(endpoint: Arc<Endpoint>, clients: usize) -> Result<Self, String> {
        let mut list = Vec::with_capacity(clients);
        for _ in 0..clients {
            let e = &endpoint;
            let c = McpHttp::connect_at(e.addr, &e.token, &e.path, false, false).await?;
            list.push(tokio::sync::Mutex::new(c));
        }
        Ok(Side::Http(Arc::new(list), endpoint))
    }

    /// The same path with `clients` new connections (a server may close a kept-alive
    /// connection left idle, as uvicorn does after 5 s): made before each timed part, not
    /// in it.
    async fn fresh(&self, clients: usize) -> Result<Self, String> {
        match self {
            Side::Direct(_) => Ok(self.clone()),
            Side::Http(_, endpoint) => Side::http(endpoint.clone(), clients).await,
        }
    }
}

/// Waits until `tools/list` at `addr` + `path` offers `tool` (the server is ready).
async fn until_listed(
    addr: SocketAddr,
    token: &str,
    path: &str,
    tool: &str,
    within: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    loop {
        let listed = async {
            let mut c = McpHttp::connect_at(addr, token, path, false, false).await?;
            c.request("tools/list", json!({})).await
        }
        .await;
        let last = match listed {
            Ok(l)
                if l["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|t| t["name"] == tool) =>
            {
                return Ok(())
            }
            Ok(l) => format!("tools/list: {l}"),
            Err(e) => e,
        };
        if Instant::now() > deadline {
            return Err(format!(
                "{tool} not offered within {} s ({last})",
                within.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `tap gateway` with the echo server in its `$TAP_HOME/mcp.json`, and a session whose MCP
/// endpoint offers `bench__echo`.
struct GatewaySide {
    side: Side,
    child: Child,
    _host: tap_client::HostClient,
    log_path: PathBuf,
    _dir: TempDir,
}

/// `$TAP_HOME/mcp.json` with the echo server (`exe mcp-echo-server`) as each of `names`.
pub fn write_mcp_json(home: &Path, exe: &Path, names: &[&str]) -> Result<(), String> {
    let servers: serde_json::Map<String, Value> = names
        .iter()
        .map(|name| {
            let entry = json!({"command": exe, "args": [ECHO_MODE]});
            (name.to_string(), entry)
        })
        .collect();
    std::fs::create_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    let path = home.join("mcp.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The argument that makes this binary the echo server.
pub const ECHO_MODE: &str = "mcp-echo-server";

impl GatewaySide {
    async fn start(tap: &Path, exe: &Path) -> Result<Self, String> {
        let dir = TempDir::new("s9")?;
        let home = dir.path().join("home");
        let log_path = dir.path().join("gateway.log");
        write_mcp_json(&home, exe, &[SERVER])?;
        let mut child = rss::start_gateway(tap, dir.path(), &home, &log_path)?;
        let started = async {
            let pid = child.id().ok_or("gateway exited at once")?;
            let address = rss::wait_for_gateway(&mut child, &home, pid).await?;
            let token = rss::read_token(&home.join("host-token"))?;
            let addr: SocketAddr = address
                .trim_start_matches("ws://")
                .parse()
                .map_err(|e| format!("gateway address {address}: {e}"))?;
            let host = rss::bench_host(&address, &token).await?;
            let session = crate::scenarios::register(&host, "s9").await?;
            let path = format!("/mcp/{session}");
            let tool: &'static str = "bench__echo";
            until_listed(addr, &token, &path, tool, Duration::from_secs(30)).await?;
            let endpoint = Endpoint {
                addr,
                token,
                path,
                tool,
            };
            let side = Side::http(Arc::new(endpoint), 1).await?;
            Ok::<_, String>((host, side))
        }
        .await;
        let (host, side) = started.map_err(|e| rss::with_log(e, &log_path))?;
        Ok(Self {
            side,
            child,
            _host: host,
            log_path,
            _dir: dir,
        })
    }

    /// Stops the gateway; an error in `result` gets its log.
    async fn stop<T>(mut self, result: Result<T, String>) -> Result<T, String> {
        drop(self.side);
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        result.map_err(|e| rss::with_log(e, &self.log_path))
    }
}

/// mcp-proxy serving the echo server over Streamable HTTP on a port of its own.
struct ProxySide {
    side: Side,
    child: Child,
    _dir: TempDir,
}

impl ProxySide {
    async fn start(proxy: &Path, exe: &Path) -> Result<Self, String> {
        let dir = TempDir::new("s9-proxy")?;
        let log_path = dir.path().join("mcp-proxy.log");
        let log = std::fs::File::create(&log_path).map_err(|e| format!("log file: {e}"))?;
        // A free port: bound, read and let go (mcp-proxy does not say which it picked).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("a free port: {e}"))?
            .port();
        let mut child = Command::new(proxy)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // Its default (INFO) logs a line per request; WARNING keeps logging out of the
            // peer's numbers, as the gateway runs with TAP_LOG=warn.
            .args(["--log-level", "WARNING"])
            .arg(exe)
            .arg(ECHO_MODE)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", proxy.display()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let path = "/mcp/";
        let started = async {
            until_listed(addr, "", path, mcp_echo::TOOL, Duration::from_secs(30)).await?;
            let endpoint = Endpoint {
                addr,
                token: String::new(),
                path: path.to_string(),
                tool: mcp_echo::TOOL,
            };
            Side::http(Arc::new(endpoint), 1).await
        }
        .await;
        match started {
            Ok(side) => Ok(Self {
                side,
                child,
                _dir: dir,
            }),
            Err(e) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                Err(rss::with_log(e, &log_path))
            }
        }
    }

    async fn stop(mut self) {
        drop(self.side);
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A minimal MCP stdio client: requests written as lines on the server's stdin (one
/// writer at a time), answers read by a task of their own and handed to their caller by
/// id, so any number of calls can be in flight on the one pipe.
pub struct StdioMcp {
    stdin: tokio::sync::Mutex<ChildStdin>,
    waiters: Waiters,
    next_id: AtomicU64,
    reader: JoinHandle<()>,
    child: Child,
}

impl StdioMcp {
    /// `exe mcp-echo-server`, initialized.
    pub async fn spawn(exe: &Path) -> Result<Self, String> {
        let mut child = Command::new(exe)
            .arg(ECHO_MODE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the echo server: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let waiters: Waiters = Arc::default();
        let routes = waiters.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::with_capacity(1 << 16, stdout);
            let mut line = Vec::with_capacity(1024);
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let waiter = message["id"]
                    .as_u64()
                    .and_then(|id| routes.lock().expect("not poisoned").remove(&id));
                if let Some(w) = waiter {
                    let _ = w.send(message);
                }
            }
            // The server is gone: every waiting call ends with an error.
            routes.lock().expect("not poisoned").clear();
        });
        let client = Self {
            stdin: tokio::sync::Mutex::new(stdin),
            waiters,
            next_id: AtomicU64::new(1),
            reader,
            child,
        };
        client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "tap-bench", "version": "1"}}),
            )
            .await?;
        client
            .write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(client)
    }

    async fn write(&self, message: &Value) -> Result<(), String> {
        let mut line = message.to_string();
        line.push('\n');
        let mut stdin = self.stdin.lock().await;
        stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("the server's stdin: {e}"))
    }

    /// One request; its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().expect("not poisoned").insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.write(&message).await {
            self.waiters.lock().expect("not poisoned").remove(&id);
            return Err(e);
        }
        let answer = match tokio::time::timeout(PATIENCE, rx).await {
            Ok(Ok(a)) => a,
            Ok(Err(_)) => return Err(format!("{method}: the server closed its stdout")),
            Err(_) => {
                self.waiters.lock().expect("not poisoned").remove(&id);
                return Err(format!("{method}: no answer within {PATIENCE:?}"));
            }
        };
        match answer.get("result") {
            Some(r) => Ok(r.clone()),
            None => Err(format!("{method}: {}", answer["error"])),
        }
    }

    async fn call_echo(&self) -> Result<(), String> {
        let r = self
            .request(
                "tools/call",
                json!({"name": mcp_echo::TOOL, "arguments": {"text": TEXT}}),
            )
            .await?;
        check_echo(&r)
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

//! S9's three paths to the echo server (`s9.rs` says what S9 measures): the server called
//! directly over its stdio ([`StdioMcp`]), through a `tap gateway` child process
//! ([`GatewaySide`]) and through PyPI's `mcp-proxy` ([`ProxySide`]), each behind [`Side`] so
//! that the measurements run the same code on each.

use crate::mcp::McpHttp;
use crate::mcp_echo;
use crate::rss;
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

/// The server's name in the gateway's `mcp.json`: its tool is `bench__echo` in sessions.
const SERVER: &str = "bench";
/// What every call sends and must get back.
const TEXT: &str = "tap-bench S9: the same text back";

/// Whether a `tools/call` result is the echo of [`TEXT`].
pub(super) fn check_echo(result: &Value) -> Result<(), String> {
    if result["isError"] == true || result["content"][0]["text"] != TEXT {
        return Err(format!("tools/call answered {result}"));
    }
    Ok(())
}

/// One path to the server, shared by the tasks that call through it.
#[derive(Clone)]
pub(super) enum Side {
    Direct(Arc<StdioMcp>),
    /// HTTP clients (one connection each; worker `w` uses client `w`) of an endpoint.
    Http(Arc<Vec<tokio::sync::Mutex<McpHttp>>>, Arc<Endpoint>),
}

/// An MCP endpoint over HTTP and the echo tool's name there.
pub(super) struct Endpoint {
    addr: SocketAddr,
    token: String,
    path: String,
    tool: &'static str,
}

impl Endpoint {
    /// `tool` at `path` on `addr`, called with `token` as the bearer.
    pub(super) fn new(addr: SocketAddr, token: &str, path: &str, tool: &'static str) -> Self {
        Self {
            addr,
            token: token.to_string(),
            path: path.to_string(),
            tool,
        }
    }
}

impl Side {
    /// One `tools/call` of the echo, from worker `w`.
    pub(super) async fn call(&self, w: usize) -> Result<(), String> {
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
    pub(super) async fn http(endpoint: Arc<Endpoint>, clients: usize) -> Result<Self, String> {
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
    pub(super) async fn fresh(&self, clients: usize) -> Result<Self, String> {
        match self {
            Side::Direct(_) => Ok(self.clone()),
            Side::Http(_, endpoint) => Side::http(endpoint.clone(), clients).await,
        }
    }
}

/// Waits until `tools/list` at `addr` + `path` offers `tool` (the server is ready).
pub(super) async fn until_listed(
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

/// `tap gateway` with MCP servers in its `$TAP_HOME/mcp.json` (S9: the echo server over
/// stdio; S10: over HTTP), and a session whose MCP endpoint offers their tools.
pub(super) struct GatewaySide {
    /// One path per tool asked for.
    pub(super) sides: Vec<Side>,
    pub(super) child: Child,
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
    /// S9's gateway: the stdio echo server as `bench`.
    pub(super) async fn start(tap: &Path, exe: &Path) -> Result<Self, String> {
        let prepare = |home: &Path| write_mcp_json(home, exe, &[SERVER]);
        Self::start_with(tap, "s9", &[], prepare, &["bench__echo"]).await
    }

    /// `tap gateway` with `env` added to its environment and its `$TAP_HOME` made ready by
    /// `prepare`, once a session offers every one of `tools`; [`GatewaySide::sides`] holds
    /// one path per tool, in that order.
    pub(super) async fn start_with(
        tap: &Path,
        label: &str,
        env: &[(&str, &str)],
        prepare: impl FnOnce(&Path) -> Result<(), String>,
        tools: &[&'static str],
    ) -> Result<Self, String> {
        let dir = TempDir::new(label)?;
        let home = dir.path().join("home");
        let log_path = dir.path().join("gateway.log");
        std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        prepare(&home)?;
        let mut child = rss::start_gateway_with(tap, dir.path(), &home, &log_path, env)?;
        let started = async {
            let pid = child.id().ok_or("gateway exited at once")?;
            let address = rss::wait_for_gateway(&mut child, &home, pid).await?;
            let token = rss::read_token(&home.join("host-token"))?;
            let addr: SocketAddr = address
                .trim_start_matches("ws://")
                .parse()
                .map_err(|e| format!("gateway address {address}: {e}"))?;
            let host = rss::bench_host(&address, &token).await?;
            let session = crate::scenarios::register(&host, label).await?;
            let path = format!("/mcp/{session}");
            let mut sides = Vec::with_capacity(tools.len());
            for &tool in tools {
                until_listed(addr, &token, &path, tool, Duration::from_secs(30)).await?;
                let endpoint = Endpoint::new(addr, &token, &path, tool);
                sides.push(Side::http(Arc::new(endpoint), 1).await?);
            }
            Ok::<_, String>((host, sides))
        }
        .await;
        let (host, sides) = started.map_err(|e| rss::with_log(e, &log_path))?;
        Ok(Self {
            sides,
            child,
            _host: host,
            log_path,
            _dir: dir,
        })
    }

    /// Stops the gateway; an error in `result` gets its log.
    pub(super) async fn stop<T>(mut self, result: Result<T, String>) -> Result<T, String> {
        drop(self.sides);
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        result.map_err(|e| rss::with_log(e, &self.log_path))
    }
}

/// mcp-proxy serving the echo server over Streamable HTTP on a port of its own.
pub(super) struct ProxySide {
    pub(super) side: Side,
    pub(super) child: Child,
    _dir: TempDir,
}

impl ProxySide {
    pub(super) async fn start(proxy: &Path, exe: &Path) -> Result<Self, String> {
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
            let endpoint = Endpoint::new(addr, "", path, mcp_echo::TOOL);
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

    pub(super) async fn stop(mut self) {
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
    pub(super) child: Child,
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
            .request("initialize", crate::mcp::initialize_params())
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

//! S5: the gateway's own memory. The `tap` binary runs as a child process so its RSS is
//! not mixed with the bench's; the bench reads `/proc/<pid>/status` at each stage.

use crate::bare::run_workers;
use crate::provider;
use crate::tempdir::TempDir;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tap_client::HostClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// What S5 found, in KiB.
pub struct RssReport {
    /// Started, `/healthz` answered, nothing connected.
    pub idle: u64,
    /// One host, one session, the first half of the providers bound, before any call.
    pub half_bound: u64,
    /// One host, one session, 50 providers bound with 10 tools each, before any call: what
    /// binding costs, without the first calls' ledger, trace and buffer growth.
    pub bound_uncalled: u64,
    /// The same with every tool called once.
    pub bound: u64,
    /// The same after a burst of calls through the host socket.
    pub loaded: u64,
    /// `VmHWM`: the peak over the whole run.
    pub peak: u64,
    pub load_calls: usize,
}

impl RssReport {
    /// What one more bound provider costs, in KiB: the second half's binds over their
    /// count. The first half pays what any first bind does (code paged in from the binary,
    /// the allocator's first pages, the session's tool map), which is not per provider.
    pub fn per_provider(&self) -> u64 {
        self.bound_uncalled.saturating_sub(self.half_bound) / (PROVIDERS - PROVIDERS / 2) as u64
    }
}

pub const PROVIDERS: usize = 50;
pub const TOOLS_EACH: usize = 10;

/// `--tap PATH`, else `tap` next to this executable.
pub fn locate_tap(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--tap {}: no such file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let tap = exe
        .parent()
        .map(|d| d.join("tap"))
        .ok_or("current_exe has no directory")?;
    if tap.is_file() {
        Ok(tap)
    } else {
        Err(format!(
            "{} not found: run `cargo build --release -p tap-cli` first (same CARGO_TARGET_DIR), or pass --tap PATH",
            tap.display()
        ))
    }
}

pub async fn measure(tap: &Path, load_calls: usize) -> Result<RssReport, String> {
    let dir = TempDir::new("proc")?;
    let home = dir.path().join("home");
    let log_path = dir.path().join("gateway.log");
    let mut child = start_gateway(tap, dir.path(), &home, &log_path)?;
    let result = stages(&mut child, &home, load_calls).await;
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    result.map_err(|e| with_log(e, &log_path))
}

/// `e`, followed by the gateway's log when it wrote one.
pub fn with_log(e: String, log_path: &Path) -> String {
    let log = std::fs::read_to_string(log_path).unwrap_or_default();
    if log.trim().is_empty() {
        e
    } else {
        format!("{e}\ngateway log:\n{}", log.trim_end())
    }
}

/// `tap gateway` on `127.0.0.1:0` as a child with `TAP_HOME` = `home` (and `COPILOT_HOME`
/// under `dir`), warnings and errors to `log`; killed if dropped.
pub fn start_gateway(tap: &Path, dir: &Path, home: &Path, log: &Path) -> Result<Child, String> {
    start_gateway_with(tap, dir, home, log, &[])
}

/// [`start_gateway`] with `env` added to the gateway's environment.
pub fn start_gateway_with(
    tap: &Path,
    dir: &Path,
    home: &Path,
    log: &Path,
    env: &[(&str, &str)],
) -> Result<Child, String> {
    let log = std::fs::File::create(log).map_err(|e| format!("log file: {e}"))?;
    Command::new(tap)
        .args(["gateway", "--listen", "127.0.0.1:0"])
        .envs(env.iter().copied())
        .env("TAP_HOME", home)
        .env("COPILOT_HOME", dir.join("copilot"))
        .env("TAP_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", tap.display()))
}

async fn stages(child: &mut Child, home: &Path, load_calls: usize) -> Result<RssReport, String> {
    let pid = child.id().ok_or("gateway exited at once")?;
    let address = wait_for_gateway(child, home, pid).await?;
    let provider_token = read_token(&home.join("provider-token"))?;
    let host_token = read_token(&home.join("host-token"))?;
    healthz(&address).await?;
    let idle = vm_kib(pid, "VmRSS")?;

    let host = bench_host(&address, &host_token).await?;
    let session = crate::scenarios::register(&host, "rss").await?;
    let url = format!("{address}/");
    let mut tools = Vec::new();
    let mut responders = Vec::new();
    let mut half_bound = 0;
    for i in 0..PROVIDERS {
        let names: Vec<String> = (0..TOOLS_EACH).map(|j| format!("p{i}_t{j}")).collect();
        let ws = provider::bind(&url, &provider_token, &format!("p{i}"), &session, &names).await?;
        responders.push(tokio::spawn(provider::respond(ws)));
        tools.extend(names);
        if i + 1 == PROVIDERS / 2 {
            half_bound = vm_kib(pid, "VmRSS")?;
        }
    }
    let bound_uncalled = vm_kib(pid, "VmRSS")?;
    for t in &tools {
        invoke(&host, &session, t).await?;
    }
    let bound = vm_kib(pid, "VmRSS")?;

    let (host, session, tools) = (Arc::new(host), Arc::new(session), Arc::new(tools));
    run_workers(load_calls, 64, move |w, k| {
        let (host, session, tools) = (host.clone(), session.clone(), tools.clone());
        async move { invoke(&host, &session, &tools[(w * 7 + k) % tools.len()]).await }
    })
    .await?;
    let loaded = vm_kib(pid, "VmRSS")?;
    // The kernel updates the high-water mark lazily; it can trail the current RSS.
    let peak = vm_kib(pid, "VmHWM")?.max(loaded);
    for r in responders {
        r.abort();
    }
    Ok(RssReport {
        idle,
        half_bound,
        bound_uncalled,
        bound,
        loaded,
        peak,
        load_calls,
    })
}

/// What idle MCP servers cost the gateway (S5), in KiB of the gateway's own RSS: the
/// servers' processes are not counted.
pub struct McpRss {
    /// The gateway idle, with the bench's control connection, before any server.
    pub before: u64,
    /// With one stdio server ready.
    pub one: u64,
    /// With [`MCP_SERVERS`] ready.
    pub all: u64,
    /// `RssAnon` at the same three points.
    pub anon: [u64; 3],
}

/// Servers in the second step of [`measure_mcp`].
pub const MCP_SERVERS: usize = 6;

impl McpRss {
    /// The first server: what any first server costs (the hub's code paged in, its first
    /// allocations) with the server's own.
    pub fn first(&self) -> i64 {
        self.one as i64 - self.before as i64
    }

    /// One more server, over the last `MCP_SERVERS - 1`.
    pub fn per_server(&self) -> i64 {
        (self.all as i64 - self.one as i64) / (MCP_SERVERS - 1) as i64
    }

    /// The same two in `RssAnon` (the heap and stacks, without the binary's pages).
    pub fn anon_first(&self) -> i64 {
        self.anon[1] as i64 - self.anon[0] as i64
    }

    pub fn anon_per_server(&self) -> i64 {
        (self.anon[2] as i64 - self.anon[1] as i64) / (MCP_SERVERS - 1) as i64
    }
}

/// A fresh `tap gateway`, idle; then `$TAP_HOME/mcp.json` with one stdio echo server
/// (`tap-bench mcp-echo-server`), applied with `mcpServers.reload` and waited for until it
/// is `ready`; then with [`MCP_SERVERS`]. The gateway's RSS at each step, after it settles.
pub async fn measure_mcp(tap: &Path) -> Result<McpRss, String> {
    let dir = TempDir::new("proc-mcp")?;
    let home = dir.path().join("home");
    let log_path = dir.path().join("gateway.log");
    let mut child = start_gateway(tap, dir.path(), &home, &log_path)?;
    let result = mcp_stages(&mut child, &home).await;
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    result.map_err(|e| with_log(e, &log_path))
}

async fn mcp_stages(child: &mut Child, home: &Path) -> Result<McpRss, String> {
    use tap_protocol::control::{ControlCall, Empty};
    use tap_protocol::mcp_servers::McpServerState;
    let pid = child.id().ok_or("gateway exited at once")?;
    let address = wait_for_gateway(child, home, pid).await?;
    let token = read_token(&home.join("control-token"))?;
    healthz(&address).await?;
    let (control, _) = tap_client::ControlClient::connect(&format!("{address}/control"), &token)
        .await
        .map_err(|e| format!("control connect: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let rss =
        || -> Result<(u64, u64), String> { Ok((vm_kib(pid, "VmRSS")?, vm_kib(pid, "RssAnon")?)) };
    let settle = || tokio::time::sleep(Duration::from_millis(300));
    settle().await;
    let before = rss()?;
    let mut steps = Vec::new();
    for count in [1, MCP_SERVERS] {
        let names: Vec<String> = (0..count).map(|i| format!("idle{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        crate::s9::write_mcp_json(home, &exe, &names)?;
        mcp_servers(&control, ControlCall::McpServersReload(Empty {})).await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let list = mcp_servers(&control, ControlCall::McpServersList(Empty {})).await?;
            let ready = list
                .servers
                .iter()
                .filter(|s| s.state == McpServerState::Ready)
                .count();
            if ready == count {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{ready} of {count} MCP servers ready after 30 s: {:?}",
                    list.servers
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        settle().await;
        steps.push(rss()?);
    }
    Ok(McpRss {
        before: before.0,
        one: steps[0].0,
        all: steps[1].0,
        anon: [before.1, steps[0].1, steps[1].1],
    })
}

/// `mcpServers.list` or `mcpServers.reload`.
async fn mcp_servers(
    control: &tap_client::ControlClient,
    call: tap_protocol::control::ControlCall,
) -> Result<tap_protocol::mcp_servers::McpServersList, String> {
    control
        .call(call)
        .await
        .map_err(|e| format!("mcpServers: {e}"))
}

async fn invoke(host: &HostClient, session: &str, tool: &str) -> Result<(), String> {
    let r = host
        .invoke(session, tool, json!({}))
        .await
        .map_err(|e| format!("tool.invoke {tool}: {e}"))?;
    if r.data != Some(json!({"ok": true})) {
        return Err(format!("tool.invoke {tool} answered {r:?}"));
    }
    Ok(())
}

/// Polls `gateway.json` (written once the gateway listens) until it names our child.
pub async fn wait_for_gateway(child: &mut Child, home: &Path, pid: u32) -> Result<String, String> {
    let path = home.join("gateway.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Err(format!("gateway exited early: {status}"));
        }
        let state = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok());
        if let Some(state) = state.filter(|s| s["pid"] == pid) {
            return state["address"]
                .as_str()
                .map(|a| a.trim_end_matches('/').to_string())
                .ok_or_else(|| format!("{} has no address: {state}", path.display()));
        }
        if Instant::now() > deadline {
            return Err(format!("{} did not appear within 10 s", path.display()));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The bench's session host on the gateway at `address` (a `ws://` address).
pub async fn bench_host(address: &str, host_token: &str) -> Result<HostClient, String> {
    HostClient::connect(&format!("{address}/session"), host_token, "tap-bench", None)
        .await
        .map_err(|e| format!("host connect: {e}"))
}

pub fn read_token(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|t| t.trim().to_string())
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

async fn healthz(address: &str) -> Result<(), String> {
    let hostport = address.trim_start_matches("ws://");
    let probe = async {
        let mut s = tokio::net::TcpStream::connect(hostport).await?;
        s.write_all(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .await?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&buf).into_owned())
    };
    let body = tokio::time::timeout(Duration::from_secs(5), probe)
        .await
        .map_err(|_| "healthz timed out".to_string())?
        .map_err(|e| format!("healthz: {e}"))?;
    if body.contains("\"tap-gateway\"") {
        Ok(())
    } else {
        Err(format!("unexpected /healthz answer: {body}"))
    }
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`).
pub fn vm_kib(pid: u32, field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    parse_vm(&status, field).ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}

fn parse_vm(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_status() {
        let s = "Name:\ttap\nVmHWM:\t   10240 kB\nVmRSS:\t    8192 kB\n";
        assert_eq!(parse_vm(s, "VmRSS"), Some(8192));
        assert_eq!(parse_vm(s, "VmHWM"), Some(10240));
        assert_eq!(parse_vm(s, "VmSwap"), None);
        assert!(vm_kib(std::process::id(), "VmRSS").unwrap() > 0);
    }
}

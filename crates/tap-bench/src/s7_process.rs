//! S7 out of process: the same rounds as S7 (`mcp.rs`: both MCP generations over HTTP and
//! the session-host WebSocket, hyper / `HostClient` and the in-task pair, interleaved round
//! by round) against the real `tap gateway` binary as a child process, as users run it.
//!
//! In-process S7 runs the gateway, the bench's clients and the provider on one tokio
//! runtime, so the clients' wake-ups and the gateway's compete for the same two workers and
//! cannot be told apart (docs/performance-log.md, run 18). Here each side has its own
//! process:
//!
//! - the gateway: `tap gateway --listen 127.0.0.1:0`, started by `rss::start_gateway` (its
//!   own `TAP_HOME` in a temp dir, so the ledger is on, the product's default);
//! - the provider: this binary again, `tap-bench s7-provider`, the bench provider
//!   (`provider.rs`) on a current-thread runtime, binding tool `echo` into the session. Both
//!   paths reach the same provider through the same gateway → provider hop, so it is the
//!   same for both; a process of its own keeps its work off the clients' runtime;
//! - the bench process holds only the clients (and the session host that registered the
//!   session, which is also the `HostClient` of the host rows).
//!
//! Besides the bench's own context switches per call, each phase counts the gateway's and
//! the provider's (`/proc/<pid>/task/*/status`), so each side's share is seen apart.

use crate::mcp::{self, McpResults, Plan};
use crate::report::{Report, Row};
use crate::rss;
use crate::running::{bounded, progress};
use crate::stats::{micros, per_sec, ratio, secs, Latencies};
use crate::tempdir::TempDir;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const S7P: &str = "S7 out of process";
/// What the provider child prints on stdout once its tool is bound.
const BOUND: &str = "bound";

/// S7's rows with the gateway and the provider as processes of their own.
pub async fn rows(tap: Option<&Path>, n: &crate::options::Counts, out: &mut Report) {
    let Some(tap) = out.tap_for(S7P, tap) else {
        return;
    };
    progress(&format!("{S7P} (tap gateway, provider process)"));
    let plan = Plan {
        warmup: n.warmup,
        n: n.sequential / 4,
        rounds: n.rounds,
    };
    match bounded(n.limit, measure(&tap, plan)).await {
        Ok(r) => push_rows(&r, out),
        Err(e) => out.fail(S7P, e),
    }
}

fn push_rows(r: &McpResults, out: &mut Report) {
    let h = &r.host;
    for (generation, l, phase) in [
        ("initialize", &r.legacy, 0),
        ("2026-07-28", &r.stateless, 1),
    ] {
        let label = format!("{S7P} ({generation})");
        let r50 = ratio(secs(l.p50()), secs(h.p50()));
        // 1.6x, not 1.5x (issue 35): 1.5x was met only with a patched hyper (1.55x -> 1.49x,
        // runs 19-20), and carrying a fork of the HTTP stack would turn every hyper security
        // release into a manual merge. The fix is to be offered upstream instead
        // (docs/performance-log.md, "The hyper fix to offer upstream").
        out.rows.extend([
            Row::info(&label, "p50", micros(l.p50()))
                .vs(format!("host {}", micros(h.p50())), r50)
                .target("<= 1.6x the host socket", r50 <= 1.6),
            Row::info(&label, "p99", micros(l.p99())).vs(
                format!("host {}", micros(h.p99())),
                ratio(secs(l.p99()), secs(h.p99())),
            ),
            Row::info(&label, "calls", per_sec(l.rate()))
                .vs(per_sec(h.rate()), ratio(l.rate(), h.rate())),
        ]);
        out.rows.extend(switches(&label, l, &r.peers[phase]));
    }
    out.rows.extend(switches(
        &format!("{S7P} (host socket)"),
        &r.host,
        &r.peers[2],
    ));
    // Information only, as in-process: both clients in the caller's task.
    let label = format!("{S7P} (2026-07-28, in-task clients)");
    let (l, h) = (&r.stateless_inline, &r.host_inline);
    out.rows.extend(in_task_rows(&label, l, h));
    out.rows.extend(switches(&label, l, &r.peers[3]));
    out.rows.extend(switches(
        &format!("{S7P} (host socket, in-task client)"),
        h,
        &r.peers[4],
    ));
}

/// `ctx switches per call`: bench / gateway / provider.
/// The information rows of the in-task pair: MCP `l` against the host socket `h`.
pub fn in_task_rows(label: &str, l: &Latencies, h: &Latencies) -> [Row; 2] {
    [
        Row::info(label, "p50", micros(l.p50())).vs(
            format!("host {}", micros(h.p50())),
            ratio(secs(l.p50()), secs(h.p50())),
        ),
        Row::info(label, "calls", per_sec(l.rate()))
            .vs(per_sec(h.rate()), ratio(l.rate(), h.rate())),
    ]
}

fn switches(label: &str, l: &Latencies, peers: &[Option<f64>]) -> Option<Row> {
    let show = |s: Option<f64>| s.map_or("?".to_string(), |s| format!("{s:.1}"));
    let mut text = show(l.switches_per_op());
    for p in peers {
        text.push_str(" / ");
        text.push_str(&show(*p));
    }
    Some(Row::info(
        label,
        "ctx switches per call (bench / gateway / provider)",
        text,
    ))
}

async fn measure(tap: &Path, plan: Plan) -> Result<McpResults, String> {
    let rig = ProcessRig::start(tap, "s7").await?;
    let result = mcp::phases(
        rig.addr,
        &rig.host_token,
        rig.host.clone(),
        &rig.session,
        plan,
        &rig.pids,
    )
    .await;
    rig.stop(result).await
}

/// The real `tap gateway` as a child process (its own `TAP_HOME` in a temp dir), a session
/// the bench's `HostClient` registered, and the `echo` provider process bound into it: what
/// S7 out of process and S8 run against.
pub(crate) struct ProcessRig {
    pub addr: std::net::SocketAddr,
    pub host_token: String,
    pub host: Arc<tap_client::HostClient>,
    pub session: String,
    /// The gateway's and the provider's.
    pub pids: [u32; 2],
    gateway: Child,
    provider: Child,
    log_path: std::path::PathBuf,
    _dir: TempDir,
}

impl ProcessRig {
    pub async fn start(tap: &Path, name: &str) -> Result<Self, String> {
        let dir = TempDir::new(name)?;
        let home = dir.path().join("home");
        let log_path = dir.path().join("gateway.log");
        // Killed on drop: an error below leaves no gateway behind.
        let mut gateway = rss::start_gateway(tap, dir.path(), &home, &log_path)?;
        let started = async {
            let pid = gateway.id().ok_or("gateway exited at once")?;
            let address = rss::wait_for_gateway(&mut gateway, &home, pid).await?;
            let host_token = rss::read_token(&home.join("host-token"))?;
            let provider_token = rss::read_token(&home.join("provider-token"))?;
            let addr = address
                .trim_start_matches("ws://")
                .parse()
                .map_err(|e| format!("gateway address {address}: {e}"))?;
            let host = rss::bench_host(&address, &host_token).await?;
            let session = crate::scenarios::register(&host, name).await?;
            let provider =
                start_provider(&format!("{address}/"), &provider_token, &session).await?;
            let ppid = provider.id().ok_or("provider exited at once")?;
            Ok::<_, String>((addr, host_token, host, session, provider, [pid, ppid]))
        }
        .await;
        let (addr, host_token, host, session, provider, pids) =
            started.map_err(|e| rss::with_log(e, &log_path))?;
        Ok(Self {
            addr,
            host_token,
            host: Arc::new(host),
            session,
            pids,
            gateway,
            provider,
            log_path,
            _dir: dir,
        })
    }

    /// Stops both processes; an error in `result` gets the gateway's log.
    pub async fn stop<T>(mut self, result: Result<T, String>) -> Result<T, String> {
        for child in [&mut self.provider, &mut self.gateway] {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        }
        result.map_err(|e| rss::with_log(e, &self.log_path))
    }
}

/// `tap-bench s7-provider` bound to `session`, once it says so.
async fn start_provider(url: &str, token: &str, session: &str) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut child = Command::new(exe)
        .arg("s7-provider")
        .env("TAP_GATEWAY_URL", url)
        .env("TAP_PROVIDER_TOKEN", token)
        .env("TAP_SESSION", session)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start the provider: {e}"))?;
    let stdout = child.stdout.take().ok_or("provider has no stdout")?;
    let (mut stdout, mut line) = (BufReader::new(stdout), String::new());
    let read = stdout.read_line(&mut line);
    match tokio::time::timeout(Duration::from_secs(10), read).await {
        Ok(Ok(_)) if line.trim() == BOUND => Ok(child),
        Ok(Ok(_)) => Err(format!("provider said {line:?}, not {BOUND:?}")),
        Ok(Err(e)) => Err(format!("provider stdout: {e}")),
        Err(_) => Err("the provider did not bind within 10 s".into()),
    }
}

/// The child: `tap-bench s7-provider` with `TAP_GATEWAY_URL`, `TAP_PROVIDER_TOKEN` and
/// `TAP_SESSION` set. Binds tool `echo` and answers until the gateway closes or it is
/// killed.
pub fn provider_main() -> ExitCode {
    let var = |k: &str| std::env::var(k).map_err(|_| format!("{k} must be set"));
    let vars = (
        var("TAP_GATEWAY_URL"),
        var("TAP_PROVIDER_TOKEN"),
        var("TAP_SESSION"),
    );
    let (Ok(url), Ok(token), Ok(session)) = vars else {
        eprintln!("s7-provider: TAP_GATEWAY_URL, TAP_PROVIDER_TOKEN and TAP_SESSION must be set");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("s7-provider: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let tools = ["echo".to_string()];
        match crate::provider::bind(&url, &token, "s7-provider", &session, &tools).await {
            Ok(ws) => {
                println!("{BOUND}");
                crate::provider::respond(ws).await;
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("s7-provider: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

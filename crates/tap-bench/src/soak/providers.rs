//! The soak's providers: real processes (this binary again, `tap-bench soak-provider N`),
//! each a `tap-provider` SDK provider with one tool `echo_N` bound to the soak's session,
//! and the supervisor that starts them, kills one when the chaos asks, and restarts any
//! that exits.

use super::host::TOOL_TIMEOUT;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tap_provider::{json, Endpoint, Provider, SessionChoice, Tool, ToolError};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The session the soak's host registers and every provider binds to.
pub const SESSION: &str = "soak";
/// Wait before restarting a provider that exited on its own (it could not bind, e.g. the
/// gateway had not yet seen its predecessor's socket close and refused the tool name): a
/// backoff so that a provider that cannot bind does not spin, not a wait for readiness.
const RESTART_BACKOFF: Duration = Duration::from_millis(100);

/// The child: `tap-bench soak-provider N` with `TAP_GATEWAY_URL` and `TAP_PROVIDER_TOKEN`
/// set. Serves until killed, or exits non-zero when it cannot bind.
pub fn provider_main(index: &str) -> ExitCode {
    let (Ok(url), Ok(token)) = (
        std::env::var("TAP_GATEWAY_URL"),
        std::env::var("TAP_PROVIDER_TOKEN"),
    ) else {
        eprintln!("soak-provider: TAP_GATEWAY_URL and TAP_PROVIDER_TOKEN must be set");
        return ExitCode::from(2);
    };
    let echo = Tool::new(
        format!("echo_{index}"),
        "Returns its arguments",
        json!({}),
        |args, _| async move { Ok::<_, ToolError>(args) },
    )
    .map(|t| t.timeout(TOOL_TIMEOUT));
    let echo = match echo {
        Ok(t) => t,
        Err(e) => {
            eprintln!("soak-provider: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = Provider::builder(format!("soak-{index}"))
        .endpoint(Endpoint { url, token })
        .session(SessionChoice::Named(SESSION.into()))
        .tool(echo)
        .run_forever();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak-provider {index}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The running providers.
pub struct Fleet {
    kill: Vec<mpsc::UnboundedSender<()>>,
    slots: JoinSet<()>,
    stop: CancellationToken,
    /// SIGKILLs sent at the chaos's request.
    pub kills: Arc<AtomicU64>,
    /// Exits nobody asked for (a provider that could not bind).
    pub exits: Arc<AtomicU64>,
    /// Why they exited: the last line each wrote to stderr (its index replaced by `N`),
    /// counted.
    pub exit_reasons: Reasons,
}

pub type Reasons = Arc<std::sync::Mutex<std::collections::BTreeMap<String, u64>>>;

impl Fleet {
    /// Starts `n` providers of `exe` against the gateway at `url`.
    pub fn start(exe: &Path, url: &str, token: &str, n: usize) -> Self {
        let stop = CancellationToken::new();
        let kills = Arc::new(AtomicU64::new(0));
        let exits = Arc::new(AtomicU64::new(0));
        let exit_reasons = Reasons::default();
        let mut slots = JoinSet::new();
        let mut kill = Vec::with_capacity(n);
        for i in 0..n {
            let (tx, rx) = mpsc::unbounded_channel();
            kill.push(tx);
            let slot = Slot {
                index: i,
                exe: exe.to_path_buf(),
                url: url.to_string(),
                token: token.to_string(),
                stop: stop.clone(),
                kills: kills.clone(),
                exits: exits.clone(),
                exit_reasons: exit_reasons.clone(),
            };
            slots.spawn(slot.run(rx));
        }
        Self {
            kill,
            slots,
            stop,
            kills,
            exits,
            exit_reasons,
        }
    }

    /// SIGKILLs provider `i` (it is restarted).
    pub fn kill(&self, i: usize) {
        let _ = self.kill[i % self.kill.len()].send(());
    }

    pub fn len(&self) -> usize {
        self.kill.len()
    }

    /// Kills every provider and waits for the supervisors to end.
    pub async fn stop(mut self) {
        self.stop.cancel();
        while self.slots.join_next().await.is_some() {}
    }
}

/// One provider's supervisor: start, wait, restart.
struct Slot {
    index: usize,
    exe: PathBuf,
    url: String,
    token: String,
    stop: CancellationToken,
    kills: Arc<AtomicU64>,
    exits: Arc<AtomicU64>,
    exit_reasons: Reasons,
}

impl Slot {
    async fn run(self, mut kill: mpsc::UnboundedReceiver<()>) {
        while !self.stop.is_cancelled() {
            let spawned = Command::new(&self.exe)
                .args(["soak-provider", &self.index.to_string()])
                .env("TAP_GATEWAY_URL", &self.url)
                .env("TAP_PROVIDER_TOKEN", &self.token)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn();
            let mut child = match spawned {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("soak: cannot start provider {}: {e}", self.index);
                    self.exits.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(RESTART_BACKOFF).await;
                    continue;
                }
            };
            // Read as it comes (a full pipe would stall the provider); the last line says
            // why it exited, if it did on its own.
            let last_line = child.stderr.take().map(|err| {
                tokio::spawn(async move {
                    use tokio::io::AsyncBufReadExt;
                    let mut lines = tokio::io::BufReader::new(err).lines();
                    let mut last = String::new();
                    while let Ok(Some(l)) = lines.next_line().await {
                        last = l;
                    }
                    last
                })
            });
            tokio::select! {
                _ = child.wait() => {
                    self.exits.fetch_add(1, Ordering::Relaxed);
                    let last = match last_line {
                        Some(task) => task.await.unwrap_or_default(),
                        None => String::new(),
                    };
                    let reason = last.replace(&format!("provider {}:", self.index), "provider N:");
                    *self.exit_reasons.lock().unwrap().entry(reason).or_default() += 1;
                    tokio::select! {
                        _ = tokio::time::sleep(RESTART_BACKOFF) => {}
                        _ = self.stop.cancelled() => {}
                    }
                }
                Some(()) = kill.recv() => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    self.kills.fetch_add(1, Ordering::Relaxed);
                }
                _ = self.stop.cancelled() => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                }
            }
        }
    }
}

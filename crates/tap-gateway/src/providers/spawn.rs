//! Provider processes the gateway starts itself. Each gets the gateway token in
//! `TAP_PROVIDER_TOKEN` and the endpoint in `TAP_GATEWAY_URL`, so a spec provider runs
//! unchanged; its output goes to the gateway's log.

use crate::gateway::Gateway;
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// A provider process to start with the gateway.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory (the gateway's when `None`).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl SpawnSpec {
    /// A shell command line, run with `sh -c`.
    pub fn shell(command_line: &str) -> Self {
        Self {
            program: "sh".into(),
            args: vec!["-c".into(), command_line.into()],
            cwd: None,
            env: Vec::new(),
        }
    }

    fn label(&self) -> String {
        match self.args.as_slice() {
            [flag, line] if self.program == "sh" && flag == "-c" => line.clone(),
            _ => std::iter::once(self.program.as_str())
                .chain(self.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

impl Gateway {
    /// Starts every configured provider process. A process that fails to start is logged
    /// and skipped: one broken command must not keep the gateway from serving.
    pub(crate) fn spawn_configured_providers(&self) {
        for spec in self.shared().config.spawn.clone() {
            let label = spec.label();
            let mut cmd = Command::new(&spec.program);
            cmd.args(&spec.args)
                .envs(spec.env.iter().cloned())
                .env("TAP_PROVIDER_TOKEN", &self.shared().secrets.gateway_token)
                .env("TAP_GATEWAY_URL", format!("ws://{}", self.address()))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            // Its own process group, so stopping it also stops whatever it started (a
            // shell line like `npm start` runs the provider as a grandchild).
            #[cfg(unix)]
            cmd.process_group(0);
            if let Some(cwd) = &spec.cwd {
                cmd.current_dir(cwd);
            }
            match cmd.spawn() {
                Ok(child) => self.supervise(label, child),
                Err(e) => {
                    tracing::error!(command = %label, error = %e, "cannot start provider process")
                }
            }
        }
    }

    fn supervise(&self, label: String, mut child: Child) {
        let pid = child.id();
        tracing::info!(command = %label, ?pid, "provider process started");
        let tasks = &self.shared().tasks;
        if let Some(out) = child.stdout.take() {
            tasks.spawn(forward_lines(label.clone(), "stdout", out));
        }
        if let Some(err) = child.stderr.take() {
            tasks.spawn(forward_lines(label.clone(), "stderr", err));
        }
        let stopping = self.shared().stopping.clone();
        tasks.spawn(async move {
            tokio::select! {
                status = child.wait() => match status {
                    Ok(s) => tracing::warn!(command = %label, status = %s, "provider process exited"),
                    Err(e) => tracing::warn!(command = %label, error = %e, "provider process lost"),
                },
                _ = stopping.cancelled() => {
                    // The provider already had its sessions' shutdown deadline; spec
                    // providers reconnect forever, so they are stopped here.
                    stop_group(&mut child, pid).await;
                    tracing::info!(command = %label, "provider process stopped");
                }
            }
        });
    }
}

async fn forward_lines(label: String, stream: &'static str, pipe: impl AsyncRead + Unpin) {
    let mut lines = BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(command = %label, stream, "{line}");
    }
}

/// SIGTERM to the child's process group; after [`STOP_GRACE`] (or as soon as the child
/// exits), SIGKILL to whatever is left in the group.
#[cfg_attr(not(unix), allow(unused_variables))]
async fn stop_group(child: &mut Child, pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = pid
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw)
    {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(group, Signal::SIGTERM);
        let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
        let _ = killpg(group, Signal::SIGKILL);
    }
    let _ = child.kill().await;
}

/// How long a spawned provider has to exit after SIGTERM.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

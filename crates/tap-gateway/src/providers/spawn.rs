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
                    let _ = child.kill().await;
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

//! One configured server as the hub keeps it: its spec, where it is configured, and what
//! its runner reports (state, pid, tools, failures, stderr tail) for `mcpServers.list`,
//! with its process's memory read when asked.

use super::config::ServerSpec;
use crate::limits::MCP_STDERR_TAIL_LINES;
use std::collections::VecDeque;
use std::sync::Mutex;
use tap_protocol::mcp_servers::{McpScope, McpServerInfo, McpServerState};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// A server and its runner's controls.
pub(crate) struct Server {
    pub spec: ServerSpec,
    pub scope: McpScope,
    /// The session a project server runs for.
    pub session_id: Option<String>,
    /// The file it is configured in.
    pub config_path: String,
    /// The directory relative `cwd`s resolve against, and a stdio server's default one.
    pub base_dir: std::path::PathBuf,
    /// Stops its runner for good (removed, the session ended, the gateway stops).
    pub stop: CancellationToken,
    /// Wakes a parked or backing-off runner to start at once (`mcpServers.restart`).
    pub restart: Notify,
    pub status: Mutex<Status>,
    /// While it is ready: where its stderr lines and log entries are pushed (the
    /// `stderr` and `log` streams of the sessions that see it).
    pub pusher: Mutex<Option<crate::provider_protocol::local::LocalSender>>,
    /// The gateway's sign-ins (a remote server's tokens and started sign-ins).
    pub auth: std::sync::Arc<super::remote_auth::RemoteAuth>,
}

/// What the runner reports.
#[derive(Default)]
pub(crate) struct Status {
    pub state: Option<McpServerState>,
    pub pid: Option<u32>,
    pub provider_id: Option<String>,
    pub server_info: Option<String>,
    pub tools: Vec<String>,
    pub ready_since: Option<String>,
    pub restarts: u32,
    pub last_error: Option<String>,
    /// Failures in a row that count toward parking (the supervisor's count).
    pub failures: u32,
    pub stderr_tail: VecDeque<String>,
    /// About its configuration entry.
    pub warnings: Vec<String>,
    /// About its tools as last listed (left out: collisions, over the limit).
    pub tool_warnings: Vec<String>,
    /// A remote server's last `401`/`403`: where its next sign-in's discovery starts.
    pub challenge: Option<crate::oauth::challenge::Challenge>,
    /// Why it waits for a sign-in, or why the last one failed.
    pub sign_in_reason: Option<String>,
}

impl Server {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: ServerSpec,
        scope: McpScope,
        session_id: Option<String>,
        config_path: String,
        base_dir: std::path::PathBuf,
        stop: CancellationToken,
        warnings: Vec<String>,
        auth: std::sync::Arc<super::remote_auth::RemoteAuth>,
    ) -> Self {
        Server {
            spec,
            scope,
            session_id,
            config_path,
            base_dir,
            stop,
            restart: Notify::new(),
            status: Mutex::new(Status {
                warnings,
                ..Status::default()
            }),
            pusher: Mutex::new(None),
            auth,
        }
    }

    /// Changes the status under its lock.
    pub fn update(&self, f: impl FnOnce(&mut Status)) {
        f(&mut self.status.lock().unwrap());
    }

    /// Keeps a line the server wrote to stderr (the newest [`MCP_STDERR_TAIL_LINES`]) and,
    /// while it is ready, pushes it to its sessions' `stderr` stream.
    pub fn stderr_line(&self, line: &str) {
        self.update(|s| {
            if s.stderr_tail.len() == MCP_STDERR_TAIL_LINES {
                s.stderr_tail.pop_front();
            }
            s.stderr_tail.push_back(line.to_string());
        });
        self.push("stderr", line);
    }

    /// Pushes `text` (`keep`: stored, not shown) to `stream` of the sessions that see the
    /// server, while it is ready; push budgets bound a flood like any provider's.
    pub fn push(&self, stream: &str, text: &str) {
        let Some(sender) = self.pusher.lock().unwrap().clone() else {
            return;
        };
        let push = tap_protocol::provider::Push {
            level: tap_protocol::provider::PushLevel::Keep,
            event: Some(text.to_string()),
            prompt: None,
            stream: Some(stream.to_string()),
            session_id: self.session_id.clone(),
            broadcast: self.session_id.is_none(),
            metadata: None,
        };
        let _ = sender.send(&tap_protocol::provider::ProviderMessage::Push(push));
    }

    pub fn info(&self) -> McpServerInfo {
        let mut info = self.info_locked();
        // Read after the lock is let go: the runner must not wait on a file read.
        info.memory_bytes = info.pid.and_then(crate::processes::memory::resident_bytes);
        info.sign_in = super::remote_auth::summary(self);
        info
    }

    fn info_locked(&self) -> McpServerInfo {
        let s = self.status.lock().unwrap();
        let state = match s.state {
            Some(state) => state,
            None if !self.spec.enabled => McpServerState::Disabled,
            None => McpServerState::Stopped,
        };
        // Starting again after a failure is still failing: the tray must not flicker
        // between "failing" and not while a crashing server is tried again.
        let failing = match state {
            McpServerState::Parked | McpServerState::Restarting => true,
            McpServerState::Starting => s.failures > 0,
            _ => false,
        };
        McpServerInfo {
            name: self.spec.name.clone(),
            scope: self.scope,
            session_id: self.session_id.clone(),
            config_path: self.config_path.clone(),
            transport: self.spec.transport.kind(),
            target: self.spec.transport.target(),
            secret_names: self.spec.transport.secret_names(),
            state,
            pid: s.pid,
            memory_bytes: None,
            provider_id: s.provider_id.clone(),
            server_info: s.server_info.clone(),
            tools: s.tools.clone(),
            ready_since: s.ready_since.clone(),
            restarts: s.restarts,
            last_error: s.last_error.clone(),
            failures: s.failures,
            failing,
            stderr_tail: s.stderr_tail.iter().cloned().collect(),
            warnings: s.warnings.iter().chain(&s.tool_warnings).cloned().collect(),
            sign_in: None,
        }
    }
}

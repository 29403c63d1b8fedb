//! Which servers run. The user's (`$TAP_HOME/mcp.json`) start with the gateway, one
//! instance each, bound to every session; `mcpServers.reload` applies the file again. A
//! session's project servers (its `tap.config.json`'s `mcpServers`) start when it
//! registers, bound to it alone, and stop with it; an edit of the file starts, restarts
//! and stops them while the session runs. The hub follows sessions through the status
//! changes the engine already announces, comparing each live session's config revision
//! (published by its follower, `sessions/project_follow.rs`) with the one it applied (so a missed
//! announcement is caught up by the next one).

use super::config::{self, Parsed, ServerSpec};
use super::remote_auth::{self, RemoteAuth};
use super::server::Server;
use super::supervise;
use crate::error::Error;
use crate::oauth::Callback;
use crate::state::project_config::Snapshot;
use crate::state::Core;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tap_protocol::mcp_servers::{
    McpScope, McpServerInfo, McpServerRef, McpServersList, McpSignInStart,
};
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

pub(crate) struct McpHub {
    core: Arc<Core>,
    inner: Mutex<Inner>,
    /// Remote servers' sign-ins, shared by every server of this gateway.
    auth: Arc<RemoteAuth>,
}

#[derive(Default)]
struct Inner {
    user: Vec<Arc<Server>>,
    /// Problems with the user file itself.
    user_warnings: Vec<String>,
    /// Project servers by session id.
    project: HashMap<String, Vec<Arc<Server>>>,
    /// The revision of each session's project config applied last (`sessions/project_follow.rs`).
    applied: HashMap<String, u64>,
}

impl McpHub {
    pub fn new(core: Arc<Core>) -> Arc<Self> {
        Arc::new(McpHub {
            auth: RemoteAuth::new(&core),
            core,
            inner: Mutex::new(Inner::default()),
        })
    }

    /// Starts the user's servers and follows sessions for their project servers. Once,
    /// when the gateway listens.
    pub fn start(self: &Arc<Self>) {
        self.reload();
        let hub = self.clone();
        let mut events = self.core.events.subscribe();
        let stopping = self.core.stopping.clone();
        self.core.tasks.spawn(async move {
            hub.follow_sessions();
            loop {
                tokio::select! {
                    _ = stopping.cancelled() => break,
                    // Every event, a lag included, is a reason to compare again.
                    event = events.recv() => match event {
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                        _ => hub.follow_sessions(),
                    },
                }
            }
        });
    }

    /// Every server, user ones first.
    pub fn list(&self) -> McpServersList {
        let (all, warnings) = {
            let inner = self.inner.lock().unwrap();
            let mut all: Vec<Arc<Server>> = inner.user.clone();
            let mut sessions: Vec<_> = inner.project.iter().collect();
            sessions.sort_by(|a, b| a.0.cmp(b.0));
            for (_, list) in sessions {
                all.extend(list.iter().cloned());
            }
            (all, inner.user_warnings.clone())
        };
        // Outside the hub's lock: each reads its process's memory from /proc.
        let servers: Vec<McpServerInfo> = all.iter().map(|s| s.info()).collect();
        McpServersList { servers, warnings }
    }

    /// Applies `$TAP_HOME/mcp.json`: servers added start, removed ones stop, changed ones
    /// restart, unchanged ones are left running.
    pub fn reload(&self) -> McpServersList {
        let data_dir = self.core.config.data_dir.clone();
        let path = config::user_file(&data_dir);
        let Parsed { servers, warnings } = config::load_user(&data_dir);
        for w in &warnings {
            tracing::warn!(target: super::connect::LOG_TARGET, "{w}");
        }
        {
            let mut inner = self.inner.lock().unwrap();
            let old = std::mem::take(&mut inner.user);
            let mut next = Vec::with_capacity(servers.len());
            for spec in servers {
                match old.iter().find(|s| s.spec == spec) {
                    Some(same) => next.push(same.clone()),
                    None => {
                        let own: Vec<String> = warnings
                            .iter()
                            .filter(|w| w.contains(&format!("'{}'", spec.name)))
                            .cloned()
                            .collect();
                        next.push(self.launch(
                            spec,
                            McpScope::User,
                            None,
                            &path,
                            data_dir.clone(),
                            self.core.stopping.child_token(),
                            Vec::new(),
                            own,
                        ));
                    }
                }
            }
            for gone in old
                .iter()
                .filter(|o| !next.iter().any(|n| Arc::ptr_eq(n, o)))
            {
                gone.stop.cancel();
            }
            inner.user = next;
            inner.user_warnings = warnings
                .into_iter()
                .filter(|w| w.contains("no user MCP servers") || w.contains("more than"))
                .collect();
        }
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
        self.list()
    }

    /// Restarts one server now (a parked one too).
    pub fn restart(&self, which: &McpServerRef) -> Result<McpServerInfo, Error> {
        let server = self.find(which)?;
        if !server.spec.enabled {
            return Err(Error::new(
                ErrorCode::Denied,
                format!("MCP server '{}' is disabled; enable it first", which.name),
            ));
        }
        server.restart.notify_one();
        Ok(server.info())
    }

    /// Starts signing in to a remote server (`mcpServers.signIn`).
    pub async fn sign_in(&self, which: &McpServerRef) -> Result<McpSignInStart, Error> {
        let server = self.find(which)?;
        remote_auth::sign_in(&self.core, &server).await
    }

    /// Signs out of a remote server (`mcpServers.signOut`).
    pub async fn sign_out(&self, which: &McpServerRef) -> Result<McpServerInfo, Error> {
        let server = self.find(which)?;
        remote_auth::sign_out(&self.core, &server).await?;
        Ok(server.info())
    }

    /// The browser came back to `/oauth/callback`: `Ok` names the server signed in to.
    pub async fn finish_sign_in(&self, callback: &Callback) -> Result<String, String> {
        let find = |owner: &McpServerRef| self.find(owner).ok();
        remote_auth::finish(&self.core, &self.auth, find, callback).await
    }

    /// The server `which` names.
    fn find(&self, which: &McpServerRef) -> Result<Arc<Server>, Error> {
        let inner = self.inner.lock().unwrap();
        let found = match &which.session_id {
            None => inner.user.iter().find(|s| s.spec.name == which.name),
            Some(session) => inner
                .project
                .get(session)
                .and_then(|l| l.iter().find(|s| s.spec.name == which.name)),
        };
        found.cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "no MCP server '{}' is configured{}",
                    which.name,
                    match &which.session_id {
                        Some(s) => format!(" for session '{s}'"),
                        None => " in the user's mcp.json".into(),
                    }
                ),
            )
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        spec: ServerSpec,
        scope: McpScope,
        session_id: Option<String>,
        config_path: &Path,
        base_dir: PathBuf,
        stop: CancellationToken,
        roots: Vec<String>,
        warnings: Vec<String>,
    ) -> Arc<Server> {
        let server = Arc::new(Server::new(
            spec,
            scope,
            session_id,
            config_path.display().to_string(),
            base_dir,
            stop,
            warnings,
            self.auth.clone(),
        ));
        let core = self.core.clone();
        self.core
            .tasks
            .spawn(supervise::supervise(core, server.clone(), roots));
        server
    }

    /// Applies each live session's project config when its follower published a reading
    /// this hub has not applied yet, and forgets ended sessions.
    fn follow_sessions(self: &Arc<Self>) {
        type Live = (String, String, Arc<Snapshot>, CancellationToken);
        let live: Vec<Live> = {
            let state = self.core.state();
            state
                .sessions
                .values()
                .filter(|s| !s.is_ending())
                .filter_map(|s| {
                    let cwd = s.info.cwd.clone()?;
                    let snapshot = s.project_config.clone()?;
                    Some((s.info.id.clone(), cwd, snapshot, s.cancel.clone()))
                })
                .collect()
        };
        let alive: Vec<String> = {
            let state = self.core.state();
            state
                .sessions
                .values()
                .filter(|s| !s.is_ending())
                .map(|s| s.info.id.clone())
                .collect()
        };
        let mut inner = self.inner.lock().unwrap();
        inner.project.retain(|id, _| alive.contains(id));
        inner.applied.retain(|id, _| alive.contains(id));
        let mut due = Vec::new();
        for (id, cwd, snapshot, cancel) in live {
            if inner.applied.get(&id) == Some(&snapshot.revision) {
                continue;
            }
            inner.applied.insert(id.clone(), snapshot.revision);
            due.push((id, cwd, snapshot, cancel));
        }
        drop(inner);
        for (id, cwd, snapshot, cancel) in due {
            self.apply_project(&id, PathBuf::from(cwd), &snapshot, cancel);
        }
    }

    /// Makes a session's project servers what one reading of its config says, as
    /// `reload` does for the user's: added ones start, removed ones stop, changed ones
    /// restart, unchanged ones keep running.
    fn apply_project(
        &self,
        session: &str,
        dir: PathBuf,
        snapshot: &Snapshot,
        cancel: CancellationToken,
    ) {
        let (path, parsed) = match &snapshot.path {
            Some(path) => (path.clone(), config::parse_document(&snapshot.json, path)),
            None => (PathBuf::new(), Parsed::default()),
        };
        for w in &parsed.warnings {
            crate::project::warn::warn_session(
                &self.core,
                session,
                w.clone(),
                Some(path.display().to_string()),
                None,
            );
        }
        let mut inner = self.inner.lock().unwrap();
        let old = inner.project.remove(session).unwrap_or_default();
        let roots = vec![format!("file://{}", dir.display())];
        let mut next = Vec::with_capacity(parsed.servers.len());
        for spec in parsed.servers {
            match old.iter().find(|s| s.spec == spec) {
                Some(same) => next.push(same.clone()),
                None => next.push(self.launch(
                    spec,
                    McpScope::Project,
                    Some(session.to_string()),
                    &path,
                    dir.clone(),
                    cancel.child_token(),
                    roots.clone(),
                    Vec::new(),
                )),
            }
        }
        for gone in old
            .iter()
            .filter(|o| !next.iter().any(|n| Arc::ptr_eq(n, o)))
        {
            gone.stop.cancel();
        }
        inner.project.insert(session.to_string(), next);
        drop(inner);
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
    }
}

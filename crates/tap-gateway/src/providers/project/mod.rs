//! Project providers (spec: "Project providers"): the `providers` of the `tap.config.json`
//! nearest to a session's `cwd`, spawned by the gateway for that session.
//!
//! - Each process gets its own token in `TAP_PROVIDER_TOKEN` (`ptk-` + 256 random bits)
//!   and the gateway's address in `TAP_GATEWAY_URL`. The token authenticates with trust
//!   "project", scoped to that session: `sessions` lists only it, `hello` may bind only to
//!   it (a `hello` without `session` is stamped with it). The token lives while both its
//!   process and its session do: it is revoked when the process exits (a restart gets a
//!   fresh one) and when the session starts ending.
//! - Output goes to the log (target `tap::provider`), line by line, bounded.
//! - A process that exits with a failure is restarted with exponential backoff; one that
//!   keeps failing quickly is given up and reported (`session.warning`), as are an
//!   unusable config and a command that cannot start.
//! - At the session's teardown (after `shutdown.pending` and its deadline) every process
//!   group gets SIGTERM, and SIGKILL after a grace.

mod config;
mod supervisor;

use crate::gateway::{Gateway, State};
use std::path::PathBuf;
use std::time::Duration;
use tap_protocol::host::{HostEvent, SessionWarning};
use tap_protocol::limits;
use tokio_util::sync::CancellationToken;

/// How crashed project providers are restarted (`GatewayConfig::project_restart`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Delay before the first restart; doubled after each quick failure.
    pub backoff: Duration,
    /// The longest delay.
    pub backoff_max: Duration,
    /// A run at least this long counts as stable: backoff and failure count start over.
    pub stable_run: Duration,
    /// Quick failures in a row after which the provider is given up and reported.
    pub max_quick_failures: u32,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            backoff: limits::PROJECT_RESTART_BACKOFF,
            backoff_max: limits::PROJECT_RESTART_BACKOFF_MAX,
            stable_run: limits::PROJECT_STABLE_RUN,
            max_quick_failures: limits::PROJECT_MAX_QUICK_FAILURES,
        }
    }
}

/// A token issued to one run of one project provider of a session.
pub(crate) struct ProjectToken {
    pub token: String,
    /// The provider's `name` in the config (for logs).
    pub provider: String,
}

/// The session a project-provider token is for, if it is one of a live session's.
/// Compared in constant time against every live token (a handful per session).
pub(crate) fn authenticate(state: &State, token: &str) -> Option<(String, String)> {
    let mut found = None;
    for s in state.sessions.values().filter(|s| !s.is_ending()) {
        for t in &s.project_tokens {
            if crate::auth::tokens::matches(token, &t.token) {
                found = Some((s.info.id.clone(), t.provider.clone()));
            }
        }
    }
    found
}

impl Gateway {
    /// Reads the project config for a newly registered session and starts its providers.
    /// `cancel` is the session's: cancelled at its teardown (or when the gateway stops).
    pub(crate) fn start_project_providers(
        &self,
        session_id: String,
        cwd: Option<String>,
        cancel: CancellationToken,
    ) {
        let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
            return;
        };
        let gw = self.clone();
        self.shared().tasks.spawn(async move {
            let loaded = tokio::task::spawn_blocking(move || config::load(&cwd))
                .await
                .ok()
                .flatten();
            let loaded = match loaded {
                None => return,
                Some(Ok(loaded)) => loaded,
                Some(Err(bad)) => {
                    let path = bad.path.display().to_string();
                    gw.warn_session(
                        &session_id,
                        format!("{path}: {}; no project providers started", bad.message),
                        Some(path),
                        None,
                    );
                    return;
                }
            };
            let path = loaded.path.display().to_string();
            for problem in loaded.problems {
                gw.warn_session(
                    &session_id,
                    format!("{path}: {problem}"),
                    Some(path.clone()),
                    None,
                );
            }
            tracing::info!(session = %session_id, config = %path, providers = loaded.providers.len(), "starting project providers");
            for p in loaded.providers {
                let run = supervisor::run(gw.clone(), session_id.clone(), p, cancel.clone());
                gw.shared().tasks.spawn(run);
            }
        });
    }

    /// Logs a problem with a session's project providers and tells the session's host.
    pub(crate) fn warn_session(
        &self,
        session_id: &str,
        message: String,
        config: Option<String>,
        provider: Option<String>,
    ) {
        tracing::warn!(session = %session_id, config = ?config, provider = ?provider, "{message}");
        let mut state = self.state();
        let host = state.sessions.get(session_id).map(|s| s.host.clone());
        if let Some(h) = host.and_then(|h| state.hosts.get_mut(&h)) {
            h.send(&HostEvent::SessionWarning(SessionWarning {
                session_id: session_id.to_string(),
                message,
                config,
                provider,
            }));
        }
    }
}

/// `sessions.active` as a provider sees it: a project provider sees only its own session
/// (so a spec provider that binds to `active[0]` binds there), others as before.
pub(crate) fn visible_sessions(
    state: &State,
    pairing: Option<&str>,
    scope: Option<&str>,
) -> Vec<tap_protocol::provider::SessionInfo> {
    match scope {
        Some(sid) => crate::sessions::lifecycle::active_sessions(state)
            .into_iter()
            .filter(|s| s.id == sid)
            .collect(),
        None => crate::pairing::sessions_for(state, pairing),
    }
}

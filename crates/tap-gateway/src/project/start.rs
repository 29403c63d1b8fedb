//! A session's project providers: its `tap.config.json` read when it registers, each
//! provider supervised for the session's life; their tokens and what they may see.

use super::config;
use super::supervisor;
use super::warn::warn_session;
use crate::state::{Core, State};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::project::start";

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

/// Reads the project config for a newly registered session and starts its providers.
/// `cancel` is the session's: cancelled at its teardown (or when the gateway stops).
pub(crate) fn start(
    core: &Arc<Core>,
    session_id: String,
    cwd: Option<String>,
    cancel: CancellationToken,
) {
    let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
        return;
    };
    let core = core.clone();
    core.clone().tasks.spawn(async move {
        let loaded = tokio::task::spawn_blocking(move || config::load(&cwd))
            .await
            .ok()
            .flatten();
        let loaded = match loaded {
            None => return,
            Some(Ok(loaded)) => loaded,
            Some(Err(bad)) => {
                let path = bad.path.display().to_string();
                warn_session(
                        &core,
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
            warn_session(
                        &core,
                &session_id,
                format!("{path}: {problem}"),
                Some(path.clone()),
                None,
            );
        }
        tracing::info!(target: LOG_TARGET, session = %session_id, config = %path, providers = loaded.providers.len(), "starting project providers");
        for p in loaded.providers {
            let run = supervisor::run(core.clone(), session_id.clone(), p, cancel.clone());
            core.tasks.spawn(run);
        }
    });
}

/// `sessions.active` as a provider sees it: a project provider sees only its own session
/// (so a spec provider that binds to `active[0]` binds there), others as before.
pub(crate) fn visible_sessions(
    state: &State,
    pairing: Option<&str>,
    scope: Option<&str>,
) -> Vec<tap_protocol::provider::SessionInfo> {
    match scope {
        Some(sid) => crate::state::session::active_sessions(state)
            .into_iter()
            .filter(|s| s.id == sid)
            .collect(),
        None => crate::pairing::scope::sessions_for(state, pairing),
    }
}

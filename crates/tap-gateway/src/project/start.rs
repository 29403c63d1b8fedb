//! A session's project providers' tokens and what they may see (they are started and
//! stopped by the config's follower, `sessions/project_follow.rs`).

use crate::state::State;

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

/// Notes that provider connection `conn` authenticated with a project token of `session`:
/// a run stopped because its entry changed closes it (`supervisor.rs`).
pub(crate) fn note_connection(state: &mut State, session: &str, token: &str, conn: &str) {
    if let Some(s) = state.sessions.get_mut(session) {
        for t in &mut s.project_tokens {
            if crate::auth::tokens::matches(token, &t.token) {
                t.conns.push(conn.to_string());
            }
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
        Some(sid) => crate::state::session::active_sessions(state)
            .into_iter()
            .filter(|s| s.id == sid)
            .collect(),
        None => crate::pairing::scope::sessions_for(state, pairing),
    }
}

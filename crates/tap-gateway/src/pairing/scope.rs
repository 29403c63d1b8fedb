//! Which sessions a paired provider may see and bind to (see the module doc of `pairing`).

use crate::state::session::active_sessions;
use crate::state::State;
use tap_protocol::provider::SessionInfo;

/// Whether `id` is a registered session that is not ending.
pub(crate) fn live(state: &State, id: &str) -> bool {
    state.sessions.get(id).is_some_and(|s| !s.is_ending())
}

/// The foreground session, if one is registered and not ending.
pub(crate) fn foreground(state: &State) -> Option<String> {
    state
        .session_order
        .iter()
        .filter_map(|id| state.sessions.get(id))
        .find(|s| !s.is_ending() && s.info.foreground == Some(true))
        .map(|s| s.info.id.clone())
}

/// The one session a paired provider may bind to now: its pairing's session while that is
/// alive, else the foreground session.
pub(crate) fn allowed_session(state: &State, pairing_id: &str) -> Option<String> {
    let pinned = state
        .pairing
        .get(pairing_id)
        .and_then(|p| p.session.clone());
    match pinned {
        Some(s) if live(state, &s) => Some(s),
        _ => foreground(state),
    }
}

/// `sessions.active` as a provider sees it. A paired provider sees every session's id and
/// label but the `cwd` only of the session it may bind to (spec: "`cwd` is only visible
/// for sessions the provider is authorized to access").
pub(crate) fn sessions_for(state: &State, pairing: Option<&str>) -> Vec<SessionInfo> {
    let mut list = active_sessions(state);
    if let Some(pid) = pairing {
        let allowed = allowed_session(state, pid);
        for s in &mut list {
            if allowed.as_deref() != Some(s.id.as_str()) {
                s.cwd = None;
            }
        }
    }
    list
}

//! Sessions as providers see them.

use crate::state::State;
use tap_protocol::provider::SessionInfo;

/// The active sessions as providers see them.
pub(crate) fn active_sessions(state: &State) -> Vec<SessionInfo> {
    state
        .session_order
        .iter()
        .filter_map(|id| state.sessions.get(id))
        .map(|s| s.info.clone())
        .collect()
}

//! Problems with a session's project providers reach its host as `session.warning`.

use crate::state::Core;
use tap_protocol::host::{HostEvent, SessionWarning};

/// Logs a problem with a session's project providers and tells the session's host.
pub(crate) fn warn_session(
    core: &Core,
    session_id: &str,
    message: String,
    config: Option<String>,
    provider: Option<String>,
) {
    tracing::warn!(session = %session_id, config = ?config, provider = ?provider, "{message}");
    let mut state = core.state();
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

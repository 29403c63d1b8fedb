//! Engine operations behind the panel's control methods that have no other home:
//! reading a session's streams, dropping a provider connection, where the files are.
//! Public so an embedding app can call them without a control socket.

use crate::gateway::Gateway;
use tap_protocol::control::{FileLocations, StreamsHistory};
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::ErrorCode;

impl Gateway {
    /// A session's stored stream events, newest first: every stream, or `stream` (that
    /// stream of every provider) or `stream@provider`; the newest `last` per stream (all
    /// kept events when `None`). `Err` (`INVALID_SESSION`) for an unknown session.
    pub fn streams_history(
        &self,
        session_id: &str,
        stream: Option<&str>,
        last: Option<usize>,
    ) -> Result<StreamsHistory, (ErrorCode, String)> {
        if !self.state().sessions.contains_key(session_id) {
            return Err(crate::sessions::lifecycle::unknown_session(session_id));
        }
        let last = last.unwrap_or(STREAM_RETENTION);
        Ok(StreamsHistory {
            session_id: session_id.to_string(),
            streams: self.shared().streams.history(session_id, stream, last),
        })
    }

    /// Closes the connection of the authenticated provider `id` (its calls in flight fail
    /// with `DISCONNECTED`, as on any disconnect). `false` when no such provider is
    /// connected.
    pub fn provider_disconnect(&self, id: &str) -> bool {
        let state = self.state();
        let Some(p) = state.providers.get(id) else {
            return false;
        };
        p.link.kill.cancel();
        tracing::info!(provider = %id, "provider disconnected by the user");
        true
    }
}

/// Where the gateway keeps its files (the snapshot's `files`).
pub(super) fn file_locations(gw: &Gateway) -> FileLocations {
    let shared = gw.shared();
    let files = gw.files();
    let show = |p: &std::path::Path| p.display().to_string();
    let dir = &shared.config.data_dir;
    FileLocations {
        data_dir: show(dir),
        provider_token: show(&files.provider_token),
        copilot_provider_token: files.copilot_provider_token.as_deref().map(show),
        host_token: show(&files.host_token),
        // An embedder that keeps the control token (the desktop app: in the keyring)
        // writes no file.
        control_token: shared
            .config
            .control_token_store
            .is_none()
            .then(|| show(&files.control_token)),
        state: show(&files.state),
        settings: show(&crate::settings::path(dir)),
        paired_providers: show(&dir.join(crate::pairing::STORE_FILE_NAME)),
    }
}

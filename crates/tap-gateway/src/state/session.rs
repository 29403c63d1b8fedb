//! One registered session: what the state holds of it, and the reads and releases that
//! need only the state.

use super::tool_entry::ToolEntry;
use super::State;
use crate::state::binding::PendingAck;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tap_protocol::host::BusyState;
use tap_protocol::provider::SessionInfo;
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

/// One registered session.
pub(crate) struct Session {
    pub info: SessionInfo,
    pub busy: BusyState,
    /// The agent's mode, model and the host's capabilities, as the host last reported them.
    pub report: crate::state::host_report::HostReport,
    /// The host that registered it (and receives its tool sets and deliveries).
    pub host: String,
    /// Bound provider ids, in bind order.
    pub bound: Vec<String>,
    /// Tool name → who holds it, rebuilt whenever a bound provider's tools change (see
    /// `tool_map`).
    pub tools: HashMap<String, ToolEntry>,
    /// Revision of the tool set last published to the host.
    pub tool_revision: u64,
    /// Poked on every tool-set change; the session's debouncer publishes.
    pub toolset_changed: Arc<Notify>,
    /// Changed when a tool set is published and when the session starts ending; dropped
    /// with the session, which closes every receiver. The MCP facade's watchers
    /// (`mcp/watch.rs`) wait on it rather than on every gateway-wide status change (each
    /// busy/idle flip of each session).
    pub watchers: watch::Sender<()>,
    /// Ends the session's own tasks (the debouncer, its emitters).
    pub cancel: CancellationToken,
    /// Notified each time the session goes from busy to idle (idle emitters, batched
    /// injects).
    pub idle: Arc<Notify>,
    /// Set once the session is ending: providers that still owe `goodbye` /
    /// `shutdown.ready`, and a signal for when none do.
    pub ending: Option<Ending>,
    /// Tokens of the project providers running for this session (`tap.config.json`).
    pub project_tokens: Vec<ProjectToken>,
    /// The project config in force, as its follower last applied it (`sessions/project_follow.rs`);
    /// the MCP hub starts and stops the session's project servers from it.
    pub project_config: Option<Arc<crate::state::project_config::Snapshot>>,
    /// `surface` / `inject` deliveries waiting for a host to show them
    /// (`state/delivery_queue.rs`).
    pub delivery_queue: crate::state::delivery_queue::DeliveryQueue,
    /// `tools.update`s applied here whose `ack` waits for the next tool-set publish (the
    /// revision barrier: acknowledged once the host has the new tools).
    pub pending_acks: Vec<PendingAck>,
    /// The profile it was opened with: the tool map holds only what it lets through.
    pub profile: Option<Arc<crate::profiles::Profile>>,
    /// The gateway's pins: the tool map leaves out what they hold.
    pub pins: crate::pins::Pins,
    /// Tool name → provider name of the tools left out because their definition is held
    /// (rebuilt with `tools`), so a call naming one is told why.
    pub held: HashMap<String, Arc<str>>,
}

pub(crate) struct Ending {
    pub waiting: HashSet<String>,
    pub done: Arc<Notify>,
    /// `session.end` requests that came while the session was already ending; each is
    /// answered by its own `session.ended` at teardown.
    pub late_requests: Vec<String>,
}

impl Session {
    pub fn is_ending(&self) -> bool {
        self.ending.is_some()
    }
}

/// A token issued to one run of one project provider of a session.
pub(crate) struct ProjectToken {
    pub token: String,
    /// The provider's `name` in the config (for logs).
    pub provider: String,
    /// Provider connections that authenticated with it: closed when the run is stopped
    /// because its entry changed or left the config.
    pub conns: Vec<String>,
}

/// A provider said `goodbye` / `shutdown.ready` for `session`, or disconnected: it no
/// longer holds up that session's teardown.
pub(crate) fn release_shutdown(state: &mut State, provider_id: &str, session: &str) {
    if let Some(ending) = state
        .sessions
        .get_mut(session)
        .and_then(|s| s.ending.as_mut())
    {
        ending.waiting.remove(provider_id);
        if ending.waiting.is_empty() {
            ending.done.notify_one();
        }
    }
}

/// The active sessions as providers see them.
pub(crate) fn active_sessions(state: &State) -> Vec<SessionInfo> {
    state
        .session_order
        .iter()
        .filter_map(|id| state.sessions.get(id))
        .map(|s| s.info.clone())
        .collect()
}

//! Tool-set changes reach the session host debounced: a burst of connects, updates and
//! disconnects becomes one `session.tools` message (the spec's reload debounce).

use crate::state::Core;
use std::sync::Arc;
use tap_protocol::host::{HostEvent, SessionTools};
use tap_protocol::limits::TOOLSET_DEBOUNCE_MAX_WAIT;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub(crate) fn spawn_debouncer(
    core: &Arc<Core>,
    session_id: String,
    changed: Arc<Notify>,
    cancel: CancellationToken,
) {
    let core2 = core.clone();
    let quiet = core.config.toolset_debounce;
    core.tasks.spawn(async move {
        loop {
            tokio::select! {
                _ = changed.notified() => {}
                _ = cancel.cancelled() => return,
            }
            // Trailing debounce: wait for `quiet` without changes, but never longer than
            // the max wait, so a steady trickle of changes still gets published.
            let first = Instant::now();
            loop {
                let left = TOOLSET_DEBOUNCE_MAX_WAIT.saturating_sub(first.elapsed());
                tokio::select! {
                    _ = changed.notified() => continue,
                    _ = tokio::time::sleep(quiet.min(left)) => break,
                    _ = cancel.cancelled() => return,
                }
            }
            publish(&core2, &session_id);
        }
    });
}

fn publish(core: &Core, session_id: &str) {
    let default_timeout = core.config.default_tool_timeout;
    let mut state = core.state();
    let Some(session) = state.sessions.get_mut(session_id) else {
        return;
    };
    session.tool_revision += 1;
    session.watchers.send_replace(());
    let msg = HostEvent::SessionTools(SessionTools {
        session_id: session_id.to_string(),
        revision: session.tool_revision,
        tools: session.host_tools(default_timeout),
    });
    let host = session.host.clone();
    tracing::debug!(session = %session_id, revision = session.tool_revision, "tool set published");
    if let Some(h) = state.hosts.get_mut(&host) {
        h.send(&msg);
    }
    // The host has the tools now: the updates waiting for that are acknowledged.
    crate::providers::acks::ack_published(&mut state, session_id);
    drop(state);
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
}

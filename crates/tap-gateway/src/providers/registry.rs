//! Changes to the provider registry that span sessions, under the state lock: leaving a
//! session (unbind, detach), an `"all"` provider leaving one session, and closing a
//! connection on the user's request.

use crate::state::binding::ALL;
use crate::state::provider_entry::Phase;
use crate::state::{Core, State};
use std::sync::Arc;

/// Takes a provider out of its session, if it is bound: it becomes Unbound (still
/// connected), its tools leave the session, and its calls there are cancelled (the provider
/// gets `tool.cancel` with `reason`). Returns the session it was bound to.
pub(crate) fn unbind_provider(
    state: &mut State,
    provider_id: &str,
    reason: &str,
) -> Option<String> {
    let entry = state.providers.get_mut(provider_id)?;
    let sessions = entry.bound_sessions();
    let was_all = entry.all.take().is_some();
    let single = entry.session.take();
    if single.is_none() && !was_all {
        return None;
    }
    entry.phase = Phase::Unbound;
    // Hook rules are per (provider, session): they leave with the binding.
    entry.hooks = Arc::default();
    entry.updates.clear();
    let link = entry.link.clone();
    // Spec "Rebinding" step 2: in-flight gate checks and transform requests go too.
    link.gates.cancel_pending();
    state.transforms.cancel_pending(provider_id);
    for sid in &sessions {
        link.cancel_calls_in(
            sid,
            &format!("Provider left session '{sid}' ({reason})"),
            reason,
        );
        state.transforms.forget_session(provider_id, sid);
        let pending = super::acks::take_pending(state, provider_id, sid);
        super::acks::abandon_acks(
            state,
            sid,
            pending,
            &format!("Left session '{sid}' ({reason}) before the update reached it"),
        );
        detach(state, provider_id, sid);
    }
    single.or_else(|| was_all.then(|| ALL.to_string()))
}

/// Removes a provider from a session's bound list, rebuilds the session's tools, and lets
/// a pending shutdown proceed without it.
pub(crate) fn detach(state: &mut State, provider_id: &str, session_id: &str) {
    let State {
        sessions,
        providers,
        ..
    } = state;
    if let Some(session) = sessions.get_mut(session_id) {
        session.bound.retain(|p| p != provider_id);
        // A provider that left has no acknowledgment coming here (one that rebinds was
        // answered by `unbind_provider` first).
        session
            .pending_acks
            .retain(|a| a.provider_id != provider_id);
        session.rebuild_tools(providers);
    }
    crate::state::session::release_shutdown(state, provider_id, session_id);
}

/// An `"all"` provider leaves one session (it ended): its registration there goes,
/// it stays bound to the others.
pub(crate) fn leave_all_session(state: &mut State, provider_id: &str, session: &str) {
    if let Some(p) = state.providers.get_mut(provider_id) {
        if let Some(all) = p.all.as_mut() {
            all.sessions.remove(session);
        }
        p.updates.remove(session);
    }
    state.transforms.forget_session(provider_id, session);
}

/// Closes the connection of the authenticated provider `id` (its calls in flight fail
/// with `DISCONNECTED`, as on any disconnect). `false` when no such provider is
/// connected.
pub(crate) fn disconnect(core: &Core, id: &str) -> bool {
    let state = core.state();
    let Some(p) = state.providers.get(id) else {
        return false;
    };
    p.link.kill.cancel();
    tracing::info!(provider = %id, "provider disconnected by the user");
    true
}

//! The revision barrier's bookkeeping under the state lock (see `connection::updates`):
//! `tools.update`s waiting for their session's next tool-set publish are acknowledged
//! after it, or answered with an error when they never will be.

use crate::state::binding::PendingAck;
use crate::state::State;
use tap_protocol::provider::{Ack, ErrorMessage, GatewayMessage};
use tap_protocol::ErrorCode;

/// The `replyTo` of an abandoned update and the in-flight mark of a pending one.
pub(crate) const TOOLS_UPDATE: &str = "tools.update";

/// After a session's tool set went to its host: acknowledges every `tools.update` that was
/// waiting for it (each with its (provider, session)'s next revision).
pub(crate) fn ack_published(state: &mut State, session_id: &str) {
    let Some(session) = state.sessions.get_mut(session_id) else {
        return;
    };
    for ack in std::mem::take(&mut session.pending_acks) {
        let Some(p) = state.providers.get_mut(&ack.provider_id) else {
            continue; // disconnected meanwhile: nobody to tell
        };
        let u = p.updates_in(session_id);
        u.in_flight.retain(|k| *k != TOOLS_UPDATE);
        u.revision += 1;
        let revision = u.revision;
        p.link.send(&GatewayMessage::Ack(Ack {
            request_id: ack.request_id,
            session_id: session_id.to_string(),
            revision,
        }));
    }
}

/// Answers `tools.update`s that will never be published in `session_id` (the session ended,
/// or the provider left it): `error INVALID_SESSION` with their `requestId`.
pub(crate) fn abandon_acks(state: &State, session_id: &str, acks: Vec<PendingAck>, why: &str) {
    for ack in acks {
        let Some(p) = state.providers.get(&ack.provider_id) else {
            continue;
        };
        let mut e = ErrorMessage::new(ErrorCode::InvalidSession, why);
        e.reply_to = Some(TOOLS_UPDATE.into());
        e.request_id = Some(ack.request_id);
        e.provider_id = Some(ack.provider_id.clone());
        e.session_id = Some(session_id.to_string());
        p.link.send(&GatewayMessage::Error(e));
    }
}

/// Takes provider `provider_id`'s waiting acknowledgments out of `session_id` (it is
/// leaving the session), clearing its in-flight mark there.
pub(crate) fn take_pending(
    state: &mut State,
    provider_id: &str,
    session_id: &str,
) -> Vec<PendingAck> {
    let Some(session) = state.sessions.get_mut(session_id) else {
        return Vec::new();
    };
    let (mine, others) = std::mem::take(&mut session.pending_acks)
        .into_iter()
        .partition(|a| a.provider_id == provider_id);
    session.pending_acks = others;
    if let Some(u) = state
        .providers
        .get_mut(provider_id)
        .and_then(|p| p.updates.get_mut(session_id))
    {
        u.in_flight.retain(|k| *k != TOOLS_UPDATE);
    }
    mine
}

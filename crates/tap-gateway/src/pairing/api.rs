//! What the control plane (panel, tray, `tap pairing …`) does with pairings. Every change
//! is published as a [`GatewayEvent`].

use super::scope::{live, sessions_for};
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::ledger::record::{PairingAudit, Record};
use crate::providers::registry::unbind_provider;
use crate::socket::frame::frame;
use crate::state::pairing_registry::Stage;
use crate::state::Core;
use tap_protocol::pairing::PairingEntry;
use tap_protocol::provider::{ErrorMessage, GatewayMessage, Sessions};
use tap_protocol::ErrorCode;

/// No pairing has this id (or it is already gone): `NOT_FOUND`.
fn not_found(id: &str) -> Error {
    Error::new(ErrorCode::NotFound, format!("no pairing '{id}'"))
}

/// The session to limit a provider to is not registered (or is ending): `INVALID_SESSION`.
fn no_session(session: &str) -> Error {
    Error::new(
        ErrorCode::InvalidSession,
        format!("session '{session}' does not exist"),
    )
}

/// The pairing is not in a state the command applies to (deny a paired provider, revoke a
/// pending request): `UNAUTHORIZED`.
fn wrong_state(why: String) -> Error {
    Error::new(ErrorCode::Unauthorized, why)
}

/// Every pairing: pending requests first, then paired providers; newest first within
/// each. Pending entries carry their `code`.
pub(crate) fn list(core: &Core) -> Vec<PairingEntry> {
    core.state().pairing.list()
}

/// Refuses a pending request: its provider gets `AUTH_FAILED` and is disconnected.
/// Puts a pairing decision on the record (the ledger's `pairing_audit`): who did what to
/// which request, and when.
pub(crate) fn audit(
    core: &Core,
    action: &'static str,
    entry: (&str, Option<&str>, Option<&str>),
    by: &str,
) {
    let (pairing_id, name, origin) = entry;
    core.ledger.write_detached(Record::Pairing(PairingAudit {
        at: std::time::SystemTime::now(),
        action,
        pairing_id: pairing_id.to_string(),
        name: name.map(str::to_string),
        origin: origin.map(str::to_string),
        by: by.to_string(),
    }));
}

pub(crate) fn deny(core: &Core, id: &str) -> Result<(), Error> {
    {
        let mut state = core.state();
        let p = state.pairing.get(id).ok_or_else(|| not_found(id))?;
        if !p.is_pending() {
            return Err(wrong_state(format!(
                "'{id}' is already paired; revoke it instead"
            )));
        }
        let p = state.pairing.remove(id).expect("checked above");
        audit(
            core,
            "denied",
            (id, p.name.as_deref(), p.origin.as_deref()),
            "control",
        );
        if let Stage::Pending { link, .. } = p.stage {
            let mut e = ErrorMessage::new(ErrorCode::AuthFailed, "Pairing denied by the user");
            e.reply_to = Some("auth".into());
            core.diagnostics.note_provider_error(&e);
            link.send(&GatewayMessage::Error(e));
            link.kill.cancel();
        }
    }
    tracing::info!(pairing = %id, "pairing request denied");
    core.events.emit(GatewayEvent::PairingRemoved {
        id: id.to_string(),
        reason: "denied".into(),
    });
    Ok(())
}

/// Denies every pending request; returns how many there were.
pub(crate) fn deny_all(core: &Core) -> usize {
    let ids = core.state().pairing.pending_ids();
    ids.iter().filter(|id| deny(core, id).is_ok()).count()
}

/// Removes a paired provider: its token stops working (also across restarts) and
/// every connection holding it gets `AUTH_FAILED` and is closed.
pub(crate) fn revoke(core: &Core, id: &str) -> Result<(), Error> {
    let closed = {
        let mut state = core.state();
        let p = state.pairing.get(id).ok_or_else(|| not_found(id))?;
        if p.is_pending() {
            return Err(wrong_state(format!(
                "'{id}' is still pending; deny it instead"
            )));
        }
        if let Some(p) = state.pairing.remove(id) {
            audit(
                core,
                "revoked",
                (id, p.name.as_deref(), p.origin.as_deref()),
                "control",
            );
        }
        let mut closed = 0;
        for p in state.providers.values() {
            if p.pairing.as_deref() != Some(id) {
                continue;
            }
            let mut e = ErrorMessage::new(
                ErrorCode::AuthFailed,
                "Pairing revoked by the user; this token no longer works",
            );
            e.provider_id = Some(p.id.clone());
            e.session_id = p.session.clone();
            core.diagnostics.note_provider_error(&e);
            p.link.send(&GatewayMessage::Error(e));
            p.link.kill.cancel();
            closed += 1;
        }
        closed
    };
    save(core);
    tracing::info!(pairing = %id, connections = closed, "pairing revoked");
    core.events.emit(GatewayEvent::PairingRemoved {
        id: id.to_string(),
        reason: "revoked".into(),
    });
    Ok(())
}

/// Limits a pairing to `session` (which must be registered) and/or sets whether it is
/// remembered across restarts; `None` leaves a setting as it is. A connected provider
/// bound to another session is unbound at once (its calls there are cancelled) and
/// told with `error INVALID_SESSION`; it may `hello` again for the new session.
pub(crate) fn configure(
    core: &Core,
    id: &str,
    session: Option<String>,
    remember: Option<bool>,
) -> Result<PairingEntry, Error> {
    let mut unbound = false;
    let entry = {
        let mut state = core.state();
        if state.pairing.get(id).is_none() {
            return Err(not_found(id));
        }
        if let Some(s) = &session {
            if !live(&state, s) {
                return Err(no_session(s));
            }
        }
        let p = state.pairing.get_mut(id).expect("checked above");
        let was_remembered = p.remember;
        if let Some(s) = &session {
            p.session = Some(s.clone());
        }
        if let Some(r) = remember {
            p.remember = r;
        }
        let entry = p.entry();
        state.pairing.touched(id, was_remembered);
        if let Some(s) = &session {
            // Connections holding this pairing's token: one bound elsewhere leaves
            // that session now; each gets the session list as it may now see it.
            let holders: Vec<String> = state
                .providers
                .values()
                .filter(|p| p.pairing.as_deref() == Some(id))
                .map(|p| p.id.clone())
                .collect();
            let active = sessions_for(&state, Some(id));
            for pid in holders {
                let elsewhere = state.providers[&pid]
                    .session
                    .as_ref()
                    .is_some_and(|b| b != s);
                let old = if elsewhere {
                    unbind_provider(&mut state, &pid, "pairing changed")
                } else {
                    None
                };
                let p = &state.providers[&pid];
                if let Some(old) = old {
                    unbound = true;
                    let mut e = ErrorMessage::new(
                        ErrorCode::InvalidSession,
                        format!(
                            "The user limited this provider to session '{s}'; it is no longer bound to '{old}'"
                        ),
                    );
                    e.provider_id = Some(pid.clone());
                    e.session_id = Some(old);
                    core.diagnostics.note_provider_error(&e);
                    p.link.send(&GatewayMessage::Error(e));
                }
                let _ = p
                    .link
                    .out
                    .send(frame(&GatewayMessage::SessionsUpdated(Sessions {
                        token: None,
                        active: active.clone(),
                    })));
            }
        }
        entry
    };
    save(core);
    if unbound {
        core.events.emit(GatewayEvent::StatusChanged);
    }
    core.events
        .emit(GatewayEvent::PairingChanged(Box::new(entry.clone())));
    Ok(entry)
}

/// Writes the remembered pairings if they changed. Call it after releasing the state
/// lock: the snapshot is taken under that lock, the file is written outside it, and
/// writers are serialized so the file always ends up holding the latest snapshot.
pub(crate) fn save(core: &Core) {
    let store = &core.pairing;
    let _writing = store.writing.lock().unwrap_or_else(|e| e.into_inner());
    let records = {
        let mut state = core.state();
        if !state.pairing.dirty {
            return;
        }
        state.pairing.dirty = false;
        state.pairing.remembered()
    };
    if let Err(e) = store.write(records) {
        tracing::warn!(path = %store.path.display(), error = %e, "cannot write remembered pairings");
        core.state().pairing.dirty = true;
    }
}

//! Pairing of external providers (spec: "External providers"): a browser tab or a script
//! that holds no token asks with `auth {mode: "pair"}`, the user reads a 6-digit code from
//! the gateway's own surfaces (tray, panel, `tap pairing list`) and types it into the
//! provider, which sends it back in `auth.confirm`. The code never travels over the
//! provider's socket. A confirmed provider gets an `ext-…` token (trust "external") that
//! works until it is revoked or the gateway stops, or, if the user chose to remember it,
//! across restarts (only its SHA-256 hash is stored).
//!
//! - `registry`: pending requests and paired providers. It lives in the gateway's
//!   [`State`], so pairing decisions and the provider registry change under one lock:
//!   a revoke cannot miss a connection that is authenticating at the same moment.
//! - `store`: `$TAP_HOME/paired-providers.json`, the remembered pairings.
//! - `api`: what the control plane calls (list, deny, revoke, configure).
//! - `provider`: the provider-side steps the connection task calls.
//!
//! Session scope: an external provider may bind to one session, its pairing's `session`.
//! By default that is the foreground session when the code is confirmed. When that
//! session is gone (ended, or after a gateway restart) the provider may bind to whatever
//! session is in the foreground at its next `hello`, and is pinned there again.

mod api;
mod provider;
mod registry;
mod store;

pub use api::PairingError;
pub(crate) use provider::{bound, check_hello, external_capabilities, hooks_update_allowed};
pub(crate) use registry::{hash_token, Registry, Request};
pub(crate) use store::{Store, FILE_NAME as STORE_FILE_NAME};

use crate::gateway::State;
use crate::sessions::lifecycle::active_sessions;
use tap_protocol::provider::SessionInfo;

/// The `prompt` of `auth.pairing`.
pub(crate) const PROMPT: &str =
    "Enter the pairing code shown by Tap (tray popup, control panel, or `tap pairing list`)";

/// Longest `name` a pairing request may carry (an extension field of `auth`).
pub(crate) const MAX_NAME_CHARS: usize = 128;

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

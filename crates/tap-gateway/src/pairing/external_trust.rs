//! The external trust level's rules on the provider side (spec: "Provider capabilities").
//! The connection task calls these; the ones taking `State` run under the state lock.

use super::scope::allowed_session;
use crate::error::Error;
use crate::state::State;
use tap_protocol::pairing::PairingEntry;
use tap_protocol::provider::{Hello, Hooks, HooksUpdate, TransformAction};
use tap_protocol::ErrorCode;

type Refusal = Error;

/// The `prompt` of `auth.pairing`.
pub(crate) const PROMPT: &str =
    "Enter the pairing code shown by Tap (tray popup, control panel, or `tap pairing list`)";

fn unauthorized(what: &str) -> Refusal {
    Error::new(
        ErrorCode::Unauthorized,
        format!("{what} needs project trust; paired (external) providers may register tools, push and read their own streams"),
    )
}

/// What an external provider may not put in `hello`: ambient or startup context, hook
/// rules, transforms other than static `append`, and subscriptions to anything but tool
/// events.
pub(crate) fn external_capabilities(h: &Hello) -> Result<(), Refusal> {
    if h.context.is_some() {
        return Err(unauthorized("'context'"));
    }
    if h.startup_context.is_some() {
        return Err(unauthorized("'startup_context'"));
    }
    if let Some(hooks) = &h.hooks {
        check_hooks(hooks)?;
    }
    if let Some(bad) = h
        .subscribe
        .iter()
        .flatten()
        .find(|e| !e.starts_with("tool."))
    {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!("Paired (external) providers may subscribe to tool events only, not '{bad}'"),
        ));
    }
    Ok(())
}

fn check_hooks(hooks: &Hooks) -> Result<(), Refusal> {
    if hooks
        .on_pre_tool_use
        .as_ref()
        .is_some_and(|r| !r.is_empty())
    {
        return Err(unauthorized("Hook rules"));
    }
    check_transforms(hooks.transforms.iter().flatten().map(|(_, t)| t))
}

fn check_transforms<'a>(
    mut transforms: impl Iterator<Item = &'a Option<tap_protocol::provider::Transform>>,
) -> Result<(), Refusal> {
    match transforms.find(|t| {
        t.as_ref()
            .is_some_and(|t| t.action != TransformAction::Append)
    }) {
        Some(_) => Err(unauthorized("A transform other than a static 'append'")),
        None => Ok(()),
    }
}

/// `hooks.update` from an external provider: refused where it asks for what the
/// capability matrix forbids.
pub(crate) fn hooks_update_allowed(u: &HooksUpdate) -> Result<(), Refusal> {
    if u.on_pre_tool_use.as_ref().is_some_and(|r| !r.is_empty()) {
        return Err(unauthorized("Hook rules"));
    }
    check_transforms(u.transforms.iter().flatten().map(|(_, t)| t))
}

/// Whether the paired provider may bind `session` under `name`.
pub(crate) fn check_hello(
    state: &State,
    pairing_id: &str,
    session: &str,
    name: &str,
) -> Result<(), Refusal> {
    let Some(p) = state.pairing.get(pairing_id) else {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            "This provider's pairing was revoked",
        ));
    };
    // Spec "Identity protection": the identity is bound to the issued token.
    if let Some(bound) = p.name.as_deref().filter(|n| *n != name) {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!("This token was issued to provider '{bound}', not '{name}'"),
        ));
    }
    match allowed_session(state, pairing_id) {
        Some(allowed) if allowed == session => Ok(()),
        Some(allowed) => Err(Error::new(
            ErrorCode::InvalidSession,
            format!("This provider is paired to session '{allowed}' only; it may not bind to '{session}'"),
        )),
        None => Err(Error::new(
            ErrorCode::InvalidSession,
            format!("This provider may bind only to its paired session or the foreground session, and neither is open; '{session}' is not allowed"),
        )),
    }
}

/// After a successful bind: the pairing is pinned to that session and takes the name.
/// Returns the changed entry, if anything changed.
pub(crate) fn bound(
    state: &mut State,
    pairing_id: &str,
    session: &str,
    name: &str,
) -> Option<PairingEntry> {
    let p = state.pairing.get_mut(pairing_id)?;
    if p.session.as_deref() == Some(session) && p.name.as_deref() == Some(name) {
        return None;
    }
    p.session = Some(session.to_string());
    p.name = Some(name.to_string());
    let entry = p.entry();
    let remembered = p.remember;
    state.pairing.touched(pairing_id, remembered);
    Some(entry)
}

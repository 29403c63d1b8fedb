//! Claiming an identity at `hello` (spec: "Identity protection", "Reconnect protocol"):
//! refused while another connection holds it, taken over with a valid reconnect token,
//! and what such a takeover restores of the old binding's declaration.

use super::validate::Invalid;
use crate::error::Error;
use crate::state::identity::{key, Held, Kept};
use crate::state::provider_entry::ProviderEntry;
use crate::state::State;
use tap_protocol::provider::Hello;
use tap_protocol::ErrorCode;
use tokio::time::Instant;

/// Under the state lock, before a `hello` from connection `id` binds: checks the claimed
/// identity. Without a valid token, an identity held by another connected provider is
/// refused with `DUPLICATE_INSTANCE`. With a valid token the identity is taken over: the
/// old connection (if still open) is closed, its calls fail `DISCONNECTED`, and this
/// connection's registry entry moves to the old `providerId`, which is returned.
pub(crate) fn claim(state: &mut State, id: &str, h: &Hello) -> Result<Option<String>, Invalid> {
    let now = Instant::now();
    state.identity.sweep(now);
    let k = key(&h.name, h.instance.as_deref());
    // This connection may hold another identity from an earlier bind: it lets go of it.
    state
        .identity
        .held
        .retain(|hk, held| held.provider_id != id || *hk == k);
    let Some(held) = state.identity.held.get(&k) else {
        return Ok(None);
    };
    if held.provider_id == id {
        return Ok(None);
    }
    let valid = h
        .reconnect_token
        .as_deref()
        .is_some_and(|t| crate::auth::tokens::matches(t, &held.token));
    let old = held.provider_id.clone();
    if !valid {
        if state.providers.contains_key(&old) {
            let instance = h
                .instance
                .as_deref()
                .map(|i| format!(" instance '{i}'"))
                .unwrap_or_default();
            return Err(Error::new(
                ErrorCode::DuplicateInstance,
                format!(
                    "Provider '{}'{instance} is already connected; a reconnect needs the reconnectToken from its hello.ack",
                    h.name
                ),
            ));
        }
        // The holder is gone and the token does not match: a fresh hello.
        state.identity.held.remove(&k);
        return Ok(None);
    }
    // Take over: the old connection (if open) goes, as if it had disconnected.
    if let Some(gone) = state.providers.remove(&old) {
        state.transforms.forget(&old);
        for sid in gone.bound_sessions() {
            super::registry::detach(state, &old, &sid);
        }
        gone.link.calls.close(&format!(
            "Provider '{}' reconnected on a new connection before answering",
            h.name
        ));
        gone.link.gates.close();
        gone.link.kill.cancel();
        if let Some(pid) = gone.pairing.as_deref() {
            let _ = state.pairing.disconnected(pid);
        }
    }
    let mut entry: ProviderEntry = state.providers.remove(id).expect("caller checked");
    state.transforms.forget(id);
    entry.id = old.clone();
    state.providers.insert(old.clone(), entry);
    // Held again by a live connection (the token stays until the next `hello.ack`).
    if let Some(held) = state.identity.held.get_mut(&k) {
        held.expires = None;
        held.kept = None;
    }
    Ok(Some(old))
}

/// After a successful bind: records the identity and issues a fresh reconnect token.
pub(crate) fn issue(state: &mut State, id: &str, h: &Hello, session: &str) -> String {
    let token = crate::auth::tokens::generate("rtk-");
    state.identity.held.insert(
        key(&h.name, h.instance.as_deref()),
        Held {
            provider_id: id.to_string(),
            token: token.clone(),
            session: Some(session.to_string()),
            expires: None,
            kept: None,
        },
    );
    token
}

/// Provider `id`'s declaration as it stands now (after its updates): for an `"all"`
/// binding the template later sessions get, else its one session's. Taken while the entry
/// and its transforms are still in the state.
pub(crate) fn keep(state: &State, id: &str) -> Kept {
    let Some(p) = state.providers.get(id) else {
        return Kept::default();
    };
    let (tools, hooks, transforms, context) = match &p.all {
        Some(all) => (
            all.template.tools.clone(),
            all.template.hooks.clone(),
            (all.template.transforms.iter().flatten())
                .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
                .collect(),
            all.template.context.clone(),
        ),
        None => {
            let (transforms, context) = p
                .session
                .as_deref()
                .map(|sid| state.transforms.prompt_of(id, sid))
                .unwrap_or_default();
            (p.tools.clone(), p.hooks.clone(), transforms, context)
        }
    };
    Kept {
        tools,
        hooks,
        transforms,
        context,
        subscribe: p.subscribe.clone(),
        metadata: p.metadata.clone(),
        concurrency: state.limits.declared(id),
    }
}

/// Before a `hello` from connection `id` is checked: when it carries a valid reconnect
/// token for an identity another connection held (open or gone within the token's
/// validity), the old binding's declaration, else `None`. The fields the `hello` leaves
/// out are then taken from it: `session`, `tools`, `hooks.onPreToolUse`,
/// `hooks.transforms`, `context`, `subscribe`, `metadata`, `concurrency` (decision I3).
/// `claim` checks the token again under the lock that binds.
pub(crate) fn restorable(state: &State, id: &str, h: &Hello) -> Option<Kept> {
    let held = state
        .identity
        .held
        .get(&key(&h.name, h.instance.as_deref()))?;
    let token = h.reconnect_token.as_deref()?;
    if held.provider_id == id
        || !held.live(Instant::now())
        || !crate::auth::tokens::matches(token, &held.token)
    {
        return None;
    }
    match state.providers.get(&held.provider_id) {
        // The old connection is still open: its declaration now.
        Some(_) => Some(keep(state, &held.provider_id)),
        None => held.kept.clone(),
    }
}

/// Fills the fields `h` leaves out from `kept` (the raw ones; tools and rules are taken
/// compiled by the caller).
pub(crate) fn fill(h: &mut Hello, kept: &Kept) {
    if h.context.is_none() {
        h.context = kept.context.clone();
    }
    if h.subscribe.is_none() && !kept.subscribe.is_empty() {
        h.subscribe = Some(kept.subscribe.clone());
    }
    if h.metadata.is_none() {
        h.metadata = kept.metadata.clone();
    }
    if h.concurrency.is_none() {
        h.concurrency = kept.concurrency.clone();
    }
    let omitted = h.hooks.as_ref().is_none_or(|k| k.transforms.is_none());
    if omitted && !kept.transforms.is_empty() {
        h.hooks.get_or_insert_with(Default::default).transforms = Some(
            (kept.transforms.iter())
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
        );
    }
}

//! Provider identity (spec: "Provider identity", "Identity protection", "Reconnect
//! protocol"): `name` + `instance` is unique among connected providers; `hello.ack`
//! carries a `reconnectToken` that lets a new connection take the identity over (same
//! `providerId`, old connection closed) while it is valid. Tokens live only in memory and
//! are never logged (claiming one is in `reconnect`). Also `persistDir` for project
//! providers.

use super::provider_entry::Trust;
use crate::patterns::rules::CompiledRule;
use crate::state::tool_schema::ToolList;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tap_protocol::limits::RECONNECT_TOKEN_TTL;
use tap_protocol::provider::{Concurrency, Hello, Transform};
use tap_protocol::JsonObject;
use tokio::time::Instant;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::identity";

/// `(name, instance)`; an absent instance is the empty one.
pub(crate) type Key = (String, String);

pub(crate) fn key(name: &str, instance: Option<&str>) -> Key {
    (name.to_string(), instance.unwrap_or_default().to_string())
}

pub(crate) struct Held {
    pub provider_id: String,
    /// The last issued reconnect token (compared in constant time).
    pub token: String,
    /// The session of the last successful bind, restored on reconnect.
    pub session: Option<String>,
    /// Set when the holder disconnects: the token is valid until then.
    pub expires: Option<Instant>,
    /// The holder's declaration as it stood when it disconnected (set with `expires`,
    /// dropped with the token): what a reconnect that omits a field gets back.
    pub kept: Option<Kept>,
}

/// A binding's declaration, as it stands after the updates since its `hello` (spec
/// "Reconnect protocol" step 2: "restores provider binding (session, tools, hooks)").
/// Tools and rules are kept compiled; a reconnect reuses them as they are.
#[derive(Clone, Default)]
pub(crate) struct Kept {
    pub tools: Arc<ToolList>,
    pub hooks: Arc<Vec<CompiledRule>>,
    pub transforms: BTreeMap<String, Transform>,
    pub context: Option<String>,
    pub subscribe: Vec<String>,
    pub metadata: Option<JsonObject>,
    pub concurrency: Option<Concurrency>,
}

impl Held {
    pub fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|t| now < t)
    }
}

/// Identities held by connected providers, and those kept for a reconnect.
#[derive(Default)]
pub(crate) struct Identities {
    pub(crate) held: HashMap<Key, Held>,
}

impl Identities {
    pub(crate) fn sweep(&mut self, now: Instant) {
        self.held.retain(|_, h| h.live(now));
    }

    /// The remembered session for a `hello` that carries a valid token but no `session`.
    pub fn remembered_session(&self, h: &Hello) -> Option<String> {
        let held = self.held.get(&key(&h.name, h.instance.as_deref()))?;
        let token = h.reconnect_token.as_deref()?;
        (held.live(Instant::now()) && crate::auth::tokens::matches(token, &held.token))
            .then(|| held.session.clone())
            .flatten()
    }

    /// The holder went away: its token stays valid for `RECONNECT_TOKEN_TTL`, and so does
    /// its declaration (`kept`, taken by the caller before the entry went).
    pub fn disconnected(&mut self, provider_id: &str, kept: Kept) {
        let until = Instant::now() + RECONNECT_TOKEN_TTL;
        for h in self.held.values_mut() {
            if h.provider_id == provider_id && h.expires.is_none() {
                h.expires = Some(until);
                h.kept = Some(kept.clone());
            }
        }
    }
}

/// Keeps only `[A-Za-z0-9._-]` and strips leading dots, so the result is one path
/// component inside the providers directory (never `.`, `..` or hidden).
pub(crate) fn sanitize(name: &str) -> String {
    let kept: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = kept.trim_start_matches('.');
    if trimmed.is_empty() {
        "_".to_string()
    } else {
        trimmed.to_string()
    }
}

/// `<data_dir>/providers/<sanitized name>/`, created with mode 0700, for local (project and
/// internal) providers.
pub(crate) fn persist_dir(data_dir: &Path, trust: Trust, name: &str) -> Option<String> {
    if trust == Trust::External {
        return None;
    }
    let dir: PathBuf = data_dir.join("providers").join(sanitize(name));
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    if let Err(e) = b.create(&dir) {
        tracing::warn!(target: LOG_TARGET, dir = %dir.display(), error = %e, "cannot create persistDir");
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    let mut s = dir.to_string_lossy().into_owned();
    s.push(std::path::MAIN_SEPARATOR);
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn sanitize_keeps_one_safe_component() {
        assert_eq!(sanitize("my-provider"), "my-provider");
        assert_eq!(sanitize("../../etc"), "_.._etc");
        assert_eq!(sanitize(".."), "_");
        assert_eq!(sanitize(".hidden"), "hidden");
        assert_eq!(sanitize("a/b\\c d"), "a_b_c_d");
        assert_eq!(sanitize("tab.v1_x"), "tab.v1_x");
    }
}

//! The registry's view of an authenticated provider connection: what the rest of the
//! gateway reads about it under the state lock.

use super::binding::{AllBinding, UpdateState, Updates};
use super::link::ProviderLink;
use crate::patterns::rules::CompiledRule;
use crate::state::tool_schema::ToolList;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tap_protocol::provider::ToolDef;

/// Trust level of a provider (spec: "Trust levels").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// In-process, through `LocalProvider` (the spec's LocalProviderTransport): every
    /// capability, including binding to `"all"` and reading other providers' streams.
    Internal,
    /// Holds the gateway token or a per-provider token.
    Project,
    /// Paired by the user (`auth {mode: "pair"}`) and holding the issued `ext-…` token:
    /// tools, push and own streams only, in one session (see `crate::pairing`).
    External,
}

impl Trust {
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Internal => "internal",
            Trust::Project => "project",
            Trust::External => "external",
        }
    }
}

/// Where a connection stands after authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Authenticated; `hello` expected.
    AwaitHello,
    /// Registered in a session.
    Bound,
    /// Was bound; its session ended or a rebind failed. `hello` or `goodbye` expected.
    Unbound,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::AwaitHello => "awaitHello",
            Phase::Bound => "bound",
            Phase::Unbound => "unbound",
        }
    }
}

/// The registry's view of an authenticated provider connection.
pub(crate) struct ProviderEntry {
    pub id: String,
    pub name: Option<String>,
    pub instance: Option<String>,
    /// `hello.metadata`: shown by `list_<name>_instances` and in a shared tool's `target`.
    pub metadata: Option<tap_protocol::JsonObject>,
    pub trust: Trust,
    pub phase: Phase,
    pub session: Option<String>,
    pub tools: Arc<ToolList>,
    /// `onPreToolUse` rules for the bound session, in registration order.
    pub hooks: Arc<Vec<CompiledRule>>,
    /// Session event names from `hello.subscribe` (see `sessions::events`).
    pub subscribe: Vec<String>,
    pub link: ProviderLink,
    pub remote: SocketAddr,
    pub connected_at: SystemTime,
    /// The pairing whose token this connection authenticated with (trust external).
    pub pairing: Option<String>,
    /// The session whose project-provider token this connection authenticated with
    /// (`tap.config.json`): the only session it may see and bind to.
    pub scope: Option<String>,
    /// Set while bound to `"all"` (then `session` is `None`); see `binding`.
    pub all: Option<AllBinding>,
    /// Revision and in-flight updates per bound session.
    pub updates: Updates,
}

impl ProviderEntry {
    /// The gateway-enforced timeout of one of this provider's tools.
    pub fn timeout_of(def: &ToolDef, default: Duration) -> Duration {
        def.timeout.map(Duration::from_millis).unwrap_or(default)
    }
}

impl ProviderEntry {
    /// Whether the provider is registered in `session` (as its one session, or as one of
    /// an `"all"` binding's ready sessions).
    pub fn is_bound_to(&self, session: &str) -> bool {
        self.session.as_deref() == Some(session)
            || self
                .all
                .as_ref()
                .is_some_and(|a| a.sessions.contains_key(session))
    }

    /// Every session the provider is registered in.
    pub fn bound_sessions(&self) -> Vec<String> {
        match &self.all {
            Some(a) => a.sessions.keys().cloned().collect(),
            None => self.session.iter().cloned().collect(),
        }
    }

    /// The provider's tools in `session` (empty where it is not registered).
    pub fn tools_in(&self, session: &str) -> Arc<ToolList> {
        match &self.all {
            Some(a) => a
                .sessions
                .get(session)
                .map(|b| b.tools.clone())
                .unwrap_or_default(),
            None if self.session.as_deref() == Some(session) => self.tools.clone(),
            None => Arc::default(),
        }
    }

    /// The provider's hook rules in `session`.
    pub fn hooks_in(&self, session: &str) -> Arc<Vec<CompiledRule>> {
        match &self.all {
            Some(a) => a
                .sessions
                .get(session)
                .map(|b| b.hooks.clone())
                .unwrap_or_default(),
            None if self.session.as_deref() == Some(session) => self.hooks.clone(),
            None => Arc::default(),
        }
    }

    /// Replaces the provider's tools in `session`.
    pub fn set_tools_in(&mut self, session: &str, tools: Arc<ToolList>) {
        match &mut self.all {
            Some(a) => {
                if let Some(b) = a.sessions.get_mut(session) {
                    b.tools = tools;
                }
            }
            None => self.tools = tools,
        }
    }

    /// Replaces the provider's hook rules in `session`.
    pub fn set_hooks_in(&mut self, session: &str, hooks: Arc<Vec<CompiledRule>>) {
        match &mut self.all {
            Some(a) => {
                if let Some(b) = a.sessions.get_mut(session) {
                    b.hooks = hooks;
                }
            }
            None => self.hooks = hooks,
        }
    }

    /// The update state of (this provider, `session`), created on first use.
    pub fn updates_in(&mut self, session: &str) -> &mut UpdateState {
        self.updates.entry(session.to_string()).or_default()
    }
}

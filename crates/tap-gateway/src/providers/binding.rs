//! What a provider holds in each session it is registered in.
//!
//! A provider bound to one session keeps its tools and hook rules on its
//! [`ProviderEntry`] (`session`, `tools`, `hooks`). A provider bound to `"all"` (internal
//! trust only) has `all`: the declarations of its `hello` (the template registered in a
//! session when the provider sends `session.ready` for it) and, per session where it is
//! registered, its own copy, which `tools.update` / `hooks.update` with a `sessionId`
//! change for that session alone. Transforms and context live in `transforms::Registry`,
//! keyed by (provider, session) the same way.
//!
//! Update acknowledgments are per (provider, session) too: `updates` holds each session's
//! revision counter and the update kinds in flight.

use super::ProviderEntry;
use crate::hooks::CompiledRule;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tap_protocol::provider::{FilterSet, ToolDef, Transform};

/// A provider's registration in one session.
#[derive(Clone, Default)]
pub(crate) struct SessionBinding {
    pub tools: Arc<Vec<ToolDef>>,
    pub hooks: Arc<Vec<CompiledRule>>,
}

/// What an `"all"` provider's `hello` declared; registered as is in each session it
/// becomes ready for.
#[derive(Clone, Default)]
pub(crate) struct Template {
    pub tools: Arc<Vec<ToolDef>>,
    pub hooks: Arc<Vec<CompiledRule>>,
    pub transforms: Option<BTreeMap<String, Option<Transform>>>,
    pub context: Option<String>,
    pub startup_context: Option<String>,
}

/// A provider bound to `"all"`.
#[derive(Clone, Default)]
pub(crate) struct AllBinding {
    pub template: Template,
    /// Sessions it is registered in (it sent `session.ready`, or they were active at its
    /// `hello`), by id.
    pub sessions: BTreeMap<String, SessionBinding>,
    /// `filter.set`s without `sessionId`, by stream: set again in each session that
    /// becomes ready.
    pub filters: BTreeMap<String, FilterSet>,
}

/// Acknowledgment state of one (provider, session).
#[derive(Debug, Default)]
pub(crate) struct UpdateState {
    /// The revision of the last `ack` (0 before the first).
    pub revision: u64,
    /// Update kinds (`tools.update`, …) applied but not acknowledged yet.
    pub in_flight: Vec<&'static str>,
}

/// The `session` a bound-to-all provider shows in `status` and remembers for reconnects.
pub(crate) const ALL: &str = "all";

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
    pub fn tools_in(&self, session: &str) -> Arc<Vec<ToolDef>> {
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
    pub fn set_tools_in(&mut self, session: &str, tools: Arc<Vec<ToolDef>>) {
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

/// Per-session update states, keyed by session id.
pub(crate) type Updates = HashMap<String, UpdateState>;

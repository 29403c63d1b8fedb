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

use crate::patterns::rules::CompiledRule;
use crate::state::tool_schema::ToolList;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tap_protocol::provider::{FilterSet, Transform};

/// A provider's registration in one session.
#[derive(Clone, Default)]
pub(crate) struct SessionBinding {
    pub tools: Arc<ToolList>,
    pub hooks: Arc<Vec<CompiledRule>>,
}

/// What an `"all"` provider's `hello` declared; registered as is in each session it
/// becomes ready for.
#[derive(Clone, Default)]
pub(crate) struct Template {
    pub tools: Arc<ToolList>,
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

/// Per-session update states, keyed by session id.
pub(crate) type Updates = HashMap<String, UpdateState>;

/// A `tools.update` waiting in its session for the next tool-set publish (see
/// `connection::updates`).
pub(crate) struct PendingAck {
    pub provider_id: String,
    pub request_id: String,
}

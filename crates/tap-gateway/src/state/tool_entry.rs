//! One tool name of a session and who holds it (built by `tool_map`, read by
//! `tools::route`).

use super::instances;
use crate::state::link::ProviderLink;
use crate::state::provider_entry::ProviderEntry;
use crate::state::tool_schema::Schema;
use std::sync::Arc;
use tap_protocol::provider::ToolDef;

/// One tool name of a session.
pub(crate) struct ToolEntry {
    /// The definition the host sees. A shared tool shows the declaration of the most
    /// recently bound instance holding it (with `target` added when published). Shared with
    /// that provider's `ToolList`.
    pub def: Arc<ToolDef>,
    /// The provider name behind it (every holder has it); shared with the holders'
    /// [`Bearer`].
    pub provider_name: Arc<str>,
    pub kind: ToolKind,
}

pub(crate) enum ToolKind {
    /// One provider's own tool.
    Own(Holder),
    /// Declared by instances of one multi-instance provider, in bind order (never empty).
    Shared(Vec<Holder>),
    /// The generated `list_<name>_instances`, answered by the gateway itself.
    ListInstances,
    /// One of the gateway's built-in `tap_*` tools (`crate::builtin`).
    Builtin,
}

/// A provider connection holding tools in one session: built once per tool-map rebuild
/// and shared by every tool it holds there (and by the route of a call to one of them), so
/// a provider's ten tools cost one copy of its id, name and link, and routing a call
/// clones a pointer instead of strings.
pub(crate) struct Bearer {
    pub provider_id: String,
    pub provider_name: Arc<str>,
    /// Its `hello.instance` (set exactly for shared tools).
    pub instance: Option<String>,
    /// A short label from its `hello.metadata`, for the `target` description.
    pub label: Option<String>,
    pub link: ProviderLink,
}

impl Bearer {
    pub fn of(p: &ProviderEntry, provider_name: Arc<str>, shared: bool) -> Arc<Self> {
        Arc::new(Self {
            provider_id: p.id.clone(),
            provider_name,
            instance: p.instance.clone().filter(|_| shared),
            label: instances::label(p.metadata.as_ref()),
            link: p.link.clone(),
        })
    }
}

/// A provider connection holding a tool.
pub(crate) struct Holder {
    pub by: Arc<Bearer>,
    /// Its own declaration: its `timeout` applies to calls routed to it.
    pub def: Arc<ToolDef>,
    /// Its `parameters`, compiled: a call's `args` are checked against it.
    pub schema: Schema,
}

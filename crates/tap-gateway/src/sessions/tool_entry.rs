//! One tool name of a session and who holds it (built by `tool_map`, read by
//! `tools::route`).

use super::instances;
use crate::providers::entry::ProviderEntry;
use crate::providers::link::ProviderLink;
use crate::tools::schema::Schema;
use std::sync::Arc;
use tap_protocol::provider::ToolDef;

/// One tool name of a session.
pub(crate) struct ToolEntry {
    /// The definition the host sees. A shared tool shows the declaration of the most
    /// recently bound instance holding it (with `target` added when published). Shared with
    /// that provider's `ToolList`.
    pub def: Arc<ToolDef>,
    /// The provider name behind it (every holder has it).
    pub provider_name: String,
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

/// A provider connection holding a tool.
pub(crate) struct Holder {
    pub provider_id: String,
    /// Its `hello.instance` (set exactly for shared tools).
    pub instance: Option<String>,
    /// A short label from its `hello.metadata`, for the `target` description.
    pub label: Option<String>,
    /// Its own declaration: its `timeout` applies to calls routed to it.
    pub def: Arc<ToolDef>,
    /// Its `parameters`, compiled: a call's `args` are checked against it.
    pub schema: Schema,
    pub link: ProviderLink,
}

impl Holder {
    pub fn of(p: &ProviderEntry, def: &Arc<ToolDef>, schema: &Schema, shared: bool) -> Self {
        Self {
            provider_id: p.id.clone(),
            instance: p.instance.clone().filter(|_| shared),
            label: instances::label(p.metadata.as_ref()),
            def: def.clone(),
            schema: schema.clone(),
            link: p.link.clone(),
        }
    }
}

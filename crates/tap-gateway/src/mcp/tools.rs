//! `tools/list`: the session's live tool set as the session host sees it (`session.tools`:
//! the providers' tools and the gateway's built-in `tap_*` tools).

use super::errors::gateway_error;
use crate::state::mcp_binding::Binding;
use crate::state::Core;
use rmcp::model::{JsonObject, Tool};
use rmcp::ErrorData as McpError;
use std::sync::Arc;
use tap_protocol::Json;

pub(crate) fn list(core: &Core, binding: &Binding) -> Result<Vec<Tool>, McpError> {
    let host_tools = {
        let state = core.state();
        let session = state
            .live_session(&binding.session_id)
            .map_err(gateway_error)?;
        session.host_tools(core.config.default_tool_timeout)
    };
    let mut tools: Vec<Tool> = Vec::with_capacity(host_tools.len());
    for t in host_tools {
        let description = match t.description.is_empty() {
            true => format!("({})", t.provider),
            false => t.description,
        };
        tools.push(Tool::new(
            t.name,
            description,
            object(t.parameters.to_value()),
        ));
    }
    Ok(tools)
}

/// MCP wants an object schema; a provider's empty or non-object `parameters` means "any
/// object".
fn object(schema: Json) -> Arc<JsonObject> {
    let mut schema = match schema {
        Json::Object(o) => o,
        _ => JsonObject::new(),
    };
    schema
        .entry("type")
        .or_insert_with(|| Json::String("object".into()));
    Arc::new(schema)
}

/// Whether `name` is in the session's tool set.
pub(crate) fn exists(core: &Core, binding: &Binding, name: &str) -> Result<bool, McpError> {
    let state = core.state();
    let session = state
        .live_session(&binding.session_id)
        .map_err(gateway_error)?;
    Ok(session.tools.contains_key(name))
}

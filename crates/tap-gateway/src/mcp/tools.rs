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
        let tools = session.host_tools(core.config.default_tool_timeout);
        tools
            .into_iter()
            .map(|t| {
                let def = session.tools.get(&t.name).map(|e| e.def.clone());
                (t, def)
            })
            .collect::<Vec<_>>()
    };
    let mut tools: Vec<Tool> = Vec::with_capacity(host_tools.len());
    for (t, def) in host_tools {
        let description = match t.description.is_empty() {
            true => format!("({})", t.provider),
            false => t.description,
        };
        let mut tool = Tool::new(t.name, description, object(t.parameters.to_value()));
        if let Some(def) = def {
            // What an MCP server (or any provider) declared beyond the spec's fields goes
            // back to MCP clients as it came.
            if let Some(title) = &def.title {
                tool = tool.with_title(title.clone());
            }
            if let Some(a) = def
                .annotations
                .as_ref()
                .and_then(|a| serde_json::from_value(Json::Object(a.clone())).ok())
            {
                tool = tool.with_annotations(a);
            }
            if let Some(schema) = &def.output_schema {
                tool.output_schema = Some(Arc::new(schema.clone()));
            }
        }
        tools.push(tool);
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

/// Whether `name` is in the session's tool set (`None`: it is not), and whether its
/// results are MCP results to pass through unchanged.
pub(crate) fn exists(core: &Core, binding: &Binding, name: &str) -> Result<Option<bool>, McpError> {
    let state = core.state();
    let session = state
        .live_session(&binding.session_id)
        .map_err(gateway_error)?;
    // A held tool (`crate::pins`) goes on to the call path, which refuses it with a result
    // the model and the user read (how to accept the change), not as an unknown name.
    if session.held.contains_key(name) && !session.tools.contains_key(name) {
        return Ok(Some(false));
    }
    Ok(session
        .tools
        .get(name)
        .map(|e| e.def.result_format == Some(tap_protocol::provider::ResultFormat::Mcp)))
}

//! A server's tool list as a provider declares it: each MCP tool a `ToolDef` under its
//! session name, with its description, input schema, and (additions to the spec that MCP
//! clients get back unchanged) title, annotations, output schema and `resultFormat: "mcp"`.

use super::config::ServerSpec;
use super::naming::Names;
use rmcp::model::Tool;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tap_protocol::provider::{ResultFormat, ToolDef};
use tap_protocol::Json;

#[derive(Clone, Default)]
pub(crate) struct Catalog {
    /// As declared in `hello` / `tools.update`.
    pub defs: Vec<ToolDef>,
    /// Session name → the server's own name.
    to_server: Arc<HashMap<String, String>>,
    /// What was left out, in words.
    pub refused: Vec<String>,
}

impl Catalog {
    /// `taken`: names other providers (or the gateway) already hold in the sessions this
    /// server is for; such a tool is left out, with a warning, rather than refused with
    /// the whole list or shadowing the other.
    pub fn build(spec: &ServerSpec, tools: &[Tool], taken: &HashSet<String>) -> Self {
        let names = Names::new(&spec.name, spec.prefix.as_deref());
        let mapped = names.map(
            &spec.name,
            tools.iter().map(|t| t.name.as_ref()),
            &spec.disabled_tools,
        );
        let by_name: HashMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_ref(), t)).collect();
        let mut defs = Vec::with_capacity(mapped.kept.len());
        let mut to_server = HashMap::with_capacity(mapped.kept.len());
        let mut refused = mapped.refused;
        for (session_name, server_name) in mapped.kept {
            if taken.contains(&session_name) {
                refused.push(format!(
                    "MCP server '{}': tool '{server_name}' is left out: another provider already offers a tool named '{session_name}' (set a 'prefix' to tell them apart)",
                    spec.name
                ));
                continue;
            }
            let Some(tool) = by_name.get(server_name.as_str()) else {
                continue;
            };
            defs.push(def(&session_name, tool));
            to_server.insert(session_name, server_name);
        }
        Catalog {
            defs,
            to_server: Arc::new(to_server),
            refused,
        }
    }

    pub fn server_name(&self, session_name: &str) -> Option<String> {
        self.to_server.get(session_name).cloned()
    }

    pub fn session_names(&self) -> Vec<String> {
        self.defs.iter().map(|d| d.name.clone()).collect()
    }

    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// As kept between runs (`tool_cache.rs`): each tool's definition and server name.
    pub fn to_cache(&self) -> Json {
        let tools: Vec<Json> = self
            .defs
            .iter()
            .map(|d| serde_json::json!({"def": d, "server": self.to_server.get(&d.name)}))
            .collect();
        serde_json::json!({"tools": tools, "refused": self.refused})
    }

    pub fn from_cache(v: &Json) -> Option<Self> {
        let mut defs = Vec::new();
        let mut to_server = HashMap::new();
        for t in v.get("tools")?.as_array()? {
            let def: ToolDef = serde_json::from_value(t.get("def")?.clone()).ok()?;
            let server = t.get("server")?.as_str()?.to_string();
            to_server.insert(def.name.clone(), server);
            defs.push(def);
        }
        let refused = serde_json::from_value(v.get("refused")?.clone()).unwrap_or_default();
        Some(Catalog {
            defs,
            to_server: Arc::new(to_server),
            refused,
        })
    }
}

/// The tool's MCP fields, read through its JSON form so that every field the server sent
/// and rmcp keeps is carried, whatever rmcp's struct looks like.
fn def(session_name: &str, tool: &Tool) -> ToolDef {
    let value = serde_json::to_value(tool).unwrap_or(Json::Null);
    let field = |k: &str| value.get(k).cloned();
    let object = |k: &str| match field(k) {
        Some(Json::Object(o)) => Some(o),
        _ => None,
    };
    let parameters = match field("inputSchema") {
        Some(schema @ Json::Object(_)) => schema,
        _ => serde_json::json!({"type": "object"}),
    };
    ToolDef {
        name: session_name.to_string(),
        description: tool.description.as_deref().unwrap_or_default().to_string(),
        parameters: parameters.into(),
        timeout: None,
        title: field("title").and_then(|t| t.as_str().map(str::to_string)),
        annotations: object("annotations"),
        output_schema: object("outputSchema"),
        result_format: Some(ResultFormat::Mcp),
    }
}

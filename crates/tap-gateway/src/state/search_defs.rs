//! The search surface's two tools (`docs/clients.md`, "Search surface: what it costs"): a
//! session whose profile says `"surface": "search"` lists these beside the gateway's own
//! `tap_*` tools instead of every tool it may call. They are built-in tools (held by
//! [`super::builtin_defs::PROVIDER`], answered by `crate::builtin::search_tools`), present
//! only in such sessions.
//!
//! The descriptions are written for the model: what to pass, what comes back, and that the
//! two are used in turn.

use super::tool_schema::ToolList;
use crate::limits::{DEFAULT_FIND_RESULTS, MAX_FIND_QUERY_LEN, MAX_FIND_RESULTS};
use serde_json::json;
use std::sync::OnceLock;
use tap_protocol::limits::MAX_TOOL_NAME_LEN;
use tap_protocol::provider::ToolDef;
use tap_protocol::Json;

pub(crate) const FIND_TOOLS: &str = "tap_find_tools";
pub(crate) const CALL_TOOL: &str = "tap_call_tool";

fn all() -> Vec<ToolDef> {
    let def = |name: &str, description: String, parameters: serde_json::Value| ToolDef {
        name: name.to_string(),
        description,
        parameters: parameters.into(),
        ..Default::default()
    };
    vec![
        def(
            CALL_TOOL,
            format!("Calls a tool that {FIND_TOOLS} found: 'name' is its exact name, 'arguments' an object matching its inputSchema. Returns that tool's result or error."),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": MAX_TOOL_NAME_LEN, "description": "The tool's name, as tap_find_tools gave it."},
                    "arguments": {"type": "object", "description": "The tool's arguments (its inputSchema)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        def(
            FIND_TOOLS,
            format!("Searches this session's other tools (they are not listed, to save context). Give a few keywords for what you need (e.g. 'create issue', 'read file'); returns the best matches with name, description and inputSchema. Call one with {CALL_TOOL}. Nothing fits: search again with other words."),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_FIND_QUERY_LEN, "description": "Keywords."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_FIND_RESULTS, "description": format!("Tools to return (default {DEFAULT_FIND_RESULTS}).")}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
    ]
}

/// The two tools with their compiled schemas, built once (sorted by name).
pub(crate) fn tools() -> &'static ToolList {
    static TOOLS: OnceLock<ToolList> = OnceLock::new();
    TOOLS.get_or_init(|| ToolList::build(all(), &[]).expect("the search schemas compile"))
}

/// `tap_call_tool`'s target: the tool `args.name` and its `args.arguments` (`{}` when
/// absent), when `tool` is `tap_call_tool` and `args.name` is a string. Arguments that do
/// not fit its schema are refused by the call path before anything is called.
pub(crate) fn called<'a>(tool: &str, args: &'a Json) -> Option<(&'a str, &'a Json)> {
    static EMPTY: OnceLock<Json> = OnceLock::new();
    if tool != CALL_TOOL {
        return None;
    }
    let name = args.get("name")?.as_str()?;
    let arguments = args
        .get("arguments")
        .filter(|a| !a.is_null())
        .unwrap_or_else(|| EMPTY.get_or_init(|| Json::Object(Default::default())));
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn called_reads_the_target_of_tap_call_tool_only() {
        let args = json!({"name": "x", "arguments": {"a": 1}});
        assert_eq!(called(CALL_TOOL, &args), Some(("x", &json!({"a": 1}))));
        assert_eq!(called("other", &args), None);
        assert_eq!(called(CALL_TOOL, &json!({"name": 3})), None);
        assert_eq!(
            called(CALL_TOOL, &json!({"name": "y"})),
            Some(("y", &json!({})))
        );
    }
}

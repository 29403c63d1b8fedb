//! Validation of what a provider declares. Each failure names the offending item so a
//! provider author can fix it from the error message alone.

use std::collections::HashSet;
use tap_protocol::limits::{
    MAX_STREAM_NAME_LEN, MAX_TOOLS_PER_PROVIDER, MAX_TOOL_NAME_LEN, MAX_TOOL_TIMEOUT_MS,
};
use tap_protocol::provider::{Push, ToolDef};
use tap_protocol::ErrorCode;

/// A validation failure: the code the spec asks for and a readable reason.
pub(crate) type Invalid = (ErrorCode, String);

/// Checks a complete tool list (from `hello` or `tools.update`).
pub(crate) fn tools(tools: &[ToolDef]) -> Result<(), Invalid> {
    if tools.len() > MAX_TOOLS_PER_PROVIDER {
        return Err((
            ErrorCode::PayloadTooLarge,
            format!(
                "{} tools declared; a provider may declare at most {MAX_TOOLS_PER_PROVIDER}",
                tools.len()
            ),
        ));
    }
    let mut seen = HashSet::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        tool_name(&t.name).map_err(|why| (ErrorCode::InvalidJson, format!("tools[{i}]: {why}")))?;
        if !seen.insert(t.name.as_str()) {
            return Err((
                ErrorCode::ToolConflict,
                format!("Tool '{}' is declared twice in the same list", t.name),
            ));
        }
        if !t.parameters.is_object() {
            return Err((
                ErrorCode::InvalidJson,
                format!(
                    "Tool '{}': 'parameters' must be a JSON Schema object",
                    t.name
                ),
            ));
        }
        if let Some(ms) = t.timeout {
            if ms == 0 || ms > MAX_TOOL_TIMEOUT_MS {
                return Err((
                    ErrorCode::InvalidJson,
                    format!(
                        "Tool '{}': 'timeout' must be between 1 and {MAX_TOOL_TIMEOUT_MS} ms",
                        t.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Tool names must be usable by every agent runtime: the MCP / OpenAI rule.
fn tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "tool name must be 1 to {MAX_TOOL_NAME_LEN} characters, got {}",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "tool name '{name}' contains '{c}'; use letters, digits, '_' and '-'"
        ));
    }
    Ok(())
}

/// Checks a `push` apart from its session.
pub(crate) fn push(p: &Push) -> Result<(), Invalid> {
    let has_event = p.event.as_deref().is_some_and(|e| !e.is_empty());
    let has_prompt = p.prompt.as_deref().is_some_and(|e| !e.is_empty());
    if !has_event && !has_prompt {
        return Err((
            ErrorCode::InvalidJson,
            "'event' must be a non-empty string".to_string(),
        ));
    }
    if let Some(s) = &p.stream {
        if s.is_empty() || s.len() > MAX_STREAM_NAME_LEN || s.contains('@') {
            return Err((
                ErrorCode::InvalidJson,
                format!("'stream' must be 1 to {MAX_STREAM_NAME_LEN} characters without '@'"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: String::new(),
            parameters: json!({}),
            timeout: None,
        }
    }

    #[test]
    fn accepts_the_spec_examples() {
        assert!(tools(&[def("greet"), def("page_title"), def("list-x_2")]).is_ok());
    }

    #[test]
    fn rejects_bad_names_duplicates_and_too_many() {
        assert_eq!(tools(&[def("")]).unwrap_err().0, ErrorCode::InvalidJson);
        assert_eq!(tools(&[def("a b")]).unwrap_err().0, ErrorCode::InvalidJson);
        assert_eq!(
            tools(&[def(&"x".repeat(65))]).unwrap_err().0,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            tools(&[def("a"), def("a")]).unwrap_err().0,
            ErrorCode::ToolConflict
        );
        let many: Vec<_> = (0..=MAX_TOOLS_PER_PROVIDER)
            .map(|i| def(&format!("t{i}")))
            .collect();
        assert_eq!(tools(&many).unwrap_err().0, ErrorCode::PayloadTooLarge);
        assert!(tools(&many[..MAX_TOOLS_PER_PROVIDER]).is_ok());
    }

    #[test]
    fn rejects_non_object_schemas_and_silly_timeouts() {
        let mut d = def("a");
        d.parameters = json!("string");
        assert!(tools(&[d]).is_err());
        let mut d = def("a");
        d.timeout = Some(0);
        assert!(tools(&[d]).is_err());
    }
}

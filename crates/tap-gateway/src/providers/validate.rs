//! Validation of what a provider declares. Each failure names the offending item so a
//! provider author can fix it from the error message alone.

use crate::error::Error;
use std::borrow::Borrow;
use std::collections::HashSet;
use tap_protocol::limits::{
    MAX_INSTANCE_ID_LEN, MAX_STREAM_NAME_LEN, MAX_TOOLS_PER_PROVIDER, MAX_TOOL_NAME_LEN,
    MAX_TOOL_TIMEOUT_MS,
};
use tap_protocol::provider::{Push, ToolDef};
use tap_protocol::ErrorCode;

/// A validation failure: the code the spec asks for and a readable reason.
pub(crate) type Invalid = Error;

/// Checks a complete tool list (from `hello` or `tools.update`).
pub(crate) fn tools(tools: &[impl Borrow<ToolDef>]) -> Result<(), Invalid> {
    if tools.len() > MAX_TOOLS_PER_PROVIDER {
        return Err(Error::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "{} tools declared; a provider may declare at most {MAX_TOOLS_PER_PROVIDER}",
                tools.len()
            ),
        ));
    }
    let mut seen = HashSet::with_capacity(tools.len());
    for (i, t) in tools.iter().map(Borrow::borrow).enumerate() {
        tool_name(&t.name)
            .map_err(|why| Error::new(ErrorCode::InvalidJson, format!("tools[{i}]: {why}")))?;
        // Spec "Tool name collisions": `list_` names are reserved for the generated
        // meta-tools. This shape is refused for everyone, whoever is connected, so a
        // generated tool can never meet a declared one.
        if crate::state::instances::is_list_tool_name(&t.name) {
            return Err(Error::new(
                ErrorCode::ToolConflict,
                format!(
                    "Tool '{}': names 'list_<name>_instances' are reserved for the tools the gateway generates for multi-instance providers",
                    t.name
                ),
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(Error::new(
                ErrorCode::ToolConflict,
                format!("Tool '{}' is declared twice in the same list", t.name),
            ));
        }
        if !t.parameters.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!(
                    "Tool '{}': 'parameters' must be a JSON Schema object",
                    t.name
                ),
            ));
        }
        if let Some(ms) = t.timeout {
            if ms == 0 || ms > MAX_TOOL_TIMEOUT_MS {
                return Err(Error::new(
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

/// `hello.instance`: absent or empty means no instance; otherwise an id short enough to
/// list in a tool schema, without control characters.
pub(crate) fn instance(instance: Option<&str>) -> Result<(), Invalid> {
    match instance {
        Some(i) if i.chars().count() > MAX_INSTANCE_ID_LEN || i.chars().any(char::is_control) => {
            Err(Error::new(
                ErrorCode::InvalidJson,
                format!(
                    "'instance' must be at most {MAX_INSTANCE_ID_LEN} characters, without control characters"
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Whether a tool's schema has a `target` property. Most do not even contain the word, so
/// only those that do are parsed (the text is serde_json's, which writes keys unescaped).
fn declares_target(t: &ToolDef) -> bool {
    t.parameters.as_str().contains("\"target\"")
        && t.parameters
            .to_value()
            .get("properties")
            .and_then(|p| p.get("target"))
            .is_some()
}

/// The tools of a multi-instance provider (one with an `instance`) get the gateway's
/// `target` parameter, so they may not declare their own.
pub(crate) fn shared_tools(
    instance: Option<&str>,
    tools: &[impl Borrow<ToolDef>],
) -> Result<(), Invalid> {
    if instance.is_none_or(str::is_empty) {
        return Ok(());
    }
    match tools
        .iter()
        .map(Borrow::borrow)
        .find(|t: &&ToolDef| declares_target(t))
    {
        Some(t) => Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "Tool '{}' declares a 'target' parameter; a multi-instance provider's tools get the gateway's own 'target' (the instance to run on), so rename it",
                t.name
            ),
        )),
        None => Ok(()),
    }
}

/// Tool names must be usable by every agent runtime: the MCP / OpenAI rule.
fn tool_name(name: &str) -> Result<(), Error> {
    if name.is_empty() || name.len() > MAX_TOOL_NAME_LEN {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "tool name must be 1 to {MAX_TOOL_NAME_LEN} characters, got {}",
                name.len()
            ),
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!("tool name '{name}' contains '{c}'; use letters, digits, '_' and '-'"),
        ));
    }
    Ok(())
}

/// Checks a `push` apart from its session.
pub(crate) fn push(p: &Push) -> Result<(), Invalid> {
    let has_event = p.event.as_deref().is_some_and(|e| !e.is_empty());
    let has_prompt = p.prompt.as_deref().is_some_and(|e| !e.is_empty());
    if !has_event && !has_prompt {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "'event' must be a non-empty string",
        ));
    }
    if let Some(s) = &p.stream {
        if s.is_empty() || s.len() > MAX_STREAM_NAME_LEN || s.contains('@') {
            return Err(Error::new(
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
            parameters: json!({}).into(),
            timeout: None,
            ..Default::default()
        }
    }

    #[test]
    fn accepts_the_spec_examples() {
        assert!(tools(&[def("greet"), def("page_title"), def("list-x_2")]).is_ok());
    }

    #[test]
    fn rejects_bad_names_duplicates_and_too_many() {
        assert_eq!(tools(&[def("")]).unwrap_err().code, ErrorCode::InvalidJson);
        assert_eq!(
            tools(&[def("a b")]).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            tools(&[def(&"x".repeat(65))]).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            tools(&[def("a"), def("a")]).unwrap_err().code,
            ErrorCode::ToolConflict
        );
        let many: Vec<_> = (0..=MAX_TOOLS_PER_PROVIDER)
            .map(|i| def(&format!("t{i}")))
            .collect();
        assert_eq!(tools(&many).unwrap_err().code, ErrorCode::PayloadTooLarge);
        assert!(tools(&many[..MAX_TOOLS_PER_PROVIDER]).is_ok());
    }

    #[test]
    fn reserves_generated_list_names_only() {
        assert_eq!(
            tools(&[def("list_browser_instances")]).unwrap_err().code,
            ErrorCode::ToolConflict
        );
        assert!(tools(&[
            def("list_instances"),
            def("list_files"),
            def("list_x_instance")
        ])
        .is_ok());
    }

    #[test]
    fn an_instance_is_short_and_printable_and_its_tools_have_no_target() {
        assert!(instance(None).is_ok() && instance(Some("tab-a3f8")).is_ok());
        assert!(instance(Some(&"x".repeat(MAX_INSTANCE_ID_LEN))).is_ok());
        assert!(instance(Some(&"x".repeat(MAX_INSTANCE_ID_LEN + 1))).is_err());
        assert!(instance(Some("a\nb")).is_err());
        let mut d = def("click");
        d.parameters =
            json!({"type": "object", "properties": {"target": {"type": "string"}}}).into();
        let list = [d];
        assert_eq!(
            shared_tools(Some("tab"), &list).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert!(shared_tools(None, &list).is_ok() && shared_tools(Some(""), &list).is_ok());
    }

    #[test]
    fn rejects_non_object_schemas_and_silly_timeouts() {
        let mut d = def("a");
        d.parameters = json!("string").into();
        assert!(tools(&[d]).is_err());
        let mut d = def("a");
        d.timeout = Some(0);
        assert!(tools(&[d]).is_err());
    }
}

//! Multi-instance providers (spec: "Multi-instance providers (browser tabs)"): providers
//! that bind with the same `name` and each its own `instance` share their tools. The host
//! sees one copy of each shared tool, with an injected `target` parameter naming the live
//! instances, and a generated `list_<name>_instances` tool; a call goes to its `target`, or
//! without one to the most recently active instance holding the tool (see `tool_map`).

use crate::error::Error;
use crate::limits::MAX_LABEL_CHARS;
use tap_protocol::limits::MAX_TOOL_NAME_LEN;
use tap_protocol::provider::ToolDef;
use tap_protocol::{ErrorCode, Json, JsonObject, JsonText};

const LIST_PREFIX: &str = "list_";
const LIST_SUFFIX: &str = "_instances";

/// A provider name as it appears inside tool names: characters outside `[A-Za-z0-9_-]`
/// become `_`, cut so that `list_<name>_instances` stays a valid tool name (64 at most).
fn tool_name_part(provider: &str) -> String {
    provider
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .take(MAX_TOOL_NAME_LEN - LIST_PREFIX.len() - LIST_SUFFIX.len())
        .collect()
}

/// The generated meta-tool of a provider name: `list_<name>_instances`.
pub(crate) fn list_tool_name(provider: &str) -> String {
    format!("{LIST_PREFIX}{}{LIST_SUFFIX}", tool_name_part(provider))
}

/// Whether `tool` has the generated meta-tools' shape (`list_<something>_instances`).
/// Providers may not declare such names.
pub(crate) fn is_list_tool_name(tool: &str) -> bool {
    tool.len() > LIST_PREFIX.len() + LIST_SUFFIX.len()
        && tool.starts_with(LIST_PREFIX)
        && tool.ends_with(LIST_SUFFIX)
}

/// Spec: tool names "MUST NOT start with `list_` followed by another provider's name".
/// `others` are the names of the other providers bound in the session. The name must end
/// there or continue with `_` (`list_git_log` is reserved by a provider `git`, `list_github`
/// is not): a name is a word, not a string prefix.
pub(crate) fn check_reserved(tool: &str, others: &[&str]) -> Result<(), Error> {
    let Some(rest) = tool.strip_prefix(LIST_PREFIX) else {
        return Ok(());
    };
    for other in others {
        let part = tool_name_part(other);
        let reserved = !part.is_empty()
            && rest
                .strip_prefix(part.as_str())
                .is_some_and(|after| after.is_empty() || after.starts_with('_'));
        if reserved {
            return Err(Error::new(
                ErrorCode::ToolConflict,
                format!(
                    "Tool '{tool}': names starting 'list_{part}' are reserved for the tools the gateway generates for provider '{other}'"
                ),
            ));
        }
    }
    Ok(())
}

/// A short label for an instance from its `hello.metadata`: `title`, else `label`, else
/// `name`, else `url` (the first that is a non-empty string), one line, at most 80
/// characters.
pub(crate) fn label(metadata: Option<&JsonObject>) -> Option<String> {
    let m = metadata?;
    let text = ["title", "label", "name", "url"]
        .iter()
        .filter_map(|k| m.get(*k)?.as_str())
        .map(str::trim)
        .find(|s| !s.is_empty())?;
    let mut one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_LABEL_CHARS)
        .collect();
    if text.chars().count() > MAX_LABEL_CHARS {
        one_line.push('…');
    }
    Some(one_line)
}

/// A shared tool's parameters with the gateway's `target` added: an optional string
/// property whose `enum` lists the instances holding the tool (bind order) and whose
/// `description` names them with their labels. `required` is left alone: without `target`
/// the call goes to the most recently active instance. `holders`: (instance, label).
pub(crate) fn with_target(
    parameters: &JsonText,
    provider: &str,
    holders: &[(&str, Option<&str>)],
) -> JsonText {
    let ids: Vec<&str> = holders.iter().map(|(id, _)| *id).collect();
    let available = holders
        .iter()
        .map(|(id, label)| match label {
            Some(label) => format!("{id} ({label})"),
            None => id.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let target = serde_json::json!({
        "type": "string",
        "enum": ids,
        "description": format!(
            "Instance of '{provider}' to run on. Available: {available}. Omit to use the most recently active one; {} lists them with their metadata.",
            list_tool_name(provider)
        ),
    });
    let mut schema = match parameters.to_value() {
        Json::Object(o) => o,
        _ => JsonObject::new(),
    };
    schema
        .entry("type")
        .or_insert_with(|| Json::String("object".into()));
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Json::Object(JsonObject::new()));
    if let Json::Object(p) = properties {
        p.insert("target".into(), target);
    } else {
        // Not an object schema's `properties`: replace it rather than drop `target`.
        *properties = serde_json::json!({ "target": target });
    }
    Json::Object(schema).into()
}

/// The definition of the generated `list_<name>_instances`.
pub(crate) fn list_tool_def(tool: &str, provider: &str) -> ToolDef {
    ToolDef {
        name: tool.to_string(),
        description: format!(
            "List the connected instances of '{provider}' (instance id, label, metadata, last activity), most recently active first. Pass an instance id as 'target' to the {provider} tools; without 'target' they run on the most recently active instance."
        ),
        parameters: serde_json::json!({"type": "object", "properties": {}}).into(),
        timeout: None,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_list_tool_name_is_a_valid_tool_name() {
        assert_eq!(list_tool_name("browser"), "list_browser_instances");
        assert_eq!(list_tool_name("my.tabs ü"), "list_my_tabs___instances");
        let long = list_tool_name(&"x".repeat(200));
        assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
        assert!(is_list_tool_name(&long));
    }

    #[test]
    fn only_the_generated_shape_is_a_list_tool_name() {
        assert!(is_list_tool_name("list_browser_instances"));
        assert!(is_list_tool_name("list_x_instances"));
        assert!(!is_list_tool_name("list_instances"));
        assert!(!is_list_tool_name("list__instances"));
        assert!(!is_list_tool_name("list_browser_tabs"));
    }

    #[test]
    fn list_followed_by_another_providers_name_is_reserved_as_a_word() {
        let others = ["browser", "git"];
        assert!(check_reserved("list_browser", &others).is_err());
        assert!(check_reserved("list_browser_tabs", &others).is_err());
        assert!(check_reserved("list_git_log", &others).is_err());
        assert!(check_reserved("list_github_repos", &others).is_ok());
        assert!(check_reserved("list_files", &others).is_ok());
        assert!(check_reserved("browser_list", &others).is_ok());
    }

    #[test]
    fn the_label_prefers_title_and_stays_one_short_line() {
        let m = |v: Json| v.as_object().cloned();
        assert_eq!(label(None), None);
        assert_eq!(
            label(m(json!({"url": "https://x", "title": "Dash"})).as_ref()),
            Some("Dash".into())
        );
        assert_eq!(
            label(m(json!({"title": " ", "url": "https://x"})).as_ref()),
            Some("https://x".into())
        );
        let long = label(m(json!({"title": format!("a\nb{}", "c".repeat(200))})).as_ref()).unwrap();
        assert!(long.starts_with("a b") && long.ends_with('…'), "{long}");
        assert_eq!(long.chars().count(), MAX_LABEL_CHARS + 1);
    }

    #[test]
    fn target_is_added_to_any_object_schema_without_becoming_required() {
        let with = |params: Json| with_target(&params.into(), "browser", &[]).to_value();
        let s = with(json!({}));
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["target"]["type"], "string");
        let s = with(
            json!({"type": "object", "properties": {"q": {"type": "string"}},
                            "required": ["q"], "additionalProperties": false}),
        );
        assert_eq!(s["required"], json!(["q"]));
        assert_eq!(s["properties"]["q"], json!({"type": "string"}));
        assert!(s["properties"]["target"]["description"]
            .as_str()
            .unwrap()
            .contains("list_browser_instances"));
    }
}

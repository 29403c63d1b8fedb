//! Edits of a JSON or JSONC file through dprint's `jsonc-parser` CST: one property of one
//! object changes, and every other byte (comments, trailing commas, indentation, key order)
//! stays where it was.
//!
//! Errors give a line and column, never the file's text: it holds secrets.

use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

/// Why a file cannot be edited (the `INVALID_JSON` message, without the file's name).
#[derive(Debug, PartialEq, Eq)]
pub struct Invalid(pub String);

/// JSONC as VS Code and Zed read it: JSON with comments and trailing commas, nothing looser.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn parse(text: &str) -> Result<CstRootNode, Invalid> {
    let root = CstRootNode::parse(text, &options()).map_err(|e| {
        Invalid(format!(
            "it is not valid JSON at line {}, column {} ({})",
            e.line_display(),
            e.column_display(),
            e.kind()
        ))
    })?;
    match root.value() {
        None => Ok(root),
        Some(v) if v.as_object().is_some() => Ok(root),
        Some(_) => Err(Invalid("its top level is not a JSON object".into())),
    }
}

/// The servers object `key` of the top-level object: `Ok(None)` when absent.
fn servers(root: &CstRootNode, key: &str) -> Result<Option<CstObject>, Invalid> {
    let Some(top) = root.object_value() else {
        return Ok(None);
    };
    let Some(prop) = top.get(key) else {
        return Ok(None);
    };
    match prop.object_value() {
        Some(o) => Ok(Some(o)),
        None => Err(Invalid(format!("its '{key}' is not an object"))),
    }
}

/// The value of `<key>.<name>`, if there is one. Also checks that the file can be edited.
pub fn read(text: &str, key: &str, name: &str) -> Result<Option<Value>, Invalid> {
    let root = parse(text)?;
    let found = servers(&root, key)?
        .and_then(|s| s.get(name))
        .and_then(|p| p.to_serde_value());
    Ok(found)
}

/// The whole document as a value (`None` when it does not parse).
pub fn value(text: &str) -> Option<Value> {
    parse(text).ok()?.value()?.to_serde_value()
}

/// `text` with `<key>.<name>` set to `value` (created, with `key`, when missing), and whether
/// `key` had to be created.
pub fn set(text: &str, key: &str, name: &str, value: &Value) -> Result<(String, bool), Invalid> {
    let root = parse(text)?;
    let created = servers(&root, key)?.is_none(); // refuses a `key` that is not an object
    let top = root.object_value_or_set();
    let servers = top
        .object_value_or_create(key)
        .expect("checked to be an object or absent");
    match servers.get(name) {
        Some(prop) => prop.set_value(input(value)),
        None => {
            servers.append(name, input(value));
        }
    }
    let mut out = root.to_string();
    if text.trim().is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok((out, created))
}

/// `text` without `<key>.<name>`; with `drop_key`, `key` goes too when that leaves it empty.
/// `Ok(None)` when there is no such entry (nothing to change).
pub fn remove(
    text: &str,
    key: &str,
    name: &str,
    drop_key: bool,
) -> Result<Option<String>, Invalid> {
    let root = parse(text)?;
    let Some(servers) = servers(&root, key)? else {
        return Ok(None);
    };
    let Some(prop) = servers.get(name) else {
        return Ok(None);
    };
    prop.remove();
    if drop_key && servers.properties().is_empty() {
        if let Some(p) = root.object_value().and_then(|top| top.get(key)) {
            p.remove();
        }
    }
    Ok(Some(root.to_string()))
}

/// A serde_json value as the CST's input.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JSONC: &str = r#"// user settings
{
  "theme": "One Dark", // trailing comment
  /* block */
  "context_servers": {
    "other": { "command": "x", "args": [] },
  },
  "vim_mode": true,
}
"#;

    #[test]
    fn set_then_remove_gives_back_the_same_bytes() {
        let entry = json!({"command": "/t/tap", "args": ["mcp"]});
        let (with, created) = set(JSONC, "context_servers", "tap", &entry).unwrap();
        assert!(!created);
        assert!(with.contains("// trailing comment") && with.contains("/* block */"));
        assert_eq!(read(&with, "context_servers", "tap").unwrap(), Some(entry));
        let back = remove(&with, "context_servers", "tap", false)
            .unwrap()
            .unwrap();
        assert_eq!(back, JSONC);
        assert_eq!(remove(JSONC, "context_servers", "tap", true).unwrap(), None);
    }

    #[test]
    fn a_missing_key_is_created_and_removed_again() {
        let text = "{\n  \"theme\": \"dark\"\n}\n";
        let entry = json!({"command": "/t/tap"});
        let (with, created) = set(text, "mcpServers", "tap", &entry).unwrap();
        assert!(created);
        assert_eq!(
            read(&with, "mcpServers", "tap").unwrap(),
            Some(entry.clone())
        );
        assert_eq!(
            remove(&with, "mcpServers", "tap", true).unwrap().unwrap(),
            text,
            "{with}"
        );
        let (new, _) = set("", "mcpServers", "tap", &entry).unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v, json!({"mcpServers": {"tap": entry}}));
    }

    #[test]
    fn an_existing_entry_is_replaced_in_place() {
        let text = "{\"mcpServers\": {\"a\": 1, \"tap\": {\"command\": \"/old\"}, \"b\": 2}}";
        let (with, _) = set(text, "mcpServers", "tap", &json!({"command": "/new"})).unwrap();
        let v: Value = serde_json::from_str(&with).unwrap();
        assert_eq!(
            v,
            json!({"mcpServers": {"a": 1, "tap": {"command": "/new"}, "b": 2}})
        );
        assert!(
            with.find("\"a\"") < with.find("\"tap\"") && with.find("\"tap\"") < with.find("\"b\"")
        );
    }

    #[test]
    fn what_cannot_be_edited_is_refused_without_its_text() {
        let e = read("{\n  \"k\": \"s3cret\" oops\n}", "mcpServers", "tap").unwrap_err();
        assert!(e.0.contains("line 2"), "{e:?}");
        assert!(!e.0.contains("s3cret"), "{e:?}");
        assert!(set("[1]", "mcpServers", "tap", &json!({})).is_err());
        assert!(set("{\"mcpServers\": []}", "mcpServers", "tap", &json!({})).is_err());
    }
}

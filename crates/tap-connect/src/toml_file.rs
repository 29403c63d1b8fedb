//! Edits of Codex's `config.toml` through `toml_edit`: the table `[mcp_servers.tap]` changes,
//! every other table, key and comment stays as it was written.
//!
//! Errors give a line and column, never the file's text: it holds secrets.

use crate::json_file::Invalid;
use serde_json::Value;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike};

const KEY: &str = "mcp_servers";

fn parse(text: &str) -> Result<DocumentMut, Invalid> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
        Invalid(format!(
            "it is not valid TOML at line {line}, column {column}"
        ))
    })
}

/// 1-based line and column (in characters) of byte `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// The value of `mcp_servers.<name>` as JSON, if there is one. Also checks that the file
/// can be edited.
pub fn read(text: &str, name: &str) -> Result<Option<Value>, Invalid> {
    let doc = parse(text)?;
    match doc.get(KEY) {
        None => return Ok(None),
        Some(item) if item.is_table_like() => {}
        Some(_) => return Err(Invalid(format!("its '{KEY}' is not a table"))),
    }
    // The plain TOML reader gives the entry's data, whatever way it is written.
    let table: toml::Table =
        toml::from_str(text).map_err(|_| Invalid("it is not valid TOML".into()))?;
    Ok(table
        .get(KEY)
        .and_then(|s| s.get(name))
        .map(|v| serde_json::to_value(v).unwrap_or(Value::Null)))
}

/// `text` with `[mcp_servers.<name>]` holding `value`'s keys (strings and string arrays), and
/// whether `mcp_servers` had to be created.
pub fn set(text: &str, name: &str, value: &Value) -> Result<(String, bool), Invalid> {
    let mut doc = parse(text)?;
    let root = doc.as_table_mut();
    let created = !root.contains_key(KEY);
    if created {
        let mut servers = Table::new();
        servers.set_implicit(true);
        root.insert(KEY, Item::Table(servers));
    }
    let servers_inline = root.get(KEY).is_some_and(Item::is_inline_table);
    let servers = root
        .get_mut(KEY)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| Invalid(format!("its '{KEY}' is not a table")))?;
    let inline = servers.get(name).is_some_and(Item::is_inline_table);
    match servers.get_mut(name).and_then(Item::as_table_like_mut) {
        // Kept where it is, in the form it has (a table, dotted keys, an inline table).
        Some(existing) => {
            let keys: Vec<String> = existing.iter().map(|(k, _)| k.to_string()).collect();
            for k in keys {
                existing.remove(&k);
            }
            fill(existing, value);
            if inline {
                if let Some(t) = servers.get_mut(name).and_then(Item::as_inline_table_mut) {
                    t.fmt();
                }
            }
        }
        None => {
            if servers_inline {
                let mut t = InlineTable::new();
                fill(&mut t, value);
                servers.insert(name, Item::Value(t.into()));
            } else {
                let mut t = Table::new();
                fill(&mut t, value);
                servers.insert(name, Item::Table(t));
            }
        }
    }
    Ok((doc.to_string(), created))
}

/// `text` without `mcp_servers.<name>`; with `drop_key`, `mcp_servers` goes too when that
/// leaves it empty. `Ok(None)` when there is no such entry.
pub fn remove(text: &str, name: &str, drop_key: bool) -> Result<Option<String>, Invalid> {
    let mut doc = parse(text)?;
    let root = doc.as_table_mut();
    let Some(servers) = root.get_mut(KEY).and_then(Item::as_table_like_mut) else {
        return Ok(None);
    };
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    if drop_key && servers.is_empty() {
        root.remove(KEY);
    }
    Ok(Some(doc.to_string()))
}

fn fill(table: &mut dyn TableLike, value: &Value) {
    for (k, v) in value.as_object().into_iter().flatten() {
        let item = match v {
            Value::String(s) => toml_edit::value(s.as_str()),
            Value::Bool(b) => toml_edit::value(*b),
            Value::Array(a) => {
                let arr: Array = a.iter().filter_map(Value::as_str).collect();
                toml_edit::value(arr)
            }
            _ => continue,
        };
        table.insert(k, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CODEX: &str = r#"# Codex settings
model = "o4-mini"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"   # the docs server
args = ["-y", "docs-mcp"]

[mcp_servers.docs.env]
TOKEN = "abc"

[profiles.fast]
model = "gpt-x"
"#;

    #[test]
    fn set_then_remove_gives_back_the_same_bytes() {
        let entry = json!({"command": "/t/tap", "args": ["mcp", "--session", "codex"]});
        let (with, created) = set(CODEX, "tap", &entry).unwrap();
        assert!(!created);
        assert!(with.contains("# the docs server"), "{with}");
        assert!(with.contains("[mcp_servers.tap]"), "{with}");
        assert_eq!(read(&with, "tap").unwrap(), Some(entry.clone()));
        assert_eq!(read(&with, "docs").unwrap().unwrap()["env"]["TOKEN"], "abc");
        assert_eq!(
            remove(&with, "tap", false).unwrap().unwrap(),
            CODEX,
            "{with}"
        );
        assert_eq!(remove(CODEX, "tap", true).unwrap(), None);
        let (again, _) = set(&with, "tap", &json!({"command": "/new/tap", "args": []})).unwrap();
        assert_eq!(read(&again, "tap").unwrap().unwrap()["command"], "/new/tap");
    }

    #[test]
    fn a_file_without_servers_gets_and_loses_the_table() {
        let text = "model = \"o3\"\n";
        let entry = json!({"command": "/t/tap", "args": ["mcp"]});
        let (with, created) = set(text, "tap", &entry).unwrap();
        assert!(created);
        assert_eq!(read(&with, "tap").unwrap(), Some(entry));
        assert!(!with.contains("[mcp_servers]\n"), "{with}");
        assert_eq!(remove(&with, "tap", true).unwrap().unwrap(), text);
        assert!(set("", "tap", &json!({"command": "x"}))
            .unwrap()
            .0
            .contains("[mcp_servers.tap]"));
    }

    #[test]
    fn bad_toml_is_refused_by_position() {
        let e = read("a = 1\nsecret = \"abc\" x\n", "tap").unwrap_err();
        assert!(e.0.contains("line 2") && !e.0.contains("abc"), "{e:?}");
        assert!(set("mcp_servers = 3\n", "tap", &json!({})).is_err());
    }
}

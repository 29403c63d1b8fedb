//! Where MCP clients keep their servers on Linux, and their entries in the gateway's shape
//! (`tap mcp import`, docs/mcp-servers.md "Import"). The files are `tap_connect`'s
//! (`Client::files`), which `tap connect` edits: one list of where each client's file is.
//!
//! | client | file | key |
//! |---|---|---|
//! | Claude Desktop | `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json` | `mcpServers` |
//! | Claude Code | `~/.claude.json` (and its `projects.<this dir>`), `./.mcp.json` | `mcpServers` |
//! | Cursor | `~/.cursor/mcp.json`, `./.cursor/mcp.json` | `mcpServers` |
//! | VS Code | `$XDG_CONFIG_HOME/Code/User/mcp.json`, `./.vscode/mcp.json` (JSONC) | `servers` |
//! | Windsurf | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` |
//! | Codex | `$CODEX_HOME/config.toml` (`~/.codex`) (TOML) | `[mcp_servers.NAME]` |
//! | Gemini CLI | `~/.gemini/settings.json`, `./.gemini/settings.json` | `mcpServers` |
//!
//! Every JSON file is read leniently (comments, trailing commas). Error messages give a
//! line and column, never the file's text: it holds secrets.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The longest server name the gateway takes (`config::check_name` is the judge).
const MAX_NAME_LEN: usize = 32;

/// `--from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Codex,
    Gemini,
}

impl Client {
    pub const ALL: [Client; 7] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
        Client::Codex,
        Client::Gemini,
    ];

    /// As `--from` spells it.
    pub fn word(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
        }
    }
}

/// Where the servers are inside a file.
#[derive(Debug, Clone)]
enum Key {
    /// A top-level key of a JSON file.
    Json(&'static str),
    /// Claude Code's `~/.claude.json`: `mcpServers`, and `projects.<dir>.mcpServers`.
    ClaudeJson,
    /// Codex's `config.toml`: `[mcp_servers.NAME]`.
    CodexToml,
}

/// One file a client keeps servers in.
#[derive(Debug, Clone)]
pub struct Source {
    pub client: Client,
    pub path: PathBuf,
    key: Key,
}

pub use tap_connect::Dirs;

impl Client {
    /// The same client in `tap connect`'s list, whose locations these are.
    fn located(self) -> tap_connect::Client {
        match self {
            Client::ClaudeDesktop => tap_connect::Client::ClaudeDesktop,
            Client::ClaudeCode => tap_connect::Client::ClaudeCode,
            Client::Cursor => tap_connect::Client::Cursor,
            Client::Vscode => tap_connect::Client::Vscode,
            Client::Windsurf => tap_connect::Client::Windsurf,
            Client::Codex => tap_connect::Client::Codex,
            Client::Gemini => tap_connect::Client::Gemini,
        }
    }
}

/// The files of `client` (`tap_connect::Client::files`: user files first).
pub fn sources(client: Client, d: &Dirs) -> Vec<Source> {
    const MCP: Key = Key::Json("mcpServers");
    client
        .located()
        .files(d)
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            let key = match client {
                Client::ClaudeCode if i == 0 => Key::ClaudeJson,
                Client::Vscode => Key::Json("servers"),
                Client::Codex => Key::CodexToml,
                _ => MCP,
            };
            Source { client, path, key }
        })
        .collect()
}

/// One server found in a client's file, as the client wrote it.
#[derive(Debug, Clone)]
pub struct Found {
    pub client: Client,
    /// The file (and, in `~/.claude.json`, the project), for the preview.
    pub from: String,
    pub name: String,
    pub raw: Value,
}

/// The servers of `source`: `Ok(None)` when the file does not exist; `Err` says why it
/// cannot be read (a line and column, no text of the file).
pub fn read(source: &Source, cwd: &Path) -> Result<Option<Vec<Found>>, String> {
    let text = match std::fs::read_to_string(&source.path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let from = source.path.display().to_string();
    let found = |servers: &Value, from: &str| -> Vec<Found> {
        servers
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, raw)| Found {
                client: source.client,
                from: from.to_string(),
                name: name.clone(),
                raw: raw.clone(),
            })
            .collect()
    };
    let doc = match source.key {
        Key::CodexToml => {
            let table: toml::Table = toml::from_str(&text).map_err(|e| toml_error(&text, &e))?;
            let servers = table
                .get("mcp_servers")
                .map(|v| serde_json::to_value(v).unwrap_or(Value::Null))
                .unwrap_or(Value::Null);
            return Ok(Some(found(&servers, &from)));
        }
        _ => jsonc(&text)?,
    };
    let mut out = Vec::new();
    match source.key {
        Key::Json(key) => out.extend(found(&doc[key], &from)),
        Key::ClaudeJson => {
            out.extend(found(&doc["mcpServers"], &from));
            // The project this command runs in (Claude Code's "local" scope).
            if let Some(projects) = doc["projects"].as_object() {
                let mut mine: Vec<(&String, &Value)> = projects
                    .iter()
                    .filter(|(dir, _)| cwd.starts_with(dir.as_str()))
                    .collect();
                mine.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.len()));
                if let Some((dir, project)) = mine.first() {
                    out.extend(found(
                        &project["mcpServers"],
                        &format!("{from} (project {dir})"),
                    ));
                }
            }
        }
        Key::CodexToml => unreachable!("returned above"),
    }
    Ok(Some(out))
}

fn jsonc(text: &str) -> Result<Value, String> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        ..Default::default()
    };
    jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &options)
        .map(Option::unwrap_or_default)
        .map_err(|e| format!("it is not valid JSON: {e}"))
}

/// A TOML error by its line and column (the crate's own message quotes the line).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let at = e.span().map(|s| s.start).unwrap_or(0).min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!(
        "it is not valid TOML (line {line}, column {column}): {}",
        e.message()
    )
}

/// A client's entry in the gateway's shape: the entry and notes (what was not carried
/// over), or why it cannot be imported.
pub fn convert(client: Client, raw: &Value) -> Result<(Map<String, Value>, Vec<String>), String> {
    let obj = raw
        .as_object()
        .ok_or("its entry is not an object".to_string())?;
    let mut notes = Vec::new();
    let text = |key: &str| obj.get(key).and_then(Value::as_str);
    if let Some(var) = text("bearer_token_env_var") {
        return Err(format!("its token comes from the environment variable {var} (bearer_token_env_var): add it with `tap mcp add -H 'Authorization: @secret' NAME URL`"));
    }
    if obj.contains_key("env_http_headers") {
        return Err("its headers come from environment variables (env_http_headers): add it with `tap mcp add -H 'Name: @secret' NAME URL`".into());
    }
    for field in ["env", "headers", "http_headers"] {
        for (k, v) in obj
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if v.as_str().is_some_and(|v| v.contains("${input:")) {
                return Err(format!("{field} {k} is asked for when the client starts it (${{input:…}}): add it with `tap mcp add` and @secret"));
            }
        }
    }
    let kind = text("type").map(str::to_ascii_lowercase);
    let url = text("url").or(text("serverUrl")).or(text("httpUrl"));
    let mut entry = Map::new();
    let remote = match (kind.as_deref(), url, obj.get("command")) {
        (Some("stdio"), _, _) | (None, None, Some(_)) => None,
        (Some("http" | "streamable-http" | "streamablehttp" | "streamable_http"), Some(_), _) => {
            Some("http")
        }
        (Some("sse"), Some(_), _) => Some("sse"),
        (
            Some(
                other @ ("http" | "streamable-http" | "streamablehttp" | "streamable_http" | "sse"),
            ),
            None,
            _,
        ) => return Err(format!("it is a {other} server without a URL")),
        (Some(other), _, _) => return Err(format!("its transport '{other}' is not supported")),
        (None, Some(_), _) if text("httpUrl").is_some() => Some("http"),
        // Gemini CLI: `url` is the SSE transport, `httpUrl` Streamable HTTP.
        (None, Some(_), _) if client == Client::Gemini => Some("sse"),
        (None, Some(u), _) if u.trim_end_matches('/').ends_with("/sse") => {
            notes.push("transport sse guessed from its URL".into());
            Some("sse")
        }
        (None, Some(_), _) => Some("http"),
        (None, None, None) => return Err("it has neither 'command' nor a URL".into()),
    };
    match remote {
        None => {
            for key in ["command", "args", "env", "cwd"] {
                if let Some(v) = obj.get(key) {
                    entry.insert(key.into(), v.clone());
                }
            }
        }
        Some(kind) => {
            entry.insert("type".into(), kind.into());
            entry.insert("url".into(), url.unwrap_or_default().into());
            if let Some(h) = obj.get("headers").or(obj.get("http_headers")) {
                entry.insert("headers".into(), h.clone());
            }
        }
    }
    let off = obj.get("disabled").and_then(Value::as_bool) == Some(true)
        || obj.get("enabled").and_then(Value::as_bool) == Some(false);
    if off {
        entry.insert("enabled".into(), false.into());
    }
    for key in ["disabledTools", "excludeTools", "disabled_tools"] {
        if let Some(tools) = obj.get(key).filter(|v| v.is_array()) {
            entry.insert("disabledTools".into(), tools.clone());
            break;
        }
    }
    for (key, what) in [
        ("envFile", "its variables are not imported"),
        ("includeTools", "every tool is offered"),
        ("enabled_tools", "every tool is offered"),
        ("oauth", "OAuth sign-in is not supported yet"),
        ("auth", "OAuth sign-in is not supported yet"),
    ] {
        if obj.contains_key(key) {
            notes.push(format!("'{key}' is not carried over: {what}"));
        }
    }
    let placeholders = entry
        .iter()
        .filter(|(k, _)| ["command", "args", "env", "cwd", "url", "headers"].contains(&k.as_str()))
        .any(|(_, v)| v.to_string().contains("${"));
    if placeholders {
        notes.push("it holds ${…} placeholders of the client's, which the gateway passes as they are (except ${secret:NAME})".into());
    }
    Ok((entry, notes))
}

/// A name the gateway accepts: characters other than letters, digits, `_` and `-` become
/// `-`, cut at the length limit.
pub fn gateway_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(MAX_NAME_LEN)
        .collect();
    if cleaned.is_empty() {
        "server".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_variants_become_the_gateways_shape() {
        let (e, _) = convert(
            Client::Windsurf,
            &json!({"serverUrl": "https://a/mcp", "headers": {"K": "v"}}),
        )
        .unwrap();
        assert_eq!(
            Value::Object(e),
            json!({"type": "http", "url": "https://a/mcp", "headers": {"K": "v"}})
        );
        let (e, _) = convert(Client::Gemini, &json!({"httpUrl": "https://a/mcp"})).unwrap();
        assert_eq!(e["type"], "http");
        let (e, _) = convert(Client::Gemini, &json!({"url": "https://a/events"})).unwrap();
        assert_eq!(e["type"], "sse");
        let (e, _) = convert(
            Client::ClaudeCode,
            &json!({"type": "streamable-http", "url": "https://a"}),
        )
        .unwrap();
        assert_eq!(e["type"], "http");
        let (e, _) = convert(Client::Codex, &json!({"command": "npx", "args": ["-y", "x"], "enabled": false, "disabled_tools": ["t"]})).unwrap();
        assert_eq!(
            Value::Object(e),
            json!({"command": "npx", "args": ["-y", "x"], "enabled": false, "disabledTools": ["t"]})
        );
        let (e, _) = convert(
            Client::Vscode,
            &json!({"type": "stdio", "command": "x", "env": {"A": "b"}}),
        )
        .unwrap();
        assert_eq!(Value::Object(e), json!({"command": "x", "env": {"A": "b"}}));
    }

    #[test]
    fn what_cannot_be_carried_is_refused_without_values() {
        let why = convert(
            Client::Vscode,
            &json!({"command": "x", "env": {"TOKEN": "${input:tok}"}}),
        )
        .unwrap_err();
        assert!(why.contains("TOKEN") && !why.contains("tok}"), "{why}");
        assert!(convert(Client::Cursor, &json!({"type": "ws", "url": "ws://a"})).is_err());
        assert!(convert(
            Client::Codex,
            &json!({"url": "https://a", "bearer_token_env_var": "T"})
        )
        .is_err());
        assert_eq!(gateway_name("github.com/x y"), "github-com-x-y");
    }
}

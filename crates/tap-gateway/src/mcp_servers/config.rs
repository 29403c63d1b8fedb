//! `mcpServers`: the shape Claude Desktop, Cursor and Claude Code use, read from the
//! user's `$TAP_HOME/mcp.json` (`{"mcpServers": {…}}`) and from a workspace's
//! `tap.config.json` (its `mcpServers` key).
//!
//! ```json
//! { "mcpServers": {
//!     "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"] },
//!     "linear": { "type": "http", "url": "https://mcp.linear.app/mcp", "headers": { "X-Team": "core" } } } }
//! ```
//!
//! Each entry is checked on its own: a bad entry or key is reported (naming it) and the
//! rest still loads. Reading never changes the file; `tap mcp add` and its siblings edit it
//! keeping every key they do not know.

use crate::limits::{MAX_MCP_SERVERS, MAX_MCP_SERVER_NAME_LEN};
pub use crate::oauth::ClientSpec;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The user scope's file name, in `TAP_HOME`.
pub const USER_FILE_NAME: &str = "mcp.json";

/// The key holding the servers, in both files.
pub const KEY: &str = "mcpServers";

/// `$TAP_HOME/mcp.json`.
pub fn user_file(data_dir: &Path) -> PathBuf {
    data_dir.join(USER_FILE_NAME)
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its key in `mcpServers`.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// `"enabled": false` keeps it configured but stopped.
    pub enabled: bool,
    /// Put before each tool name; `None`: `<name>__`. `Some("")`: tools keep their names.
    pub prefix: Option<String>,
    /// Tools (as the server names them) left out of every session.
    pub disabled_tools: Vec<String>,
    /// When it starts.
    pub startup: Startup,
    /// Stopped after this long with no calls; `None`: runs while it is needed.
    pub idle_timeout: Option<Duration>,
    /// The sessions (ids or labels) that see it; `None`: every session.
    pub sessions: Option<Vec<String>>,
}

/// How the gateway reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: Vec<(String, String)>,
        /// Relative to the configuring file's directory; `None`: the session's directory
        /// (project scope) or `TAP_HOME` (user scope).
        cwd: Option<String>,
    },
    /// Streamable HTTP (`"type": "http"`) or the legacy HTTP+SSE transport (`"sse"`).
    Remote {
        /// The legacy HTTP+SSE transport rather than Streamable HTTP.
        sse: bool,
        /// Its endpoint.
        url: String,
        /// Sent with every request.
        headers: Vec<(String, String)>,
        /// Its `"oauth"` entry: how to register with its authorization server. A server
        /// that answers `401` gets a sign-in with or without one.
        oauth: Option<ClientSpec>,
    },
}

impl Transport {
    /// As `tap mcp list` and the panel show it.
    pub fn kind(&self) -> tap_protocol::mcp_servers::McpTransport {
        use tap_protocol::mcp_servers::McpTransport;
        match self {
            Transport::Stdio { .. } => McpTransport::Stdio,
            Transport::Remote { sse: false, .. } => McpTransport::Http,
            Transport::Remote { sse: true, .. } => McpTransport::Sse,
        }
    }

    /// The command line or URL (no secrets: env and header values are left out).
    pub fn target(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
            Transport::Remote { url, .. } => url.clone(),
        }
    }

    /// The names of the variables or headers it is given (never their values).
    pub fn secret_names(&self) -> Vec<String> {
        let pairs = match self {
            Transport::Stdio { env, .. } => env,
            Transport::Remote { headers, .. } => headers,
        };
        pairs.iter().map(|(k, _)| k.clone()).collect()
    }
}

/// `"startup"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Startup {
    /// When a session that sees it opens (user scope: when the gateway starts).
    #[default]
    Eager,
    /// At the first call of one of its tools; sessions see the tools it offered last time.
    Lazy,
}

/// What a `mcpServers` object yielded.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parsed {
    /// The usable entries, in the file's order.
    pub servers: Vec<ServerSpec>,
    /// Each a sentence naming the server and key; the server was skipped, or the key
    /// ignored.
    pub warnings: Vec<String>,
}

/// Reads `$TAP_HOME/mcp.json`. A missing file is no servers; an unreadable or invalid one
/// is no servers and a warning.
pub fn load_user(data_dir: &Path) -> Parsed {
    let path = user_file(data_dir);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Parsed::default(),
        Err(e) => return unusable(&path, format!("cannot read it: {e}")),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(doc) => parse_document(&doc, &path),
        Err(e) => unusable(&path, format!("it is not valid JSON: {e}")),
    }
}

fn unusable(path: &Path, why: String) -> Parsed {
    Parsed {
        servers: Vec::new(),
        warnings: vec![format!(
            "{}: {why}; no user MCP servers loaded",
            path.display()
        )],
    }
}

/// The servers of a whole document (`{"mcpServers": {…}}`); no key is no servers.
pub fn parse_document(doc: &Value, path: &Path) -> Parsed {
    let Some(obj) = doc.as_object() else {
        return unusable(path, "it is not a JSON object".into());
    };
    match obj.get(KEY) {
        None => Parsed::default(),
        Some(servers) => parse(servers, &path.display().to_string()),
    }
}

/// Parses a `mcpServers` object; `source` names the file in warnings.
pub fn parse(servers: &Value, source: &str) -> Parsed {
    let mut out = Parsed::default();
    let Some(map) = servers.as_object() else {
        out.warnings.push(format!(
            "{source}: '{KEY}' must be an object keyed by server name; no MCP servers loaded"
        ));
        return out;
    };
    for (name, entry) in map {
        if out.servers.len() == MAX_MCP_SERVERS {
            out.warnings.push(format!(
                "{source}: more than {MAX_MCP_SERVERS} MCP servers; '{name}' and the rest are ignored"
            ));
            break;
        }
        match parse_entry(name, entry) {
            Ok((spec, warnings)) => {
                out.warnings
                    .extend(warnings.into_iter().map(|w| format!("{source}: {w}")));
                out.servers.push(spec);
            }
            Err(why) => out
                .warnings
                .push(format!("{source}: MCP server '{name}' skipped: {why}")),
        }
    }
    out
}

/// One entry. `Err`: it cannot be used (the reason names the key); `Ok` carries warnings
/// about keys that were ignored.
pub fn parse_entry(name: &str, entry: &Value) -> Result<(ServerSpec, Vec<String>), String> {
    check_name(name)?;
    let obj = entry
        .as_object()
        .ok_or("its entry must be an object with 'command' or 'url'")?;
    let mut warnings = Vec::new();
    let kind = match obj.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err("'type' must be \"stdio\", \"http\" or \"sse\"".into()),
    };
    let transport = match (kind, obj.get("url"), obj.get("command")) {
        (Some("stdio"), _, _) | (None, None, Some(_)) => stdio(obj)?,
        (Some("http" | "streamable-http" | "streamableHttp"), _, _) | (None, Some(_), None) => {
            remote(obj, false)?
        }
        (Some("sse"), _, _) => remote(obj, true)?,
        (Some(other), _, _) => {
            return Err(format!(
                "'type' is \"{other}\"; it must be \"stdio\", \"http\" or \"sse\""
            ))
        }
        (None, Some(_), Some(_)) => {
            return Err("it has both 'command' and 'url'; keep one, or set 'type'".into())
        }
        (None, None, None) => return Err("it needs 'command' (stdio) or 'url' (http)".into()),
    };
    let enabled = match obj.get("enabled") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            warnings.push(format!(
                "MCP server '{name}': 'enabled' must be true or false; it stays enabled"
            ));
            true
        }
    };
    let prefix = match obj.get("prefix") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) if valid_prefix(p) => Some(p.clone()),
        Some(_) => {
            warnings.push(format!(
                "MCP server '{name}': 'prefix' must be a string of letters, digits, '_' and '-' (at most {MAX_MCP_SERVER_NAME_LEN}); the default '{name}__' is used"
            ));
            None
        }
    };
    let disabled_tools = match obj.get("disabledTools") {
        None => Vec::new(),
        Some(v) => strings(v).unwrap_or_else(|| {
            warnings.push(format!("MCP server '{name}': 'disabledTools' must be an array of tool names; no tool is disabled"));
            Vec::new()
        }),
    };
    let startup = match obj.get("startup").and_then(Value::as_str) {
        None if obj.get("startup").is_none() => Startup::Eager,
        Some("eager") => Startup::Eager,
        Some("lazy") => Startup::Lazy,
        _ => {
            warnings.push(format!(
                "MCP server '{name}': 'startup' must be \"eager\" or \"lazy\"; it starts eagerly"
            ));
            Startup::Eager
        }
    };
    let idle_timeout = match obj.get("idleTimeout") {
        None | Some(Value::Null) => None,
        Some(v) => match duration(v) {
            Some(d) => Some(d),
            None => {
                warnings.push(format!("MCP server '{name}': 'idleTimeout' must be seconds or a duration like \"10m\"; it is not stopped when idle"));
                None
            }
        },
    };
    let sessions = match obj.get("sessions") {
        None | Some(Value::Null) => None,
        Some(v) => match strings(v) {
            Some(s) => Some(s),
            None => {
                warnings.push(format!("MCP server '{name}': 'sessions' must be an array of session ids or labels; every session sees it"));
                None
            }
        },
    };
    Ok((
        ServerSpec {
            name: name.to_string(),
            transport,
            enabled,
            prefix,
            disabled_tools,
            startup,
            idle_timeout,
            sessions,
        },
        warnings,
    ))
}

/// A server's name becomes its tools' prefix, so it follows the tool-name alphabet.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_MCP_SERVER_NAME_LEN {
        return Err(format!(
            "its name must be 1 to {MAX_MCP_SERVER_NAME_LEN} characters"
        ));
    }
    if !valid_prefix(name) {
        return Err("its name may hold only letters, digits, '_' and '-'".into());
    }
    Ok(())
}

fn valid_prefix(p: &str) -> bool {
    p.len() <= MAX_MCP_SERVER_NAME_LEN
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn stdio(obj: &Map<String, Value>) -> Result<Transport, String> {
    let command = match obj.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        _ => return Err("'command' must be a non-empty string".into()),
    };
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(v) => strings(v).ok_or("'args' must be an array of strings")?,
    };
    let env = match obj.get("env") {
        None => Vec::new(),
        Some(v) => pairs(v).ok_or("'env' must be an object of string values")?,
    };
    let cwd = match obj.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err("'cwd' must be a string".into()),
    };
    Ok(Transport::Stdio {
        command,
        args,
        env,
        cwd,
    })
}

fn remote(obj: &Map<String, Value>, sse: bool) -> Result<Transport, String> {
    let url = match obj.get("url") {
        Some(Value::String(u)) if u.starts_with("http://") || u.starts_with("https://") => {
            u.clone()
        }
        _ => return Err("'url' must be an http:// or https:// URL".into()),
    };
    let headers = match obj.get("headers") {
        None => Vec::new(),
        Some(v) => pairs(v).ok_or("'headers' must be an object of string values")?,
    };
    let oauth = match obj.get("oauth") {
        None | Some(Value::Null) => None,
        Some(v) => Some(ClientSpec::parse(v)?),
    };
    Ok(Transport::Remote {
        sse,
        url,
        headers,
        oauth,
    })
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn pairs(v: &Value) -> Option<Vec<(String, String)>> {
    v.as_object()?
        .iter()
        .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

/// Seconds (a number) or a humantime string (`"90s"`, `"10m"`).
fn duration(v: &Value) -> Option<Duration> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64),
        Value::String(s) => humantime::parse_duration(s).ok().filter(|d| !d.is_zero()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_shapes_clients_write() {
        let parsed = parse(
            &json!({
                "everything": {"command": "node", "args": ["x.js", "stdio"], "env": {"K": "v"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer t"}},
                "old": {"type": "sse", "url": "https://example.com/sse"},
                "bare": {"url": "https://example.com/mcp"}
            }),
            "f",
        );
        assert_eq!(parsed.warnings, Vec::<String>::new());
        assert_eq!(parsed.servers.len(), 4);
        assert_eq!(parsed.servers[0].transport.target(), "node x.js stdio");
        assert_eq!(parsed.servers[0].transport.secret_names(), vec!["K"]);
        assert!(matches!(
            parsed.servers[2].transport,
            Transport::Remote { sse: true, .. }
        ));
        assert!(matches!(
            parsed.servers[3].transport,
            Transport::Remote { sse: false, .. }
        ));
    }

    #[test]
    fn a_bad_entry_is_named_and_the_rest_still_load() {
        let parsed = parse(
            &json!({
                "ok": {"command": "x", "startup": "lazy", "idleTimeout": "10m", "prefix": ""},
                "no-command": {"args": []},
                "bad name!": {"command": "x"},
                "both": {"command": "x", "url": "http://a"},
                "weird": {"command": "x", "startup": "later", "disabledTools": "echo"}
            }),
            "tap.config.json",
        );
        let names: Vec<_> = parsed.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ok", "weird"]);
        assert_eq!(parsed.servers[0].startup, Startup::Lazy);
        assert_eq!(parsed.servers[0].prefix.as_deref(), Some(""));
        assert_eq!(
            parsed.servers[0].idle_timeout,
            Some(Duration::from_secs(600))
        );
        let text = parsed.warnings.join("\n");
        for needle in [
            "'no-command' skipped",
            "'bad name!' skipped",
            "'both' skipped",
            "'startup'",
            "'disabledTools'",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
    }

    #[test]
    fn a_wrong_shape_is_one_warning() {
        let parsed = parse(&json!(["a"]), "f");
        assert!(parsed.servers.is_empty());
        assert!(parsed.warnings[0].contains("must be an object"));
    }
}

//! The flags of `tap mcp add|list|get|remove|enable|disable|restart|logs|tools` (clap), in
//! Claude Code's syntax, and the entry `tap mcp add` writes from them.
//!
//! `-e` and `-H` values are read here, not by clap: clap repeats a value it rejects, and
//! these values are secrets.

use crate::mcp_servers_file::Scope;
use clap::{Args, Subcommand};
use serde_json::{Map, Value};

#[derive(Subcommand)]
pub enum ServersCommand {
    /// Add an MCP server as a provider: `tap mcp add NAME -- COMMAND [ARGS...]` (stdio) or
    /// `tap mcp add NAME URL` (Streamable HTTP; `--transport sse` for the legacy one).
    Add(AddArgs),
    /// The MCP servers: name, scope, session, transport, state, pid, tools, last error
    /// (from the running gateway, else from the configuration files).
    List {
        /// Print a JSON array of the servers.
        #[arg(long)]
        json: bool,
    },
    /// One MCP server in detail: its configuration (env and header values hidden) and
    /// what the running gateway says of it.
    Get {
        /// The server's name.
        name: String,
        /// Only look in this scope's file.
        #[arg(short, long, value_enum)]
        scope: Option<Scope>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an MCP server from its configuration file (the running gateway stops it).
    Remove(NameArgs),
    /// Enable an MCP server (`"enabled": true`); the running gateway starts it.
    Enable(NameArgs),
    /// Disable an MCP server (`"enabled": false`): kept in the file, stopped.
    Disable(NameArgs),
    /// Restart an MCP server now (a parked one too) in the running gateway.
    Restart {
        /// The server's name.
        name: String,
        /// The session a project server runs for (when it runs for several).
        #[arg(long)]
        session: Option<String>,
    },
    /// Sign in to a remote MCP server (OAuth): prints the page to open (and opens it where
    /// there is a display), then waits until the browser comes back to the gateway.
    Login {
        /// The server's name.
        name: String,
        /// The session a project server runs for (when it runs for several).
        #[arg(long)]
        session: Option<String>,
        /// Print the page's address without opening a browser.
        #[arg(long)]
        no_open: bool,
    },
    /// Sign out of a remote MCP server: its tokens are revoked (where the authorization
    /// server allows) and forgotten; it waits for a new sign-in.
    Logout {
        /// The server's name.
        name: String,
        /// The session a project server runs for (when it runs for several).
        #[arg(long)]
        session: Option<String>,
    },
    /// The last lines an MCP server wrote to stderr, as the running gateway keeps them.
    Logs {
        /// The server's name.
        name: String,
        /// The session a project server runs for (when it runs for several).
        #[arg(long)]
        session: Option<String>,
        /// Keep printing the lines it writes from now on, until Ctrl-C.
        #[arg(long, short = 'f')]
        follow: bool,
    },
    /// An MCP server's tools, or turn one off (`--disable TOOL`) or on again
    /// (`--enable TOOL`) for every session.
    Tools(ToolsArgs),
    /// Add the MCP servers configured in Claude Desktop, Claude Code, Cursor, VS Code,
    /// Windsurf, Codex or the Gemini CLI (their files on this machine), after a preview.
    Import(ImportArgs),
}

/// `tap mcp import`.
#[derive(Args)]
pub struct ImportArgs {
    /// Only this client's files (default: every client's).
    #[arg(long, value_enum)]
    pub from: Option<crate::mcp_servers_import_clients::Client>,
    /// Where to add them: `user` ($TAP_HOME/mcp.json) or `project` (tap.config.json here).
    #[arg(short, long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Show what would be added and skipped; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace how a server of the same name is reached (its other settings are kept)
    /// instead of skipping it.
    #[arg(long)]
    pub force: bool,
}

/// `tap mcp add`.
#[derive(Args)]
pub struct AddArgs {
    /// Where to write it: `user` ($TAP_HOME/mcp.json, every session) or `project`
    /// (tap.config.json here: each session opened in this workspace).
    #[arg(short, long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// An environment variable of a stdio server, KEY=VALUE; repeatable. KEY=@secret reads
    /// the value from standard input and keeps it in the keyring (the file gets
    /// `${secret:NAME.KEY}`).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A header sent to an http or sse server, 'Name: value'; repeatable. 'Name: @secret'
    /// reads the value from standard input and keeps it in the keyring.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// How it is reached (default: http when a URL is given, else stdio).
    #[arg(short, long, value_enum)]
    pub transport: Option<TransportArg>,
    /// An OAuth client id registered with the server's authorization server beforehand
    /// (default: Client ID Metadata Documents or dynamic registration, as the server allows).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// That client's secret; kept in the keyring like any secret (`@secret` reads it from
    /// standard input instead of the command line).
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    pub client_secret: Option<String>,
    /// An OAuth scope to ask for at sign-in; repeatable (default: what the server asks).
    #[arg(long = "oauth-scope", value_name = "SCOPE")]
    pub oauth_scopes: Vec<String>,
    /// An https URL serving this client's metadata document, used as its client id where
    /// the authorization server supports those (SEP-991).
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// Replace the command or URL (and env, headers) of a server of that name; its other
    /// settings (enabled, prefix, disabledTools, …) are kept.
    #[arg(long)]
    pub force: bool,
    /// The server's name (letters, digits, '_', '-'): its tools are called NAME__TOOL.
    pub name: String,
    /// `-- COMMAND [ARGS...]` for a stdio server, or its URL.
    #[arg(value_name = "COMMAND|URL", required = true, num_args = 1..,
          trailing_var_arg = true, allow_hyphen_values = true)]
    pub target: Vec<String>,
}

/// `--transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TransportArg {
    Stdio,
    Http,
    Sse,
}

/// A server named in one scope or either.
#[derive(Args)]
pub struct NameArgs {
    /// The server's name.
    pub name: String,
    /// The scope whose file to edit (needed when both have the name).
    #[arg(short, long, value_enum)]
    pub scope: Option<Scope>,
}

/// `tap mcp tools`.
#[derive(Args)]
pub struct ToolsArgs {
    /// The server's name.
    pub name: String,
    /// Turn this tool on again (its name as the server gives it, or as sessions see it).
    #[arg(long, value_name = "TOOL", conflicts_with = "disable")]
    pub enable: Option<String>,
    /// Leave this tool out of every session (adds it to `disabledTools`).
    #[arg(long, value_name = "TOOL")]
    pub disable: Option<String>,
    /// The scope whose file to edit (needed when both have the name).
    #[arg(short, long, value_enum)]
    pub scope: Option<Scope>,
    /// The session a project server runs for (when it runs for several).
    #[arg(long)]
    pub session: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The keys that say how a server is reached: what `add --force` replaces.
const TRANSPORT_KEYS: [&str; 8] = [
    "type", "command", "args", "env", "cwd", "url", "headers", "oauth",
];

impl AddArgs {
    /// The entry these flags describe (not yet checked by the gateway's parser).
    pub fn entry(&self) -> Result<Map<String, Value>, String> {
        let transport = match self.transport {
            Some(t) => t,
            None if self.target.len() == 1 && looks_like_url(&self.target[0]) => TransportArg::Http,
            None => TransportArg::Stdio,
        };
        let mut entry = Map::new();
        match transport {
            TransportArg::Stdio => {
                if !self.headers.is_empty() {
                    return Err("-H sets a header of an http or sse server; a stdio server takes environment variables (-e KEY=VALUE)".into());
                }
                let (command, args) = self.target.split_first().expect("clap requires one");
                entry.insert("command".into(), command.clone().into());
                entry.insert("args".into(), args.to_vec().into());
                let env = env_pairs(&self.env)?;
                if !env.is_empty() {
                    entry.insert("env".into(), Value::Object(env));
                }
            }
            TransportArg::Http | TransportArg::Sse => {
                if !self.env.is_empty() {
                    return Err("-e sets an environment variable of a stdio server; an http or sse server takes headers (-H 'Name: value')".into());
                }
                let [url] = self.target.as_slice() else {
                    return Err(format!(
                        "an {} server takes one URL, and options go before NAME; got {} words after NAME",
                        if transport == TransportArg::Sse { "sse" } else { "http" },
                        self.target.len()
                    ));
                };
                let kind = if transport == TransportArg::Sse {
                    "sse"
                } else {
                    "http"
                };
                entry.insert("type".into(), kind.into());
                entry.insert("url".into(), url.clone().into());
                let headers = header_pairs(&self.headers)?;
                if !headers.is_empty() {
                    entry.insert("headers".into(), Value::Object(headers));
                }
                if let Some(oauth) = self.oauth()? {
                    if transport == TransportArg::Sse {
                        return Err("the legacy sse transport has no OAuth sign-in: give it a static key with -H 'Authorization: @secret'".into());
                    }
                    entry.insert("oauth".into(), Value::Object(oauth));
                }
            }
        }
        if matches!(transport, TransportArg::Stdio) && self.oauth()?.is_some() {
            return Err("--client-id, --client-secret, --oauth-scope and --client-metadata-url are for an http server's sign-in".into());
        }
        Ok(entry)
    }

    /// The `"oauth"` entry the sign-in flags describe; `None` without any.
    fn oauth(&self) -> Result<Option<Map<String, Value>>, String> {
        let mut oauth = Map::new();
        if let Some(id) = &self.client_id {
            oauth.insert("clientId".into(), id.clone().into());
        }
        if let Some(secret) = &self.client_secret {
            if secret.is_empty() || secret.contains(['\r', '\n', '\0']) {
                return Err(
                    "--client-secret must be one non-empty line (its text is not shown)".into(),
                );
            }
            oauth.insert("clientSecret".into(), secret.clone().into());
        }
        if !self.oauth_scopes.is_empty() {
            oauth.insert("scopes".into(), self.oauth_scopes.clone().into());
        }
        if let Some(url) = &self.client_metadata_url {
            oauth.insert("clientMetadataUrl".into(), url.clone().into());
        }
        Ok((!oauth.is_empty()).then_some(oauth))
    }
}

fn looks_like_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

/// `new` followed by every key of `old` that does not say how the server is reached.
pub fn replace_transport(old: &Value, new: Map<String, Value>) -> Map<String, Value> {
    let mut merged = new;
    if let Some(old) = old.as_object() {
        for (k, v) in old {
            if !TRANSPORT_KEYS.contains(&k.as_str()) {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    merged
}

/// `-e KEY=VALUE`s. Errors name the key or the flag's position, never a value.
pub fn env_pairs(raw: &[String]) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (i, text) in raw.iter().enumerate() {
        let Some((key, value)) = text.split_once('=') else {
            return Err(format!(
                "-e number {} has no '=': it must be KEY=VALUE (its text is not shown: it may be a secret)",
                i + 1
            ));
        };
        if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c == '\0') {
            return Err(format!(
                "-e number {}: the variable's name before '=' must be non-empty, without spaces",
                i + 1
            ));
        }
        if value.contains('\0') {
            return Err(format!("-e {key}: the value holds a NUL character"));
        }
        if out.insert(key.to_string(), value.into()).is_some() {
            return Err(format!("-e {key} is given twice"));
        }
    }
    Ok(out)
}

/// `-H 'Name: value'`s. Errors name the header or the flag's position, never a value.
pub fn header_pairs(raw: &[String]) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (i, text) in raw.iter().enumerate() {
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!(
                "-H number {} has no ':': it must be 'Name: value' (its text is not shown: it may be a secret)",
                i + 1
            ));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(is_token_char) {
            return Err(format!(
                "-H number {}: the header's name before ':' must be non-empty, of letters, digits and !#$%&'*+-.^_`|~",
                i + 1
            ));
        }
        let value = value.trim();
        if value.chars().any(|c| matches!(c, '\r' | '\n' | '\0')) {
            return Err(format!("-H {name}: the value holds a line break"));
        }
        if out.keys().any(|k| k.eq_ignore_ascii_case(name)) {
            return Err(format!("-H {name} is given twice"));
        }
        out.insert(name.to_string(), value.into());
    }
    Ok(out)
}

/// RFC 9110's `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: ServersCommand,
    }

    fn add(args: &[&str]) -> Result<Value, String> {
        let cli = Cli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        let ServersCommand::Add(a) = cli.command else {
            panic!("not add")
        };
        a.entry().map(Value::Object)
    }

    #[test]
    fn a_command_after_the_separator_is_stdio_and_a_url_is_http() {
        assert_eq!(
            add(&["add", "-e", "K=v=w", "x", "--", "npx", "-y", "pkg"]).unwrap(),
            json!({"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v=w"}})
        );
        assert_eq!(
            add(&["add", "x", "node", "srv.js", "--port", "1"]).unwrap()["args"],
            json!(["srv.js", "--port", "1"])
        );
        assert_eq!(
            add(&["add", "-H", "Authorization: Bearer t", "x", "https://h/mcp"]).unwrap(),
            json!({"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}})
        );
        assert_eq!(
            add(&["add", "-t", "sse", "x", "http://h/sse"]).unwrap()["type"],
            "sse"
        );
    }

    #[test]
    fn wrong_flags_are_refused_without_showing_values() {
        let e = add(&["add", "-e", "s3cret", "x", "--", "cmd"]).unwrap_err();
        assert!(e.contains("-e number 1") && !e.contains("s3cret"), "{e}");
        let e = add(&["add", "-H", "Bearer s3cret", "x", "http://h"]).unwrap_err();
        assert!(e.contains("-H number 1") && !e.contains("s3cret"), "{e}");
        let e = add(&["add", "-e", "A=1", "-e", "A=2", "x", "--", "c"]).unwrap_err();
        assert!(e.contains("-e A is given twice"), "{e}");
        let e = add(&["add", "-H", "a: 1", "-H", "A: 2", "x", "http://h"]).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        assert!(add(&["add", "-e", "A=1", "x", "http://h"]).is_err());
        assert!(add(&["add", "-H", "A: 1", "x", "--", "cmd"]).is_err());
        assert!(add(&["add", "-t", "http", "x", "http://h", "extra"]).is_err());
        assert!(add(&["add", "x"]).is_err(), "a command or URL is required");
    }

    #[test]
    fn force_replaces_how_it_is_reached_and_keeps_the_rest() {
        let old = json!({"command": "old", "env": {"A": "1"}, "enabled": false, "x-mine": 1});
        let new = add(&["add", "x", "http://h"]).unwrap();
        let merged = replace_transport(&old, new.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(merged),
            json!({"type": "http", "url": "http://h", "enabled": false, "x-mine": 1})
        );
    }
}

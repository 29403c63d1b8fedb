//! MCP servers run as providers (`docs/mcp-servers.md`): what the control plane
//! (`mcpServers.*`), `tap mcp list` and the panel's Servers page say about them.

use serde::{Deserialize, Serialize};

/// Where a server is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum McpScope {
    /// `$TAP_HOME/mcp.json`: one instance, shared by every session.
    User,
    /// A workspace's `tap.config.json`: one instance per session opened there.
    Project,
}

/// How the gateway reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio,
    /// Streamable HTTP at a URL.
    Http,
    /// The legacy HTTP+SSE transport.
    Sse,
}

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum McpServerState {
    /// Configured with `"enabled": false`.
    Disabled,
    /// Not running: lazy and not needed yet, or stopped after its idle timeout.
    Stopped,
    /// Spawned or connecting; `initialize` not answered yet.
    Starting,
    /// Initialized; its tools are in the sessions that see it.
    Ready,
    /// It failed or exited; it is started again after a backoff.
    Restarting,
    /// It failed too often in a row; it stays stopped until restarted by the user.
    Parked,
    /// A remote server that wants the user to sign in (OAuth): it answered `401` and no
    /// stored token (or refresh) was accepted. It waits, not counted as failing, until the
    /// user signs in (`tap mcp login`, the panel's "Sign in").
    NeedsSignIn,
}

/// One server as `mcpServers.list` and `tap mcp list` show it. Never carries a secret:
/// `env` and header values are not shown, only their names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// Its name in the configuration (the default prefix of its tools).
    pub name: String,
    /// Where it is configured.
    pub scope: McpScope,
    /// The session a project server runs for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The file it is configured in.
    pub config_path: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// The command line (stdio) or the URL (remote).
    pub target: String,
    /// The names of the environment variables (stdio) or headers (remote) it is given.
    #[serde(default)]
    pub secret_names: Vec<String>,
    /// Where it is.
    pub state: McpServerState,
    /// The process id, while a stdio server runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The resident memory of that process (`VmRSS`), in bytes, when the system says
    /// (Linux). A remote server has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub memory_bytes: Option<u64>,
    /// The provider connection carrying its tools, while ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The server's own name and version, from `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<String>,
    /// The tools it offers, as sessions see them (prefixed), disabled ones left out.
    pub tools: Vec<String>,
    /// RFC 3339 time it became ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_since: Option<String>,
    /// Restarts after a failure since the gateway started (or the user restarted it).
    pub restarts: u32,
    /// The last failure, in words (kept after it recovers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Failures in a row that count toward parking it; a run that lasted long enough
    /// starts the count again.
    #[serde(default)]
    pub failures: u32,
    /// It is failing now: parked, waiting to restart after a failure, or starting again
    /// after one. What the tray and the Overview call out.
    #[serde(default)]
    pub failing: bool,
    /// The newest lines it wrote to stderr (a stdio server), oldest first.
    #[serde(default)]
    pub stderr_tail: Vec<String>,
    /// What in its configuration or its tools was refused (a bad key, a tool whose
    /// name collides), each in words.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// A remote server's OAuth sign-in, once it asked for one or a token is stored. Never
    /// holds a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<McpSignIn>,
}

/// Where a remote server's OAuth sign-in stands (`docs/mcp-servers.md`, "Remote servers
/// and sign-in"). The tokens themselves stay in the OS keyring or the 0600 secrets file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct McpSignIn {
    /// A token is stored for it (it may still be refused: then `state` is `needsSignIn`).
    pub signed_in: bool,
    /// A sign-in was started and waits for the browser to come back to the gateway.
    #[serde(default)]
    pub pending: bool,
    /// The scopes the stored token was granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// RFC 3339 time the access token expires (it is refreshed before that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The authorization server that issued it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Why it needs the user, in words (no sign-in yet, the sign-in expired, more scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The result of `mcpServers.signIn`: where to send the user's browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpSignInStart {
    /// The authorization server's page (PKCE S256, `state`, `resource`); it sends the
    /// browser back to the gateway's `/oauth/callback`.
    pub url: String,
    /// RFC 3339 time after which that page's answer is refused.
    pub expires_at: String,
}

/// The result of `mcpServers.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpServersList {
    /// User servers first, then project servers by session, each by name.
    pub servers: Vec<McpServerInfo>,
    /// Problems with the user file itself (it could not be read or parsed).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Names one server: a user server by name, a project server by name and session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct McpServerRef {
    /// Its name in the configuration.
    pub name: String,
    /// The session, for a project server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

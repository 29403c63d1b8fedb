//! The gateway status snapshot (`status.get`, `tap status --json`, the panel).

use super::BusyState;
use serde::{Deserialize, Serialize};

/// `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReply {
    /// The request's id.
    pub request_id: String,
    /// The snapshot.
    pub status: GatewayStatus,
}

/// A snapshot of the gateway, as `tap status --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// `ws://127.0.0.1:PORT`.
    pub address: String,
    /// Gateway version.
    pub version: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Milliseconds since start.
    pub uptime_ms: u64,
    /// Registered sessions.
    pub sessions: Vec<SessionStatus>,
    /// Provider connections past authentication.
    pub providers: Vec<ProviderStatus>,
    /// Whether history (stream events, traces) is kept on disk, and why not when it is not.
    /// Absent from gateways older than the ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<crate::ledger::LedgerState>,
}

/// One session in [`GatewayStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// Session id.
    pub id: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Foreground flag.
    pub foreground: bool,
    /// Busy or idle.
    pub state: BusyState,
    /// The owning host's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// The owning host's name (`hostName` in its `auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Whether the owning host is disconnected and may still resume.
    pub host_detached: bool,
    /// Current tool-set revision.
    pub tool_revision: u64,
    /// Names of all tools in the session.
    pub tools: Vec<String>,
}

/// One provider in [`GatewayStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    /// Debug id.
    pub id: String,
    /// Provider name (`null` before `hello`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Instance id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `internal`, `project` or `external`.
    pub trust: String,
    /// Connection state: `awaitAuth`, `awaitHello`, `bound`, `unbound`.
    pub state: String,
    /// The bound session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Declared tools.
    pub tools: Vec<String>,
    /// Calls in flight.
    pub in_flight: usize,
    /// Remote address.
    pub remote: String,
    /// RFC 3339 connection time.
    pub connected_at: String,
}

//! Sessions a host registers, ends and reports on, and what the gateway tells it about
//! them.

use super::HostCapabilities;
use crate::provider::SessionInfo;
use crate::Json;
use serde::{Deserialize, Serialize};

/// `session.register`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRegister {
    /// Echoed in the answer.
    pub request_id: String,
    /// The session id to use; the gateway makes one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Human label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Whether this is the session the user is looking at.
    #[serde(default)]
    pub foreground: bool,
    /// The profile (in `$TAP_HOME/profiles.json`) whose tools the session holds; absent:
    /// every tool. An unknown profile refuses the registration (`NOT_FOUND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The agent's mode as the host names it (`interactive`, `plan`, `autopilot`), when
    /// it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The model the agent uses, when the host knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the host can do (its dialogs, the modes it can switch to); absent: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<HostCapabilities>,
}

/// `session.registered`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRegistered {
    /// The request's id.
    pub request_id: String,
    /// The registered session.
    pub session: SessionInfo,
    /// Providers bound to every session (the MCP servers the gateway runs among them) are
    /// adding their tools: a host whose tool set is fixed once taken (the Copilot CLI in
    /// prompt mode) should wait briefly for the next `session.tools`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_pending: bool,
}

/// `session.end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnd {
    /// Echoed in `session.ended`.
    pub request_id: String,
    /// The session to end.
    pub session_id: String,
}

/// `session.ended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnded {
    /// The `session.end` request's id, when it answers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The ended session.
    pub session_id: String,
    /// Why it ended.
    pub reason: String,
}

/// `session.state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStateReport {
    /// The session.
    pub session_id: String,
    /// Busy or idle.
    pub state: BusyState,
    /// The agent's mode now; absent: unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The model now; absent: unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the host can do now, in full (it replaces what was reported); absent: unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<HostCapabilities>,
}

/// Whether a session is working on a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum BusyState {
    /// A turn is running.
    Busy,
    /// Nothing in flight.
    Idle,
}

/// `session.event` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostSessionEvent {
    /// The session.
    pub session_id: String,
    /// `user.message`, `assistant.message`, `tool.execution_complete`, `assistant.intent`.
    pub event: String,
    /// The payload, shaped as the Provider Interface's `session.event` table says.
    #[serde(default)]
    pub data: Json,
}

/// `session.warning`: a problem with the session's project providers (its `tap.config.json`
/// is invalid, a provider cannot start, or keeps crashing and was given up). The session
/// itself is unaffected; show `message` to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionWarning {
    /// The session.
    pub session_id: String,
    /// What went wrong, for the user.
    pub message: String,
    /// The `tap.config.json` concerned (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The project provider concerned (its `name` in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

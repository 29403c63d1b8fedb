//! The sessions a provider sees: the session list, readiness and shutdown, forwarded
//! session events and lifecycle changes.

use crate::Json;
use serde::{Deserialize, Serialize};

/// `sessions` and `sessions.updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sessions {
    /// Token for reconnecting, after pairing only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Active sessions.
    pub active: Vec<SessionInfo>,
}

/// One entry of `sessions.active`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Globally unique session id.
    pub id: String,
    /// Human label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory (only where the provider is authorized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Whether this is the foreground session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground: Option<bool>,
}

/// `session.ready` and `shutdown.ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    /// The session concerned.
    pub session_id: String,
}

/// `session.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    /// The session.
    pub session_id: String,
    /// `user.message`, `assistant.message`, `tool.execution_complete`, `assistant.intent`.
    pub event: String,
    /// The event payload.
    pub data: Json,
}

/// `session.lifecycle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionLifecycle {
    /// The session.
    pub session_id: String,
    /// The new state.
    pub state: LifecycleState,
    /// Milliseconds left before teardown (`shutdown.pending` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
}

/// A `session.lifecycle` state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LifecycleState {
    /// The session is ready.
    #[serde(rename = "started")]
    Started,
    /// The session has no work in flight.
    #[serde(rename = "idle")]
    Idle,
    /// The session is ending; clean up before the deadline.
    #[serde(rename = "shutdown.pending")]
    ShutdownPending,
}

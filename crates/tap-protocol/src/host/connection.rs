//! A host connection's own messages: authenticate (or resume), and refusals.

use crate::ErrorCode;
use serde::{Deserialize, Serialize};

/// `auth` (host).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostAuth {
    /// The host token from `$TAP_HOME/host-token`.
    pub token: String,
    /// Must be 1.
    pub protocol_version: u32,
    /// A name for logs and the panel, e.g. `tap-cli` or `copilot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// The `resumeToken` of an earlier connection, to take its sessions back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_token: Option<String>,
    /// On a resume: the `callId`s this host sent and still waits on. Each gets exactly one
    /// terminal answer on the new connection, even if the old socket lost it (at most
    /// `limits::MAX_RESUME_PENDING_CALLS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_calls: Option<Vec<String>>,
}

/// `auth.ok`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostAuthOk {
    /// Always 1.
    pub protocol_version: u32,
    /// This host's id.
    pub host_id: String,
    /// Send this in `auth.resumeToken` on a reconnect within 30 s to take this host's
    /// sessions back.
    pub resume_token: String,
    /// Sessions taken back by the resume (empty on a fresh connection).
    #[serde(default)]
    pub resumed: Vec<String>,
}

/// A request that carries nothing but its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRef {
    /// Echoed in the answer.
    pub request_id: String,
}

/// `error` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostError {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human explanation.
    pub message: String,
    /// The `type` of the refused request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The refused request's `requestId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

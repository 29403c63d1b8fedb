//! A connection's own messages: authenticate (or pair), register with `hello`, leave with
//! `goodbye`, and the gateway's generic answers to updates (`ack`) and refusals (`error`).

use super::{Concurrency, Hooks, ToolDef};
use crate::{ErrorCode, JsonObject};
use serde::{Deserialize, Serialize};

/// `auth`: either `token` or `mode: "pair"`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Auth {
    /// Gateway token, per-provider token, or a token issued by pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `"pair"` to start the pairing flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Extension (pairing only): a name to show the user with the pairing request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Extension (pairing only): details to show the user with the pairing request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

/// `auth.confirm`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthConfirm {
    /// The 6-digit code the user typed.
    pub code: String,
}

/// `auth.pairing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthPairing {
    /// What the provider should ask the user.
    pub prompt: String,
}

/// `hello`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Stable provider identity.
    pub name: String,
    /// Must be 2.
    pub protocol_version: u32,
    /// Session id to bind to, or `"all"`; omitted by gateway-spawned providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Instance id for multi-instance providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Token from a previous `hello.ack`, to restore a binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_token: Option<String>,
    /// Injected once into the session's start context.
    #[serde(
        default,
        rename = "startup_context",
        skip_serializing_if = "Option::is_none"
    )]
    pub startup_context: Option<String>,
    /// Provider-specific information shown for routing decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tool definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDef>>,
    /// Hook rules and transforms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Hooks>,
    /// Session event types to receive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<Vec<String>>,
    /// Ambient context added to every prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Concurrency limit for tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
}

/// `hello.ack`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelloAck {
    /// Always 2.
    pub protocol_version: u32,
    /// Stable debug id.
    pub provider_id: String,
    /// The bound session (`"all"` for broadcast binding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Include in a later `hello` to restore this binding (valid 30 s after disconnect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_token: Option<String>,
    /// A directory for the provider's cross-session state (local providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persist_dir: Option<String>,
}

/// `goodbye`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Goodbye {
    /// Why the provider leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `ack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ack {
    /// The update's `requestId`.
    pub request_id: String,
    /// The session the revision applies to.
    pub session_id: String,
    /// Revision per (provider, session), monotonically increasing.
    pub revision: u64,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorMessage {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human explanation.
    pub message: String,
    /// The `type` of the message being answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The `requestId` of the failed update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The provider's debug id, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The session concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl ErrorMessage {
    /// An error with just a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            reply_to: None,
            request_id: None,
            provider_id: None,
            session_id: None,
        }
    }
}

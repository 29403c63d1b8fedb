//! A session's tool set, tool invocations, and the pre-tool-use decision.

use crate::{ErrorCode, Json, JsonObject, JsonText};
use serde::{Deserialize, Serialize};

/// `session.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTools {
    /// The session.
    pub session_id: String,
    /// Increases with every change of this session's tool set.
    pub revision: u64,
    /// The complete tool set.
    pub tools: Vec<HostTool>,
}

/// A tool as a session host sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostTool {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: JsonText,
    /// The provider's name.
    pub provider: String,
    /// The provider's debug id.
    pub provider_id: String,
    /// Call timeout in milliseconds the gateway enforces.
    pub timeout_ms: u64,
}

/// `tool.invoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvoke {
    /// Host-chosen id, unique on this connection; echoed in progress and result.
    pub call_id: String,
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    #[serde(default = "empty_object")]
    pub args: Json,
    /// The host's W3C trace context (`00-<trace>-<span>-<flags>`): the call's spans join
    /// that trace, under that span. Absent: the call starts a trace of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

fn empty_object() -> Json {
    Json::Object(JsonObject::new())
}

/// `tool.cancel` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolCancel {
    /// The invocation's `callId`.
    pub call_id: String,
}

/// `tool.progress` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolProgress {
    /// The invocation's `callId`.
    pub call_id: String,
    /// Status text from the provider.
    pub message: String,
}

/// `tool.result` (host): `data` on success, `error` + `errorCode` on failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolResult {
    /// The invocation's `callId`.
    pub call_id: String,
    /// Success payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Json>,
    /// Failure message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failure code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
}

/// `tool.precheck`: what the session host is about to do, asked before it does it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPrecheck {
    /// Echoed in `tool.decision`.
    pub request_id: String,
    /// The session about to use the tool.
    pub session_id: String,
    /// Tool name (a provider's tool or one of the agent runtime's own, e.g. `shell`).
    pub tool: String,
    /// The arguments the tool would get.
    #[serde(default = "empty_object")]
    pub args: Json,
}

/// `tool.decision`: the combined outcome of every matching hook rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDecision {
    /// The `tool.precheck`'s `requestId`.
    pub request_id: String,
    /// `allow`, `deny` or `context` (allow, adding `context`).
    pub decision: PrecheckDecision,
    /// Why the use is denied (with `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Context to add to the conversation (with `context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// The decision of a `tool.precheck`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrecheckDecision {
    /// Go ahead.
    Allow,
    /// Do not use the tool; tell the model `reason`.
    Deny,
    /// Go ahead, and add `context`.
    Context,
}

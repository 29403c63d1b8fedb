//! Params and results of the `playground.*` methods: the panel's tool playground, where the
//! user calls a session's tools by hand through the same call path a session host uses.

use crate::{ErrorCode, Json};
use serde::{Deserialize, Serialize};

/// Params of `playground.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct PlaygroundOpenParams {
    /// A session id or label to join, or the label of a new session to register.
    pub name: String,
    /// The working directory of a newly registered session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Result of `playground.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundSession {
    /// The gateway session the playground holds.
    pub session_id: String,
    /// The name it was opened with.
    pub name: String,
    /// `true` when the playground registered the session (it ends once released and no
    /// other client holds it), `false` when it joined one another host owns.
    pub owned: bool,
}

/// Params naming one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundSessionRef {
    /// The session's id.
    pub session_id: String,
}

/// Result of `playground.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundTools {
    /// The session.
    pub session_id: String,
    /// The session's tool set as its host sees it, by name.
    pub tools: Vec<PlaygroundTool>,
}

/// One tool, as a session host sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundTool {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Json,
    /// The provider's name.
    pub provider: String,
    /// Call timeout in milliseconds the gateway enforces.
    pub timeout_ms: u64,
}

/// Params of `playground.call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundCallParams {
    /// Chosen by the client, unique among its calls in flight; names the call in
    /// `playground.progress` and `playground.cancel`.
    pub call_id: String,
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments (a JSON object).
    pub args: Json,
}

/// Result of `playground.call`, sent when the call ends. A call that ran and failed (the
/// provider's error, a hook's deny, a timeout, invalid arguments) is a result with
/// `error`; a request that could not start a call is an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundCallResult {
    /// The call.
    pub call_id: String,
    /// From the request to the outcome, hook checks included.
    pub duration_ms: u64,
    /// The tool's result, on success; also beside `error` for an MCP server's result with
    /// `isError: true` (`TOOL_ERROR`), so the result object is still shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Json>,
    /// What went wrong, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<PlaygroundCallError>,
    /// Context hook rules added to the call (an agent would read it with the result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The call's trace (`traces.get`), once the history has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// A failed call: the error code (`DENIED` for a hook rule's deny) and its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlaygroundCallError {
    /// `NOT_FOUND`, `TIMEOUT`, `CANCELLED`, `DENIED`, `INVALID_JSON`, a provider's own code…
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
}

/// Params of `playground.cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundCallRef {
    /// The call's `callId`.
    pub call_id: String,
}

/// Marks a method the handler answers later, from a task of its own, with a `T`: the
/// connection sends no response when the handler returns.
#[derive(Debug)]
pub struct Later<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Later<T> {
    /// The handler has taken the request and will answer it.
    pub fn accepted() -> Self {
        Self(std::marker::PhantomData)
    }
}

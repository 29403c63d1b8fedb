//! The SDK's failures a handler or a tool definition meets: a tool's error (`ToolError`,
//! what the caller gets as `errorCode` and message) and a schema that does not compile.
//! Apart from `tool`, so the result types (`output`) and the configuration (`types`) name
//! them without importing the tool machinery.

use serde_json::Value as Json;
use tap_protocol::ErrorCode;

/// A tool's failure: an error code (`INTERNAL` unless the handler says otherwise) and a
/// message the agent reads. (Not a `std::error::Error` itself, so that any error converts
/// into it with `?`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The code the caller gets as `errorCode`.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
    /// Another instance of the provider may succeed (`retryable` in `tool.result`).
    pub retryable: bool,
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl ToolError {
    /// A failure with `code`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: parse_code(code.into()),
            message: message.into(),
            retryable: false,
        }
    }

    /// `INTERNAL` with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new("INTERNAL", message)
    }
}

/// A code as the wire spells it: one the protocol names, or any other kept verbatim.
pub(crate) fn parse_code(code: String) -> ErrorCode {
    serde_json::from_value(Json::String(code.clone())).unwrap_or(ErrorCode::Other(code))
}

/// Any error a handler returns with `?` becomes `INTERNAL` with its message.
impl<E: std::error::Error> From<E> for ToolError {
    fn from(e: E) -> Self {
        Self::internal(e.to_string())
    }
}

/// The schema does not compile.
#[derive(Debug, thiserror::Error)]
#[error("tool '{tool}': 'parameters' is not a usable JSON Schema: {why}")]
pub struct BadSchema {
    /// The tool.
    pub tool: String,
    /// The compiler's reason.
    pub why: String,
}

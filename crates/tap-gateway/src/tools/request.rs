//! What a caller hands the call path, and the failure it may get back.

use tap_protocol::{ErrorCode, Json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A tool invocation from a session host (or from in-process code).
#[derive(Debug, Default)]
pub struct CallRequest {
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Json,
    /// Cancelled by the caller: the provider gets `tool.cancel`, the call ends `CANCELLED`.
    pub cancel: CancellationToken,
    /// Where `tool.progress` messages go.
    pub progress: Option<mpsc::UnboundedSender<String>>,
    /// The caller's W3C trace context (`traceparent`): the call's `tool.call` span joins
    /// that trace under that span. `None`: a trace of its own.
    pub traceparent: Option<String>,
    /// On whose behalf: the gateway's built-in tools protect what the user owns from the
    /// agent.
    pub caller: Caller,
}

/// Who makes a call.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The session's agent (a session host, an MCP client): the default.
    #[default]
    Agent,
    /// The user, through the panel's playground or the CLI.
    User,
}

/// The failure outcome of a call: a spec error code and a human message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    /// `NOT_FOUND`, `TIMEOUT`, `CANCELLED`, `DISCONNECTED`, `INTERNAL`, a provider's own code…
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
    /// The provider said `retryable: true` (another instance may succeed).
    pub(crate) retryable: bool,
}

impl From<(ErrorCode, String)> for CallError {
    fn from((code, message): (ErrorCode, String)) -> Self {
        Self::new(code, message)
    }
}

impl CallError {
    /// A call error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
        }
    }
}

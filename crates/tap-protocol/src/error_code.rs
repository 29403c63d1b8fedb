use serde::{Deserialize, Serialize};
use std::fmt;

/// Every machine-readable error code on the wire: the spec's `error.code` values and its
/// `tool.result.errorCode` values, plus `DENIED` for a pre-tool-use hook that blocked a call.
///
/// Unknown codes sent by a peer (a provider may invent its own `errorCode`) are kept as
/// [`ErrorCode::Other`] rather than rejected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Bad or missing token, wrong pairing code. Fatal: the connection closes.
    AuthFailed,
    /// `hello.protocolVersion` is not 2. Fatal: the connection closes.
    UnsupportedVersion,
    /// The session does not exist or is outside the peer's authorized sessions.
    InvalidSession,
    /// Another connection already holds this `name` + `instance`.
    DuplicateInstance,
    /// A tool name is already registered in the session by another provider.
    ToolConflict,
    /// A rate or queue limit was hit; back off and retry.
    RateLimited,
    /// A message or a list exceeds its size limit.
    PayloadTooLarge,
    /// The peer's trust level does not allow this operation.
    Unauthorized,
    /// The frame is not JSON, or a known message has missing or mistyped fields.
    InvalidJson,
    /// The message `type` is not one this gateway knows.
    UnknownType,
    /// Tool result: the thing asked for does not exist (also: no such tool).
    NotFound,
    /// Tool result: the call ran past its timeout.
    Timeout,
    /// Tool result: the call was cancelled.
    Cancelled,
    /// Tool result: the provider disconnected (or the gateway stopped) before answering.
    Disconnected,
    /// Tool result: the provider failed for its own reasons.
    Internal,
    /// Tool result: a pre-tool-use hook denied the call.
    Denied,
    /// Any other code a peer sent; kept verbatim.
    #[serde(untagged)]
    Other(String),
}

impl ErrorCode {
    /// The wire spelling, e.g. `"AUTH_FAILED"`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::AuthFailed => "AUTH_FAILED",
            Self::UnsupportedVersion => "UNSUPPORTED_VERSION",
            Self::InvalidSession => "INVALID_SESSION",
            Self::DuplicateInstance => "DUPLICATE_INSTANCE",
            Self::ToolConflict => "TOOL_CONFLICT",
            Self::RateLimited => "RATE_LIMITED",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::InvalidJson => "INVALID_JSON",
            Self::UnknownType => "UNKNOWN_TYPE",
            Self::NotFound => "NOT_FOUND",
            Self::Timeout => "TIMEOUT",
            Self::Cancelled => "CANCELLED",
            Self::Disconnected => "DISCONNECTED",
            Self::Internal => "INTERNAL",
            Self::Denied => "DENIED",
            Self::Other(s) => s,
        }
    }

    /// Whether the spec says the connection closes after this error.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::AuthFailed | Self::UnsupportedVersion)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

//! The engine's errors. [`Error`] is the one error of the façade and of the rooms: a
//! machine-readable [`ErrorCode`] and a human message, which a boundary hands a peer as
//! its protocol's error frame (`error` to a provider, a control or host-protocol error, an
//! MCP tool failure) with code and message unchanged. [`GatewayError`] is apart: it is why
//! the gateway could not start or stop at all, with an I/O cause to keep, and has no peer
//! to answer and no code to give one.

use std::io;
use std::path::PathBuf;
use tap_protocol::ErrorCode;

/// Why an engine operation failed: the spec's error code (`NOT_FOUND`, `INVALID_JSON`,
/// `INTERNAL`, a provider's own…) and what happened, for a person. It displays as the
/// message alone; the code is for machines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// The machine-readable code.
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
    /// A tool call's provider said `retryable: true` (another instance may succeed).
    /// Always `false` elsewhere.
    pub(crate) retryable: bool,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
        }
    }

    /// An `INTERNAL` error: the gateway's own failure (a file, the database), not the
    /// caller's mistake.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// An `INVALID_JSON` error: a value the caller sent is malformed or out of range.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidJson, message)
    }
}

/// A peer's control-plane answer carries the error as it is.
impl From<Error> for tap_protocol::control::ControlError {
    fn from(e: Error) -> Self {
        Self::new(e.code, e.message)
    }
}

/// Why the gateway could not start or stop cleanly. Peer mistakes are never this type:
/// they go back to the peer as protocol errors.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The listener is bound to an address other than loopback.
    #[error("refusing to serve on {0}: the gateway only listens on loopback (127.0.0.1 or ::1)")]
    NotLoopback(std::net::SocketAddr),
    /// A token or state file could not be written or removed.
    #[error("cannot write {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Socket-level failure.
    #[error(transparent)]
    Io(#[from] io::Error),
}

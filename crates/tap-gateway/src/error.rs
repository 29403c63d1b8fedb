use std::io;
use std::path::PathBuf;

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

//! The types a provider's builder, handle and connection share.

use crate::discovery::Endpoint;
use crate::tool::Tool;
use serde_json::Value as Json;
use std::sync::Arc;
use tap_protocol::provider::{Hooks, SessionInfo};
use tap_protocol::ErrorCode;

/// Picks a session id from the active sessions (`None`: none fits yet).
pub type Chooser = Arc<dyn Fn(&[SessionInfo]) -> Option<String> + Send + Sync>;

/// Which session to bind to.
#[derive(Clone)]
pub enum SessionChoice {
    /// The foreground session (the one the user works in); waits for one if none exists.
    Foreground,
    /// The session with this id or label; waits for it.
    Named(String),
    /// Every session (`"all"`).
    All,
    /// The first session `choose` picks; asked again whenever the list changes.
    Chooser(Chooser),
}

/// What can go wrong before the provider is bound.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No token found.
    #[error(transparent)]
    NoToken(#[from] crate::discovery::NoToken),
    /// The socket could not be opened or broke.
    #[error("cannot reach the gateway at {url}: {why}")]
    Unreachable {
        /// Where.
        url: String,
        /// Why.
        why: String,
    },
    /// The gateway refused (`AUTH_FAILED`, `DUPLICATE_INSTANCE`, `TOOL_CONFLICT`, …).
    #[error("the gateway refused: {code}: {message}")]
    Refused {
        /// Its code.
        code: ErrorCode,
        /// Its message.
        message: String,
    },
}

/// Something the provider hears besides tool calls.
#[derive(Debug, Clone)]
pub enum Event {
    /// A `session.event` it subscribed to (`user.message`, `tool.start`, …).
    Session {
        /// The session.
        session_id: String,
        /// The event type.
        event: String,
        /// Its data.
        data: Json,
    },
    /// The bound session went idle.
    Idle(String),
    /// An `error` the gateway sent about something the provider did (`RATE_LIMITED` for a
    /// push over the budget, `PAYLOAD_TOO_LARGE`, …).
    Error {
        /// Its code.
        code: ErrorCode,
        /// Its message.
        message: String,
        /// The message type it answers.
        reply_to: Option<String>,
    },
    /// The socket dropped; the SDK reconnects.
    Disconnected,
    /// Bound again after a drop; `restored` when the reconnect token brought the binding
    /// back (within 30 s), else a fresh bind.
    Reconnected {
        /// Whether the binding was restored.
        restored: bool,
    },
}

/// Options of a push.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// The stream (default: the provider's name).
    pub stream: Option<String>,
    /// Metadata stored with the event.
    pub metadata: Option<serde_json::Map<String, Json>>,
    /// For `inject`: the prompt of the turn to start.
    pub prompt: Option<String>,
}

/// What the builder collected: everything a (re)connection needs.
pub struct Config {
    pub(crate) name: String,
    pub(crate) instance: Option<String>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) session: SessionChoice,
    pub(crate) hooks: Option<Hooks>,
    pub(crate) context: Option<String>,
    pub(crate) subscribe: Vec<String>,
    pub(crate) endpoint: Option<Endpoint>,
}

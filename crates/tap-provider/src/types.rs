//! The types a provider's builder, handle and connection share.

use crate::discovery::Endpoint;
use serde_json::Value as Json;
use std::sync::Arc;
use tap_protocol::provider::{Concurrency, SessionInfo};
use tap_protocol::{ErrorCode, JsonObject};

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

impl SessionChoice {
    /// A [`SessionChoice::Chooser`] from a closure.
    pub fn chooser(f: impl Fn(&[SessionInfo]) -> Option<String> + Send + Sync + 'static) -> Self {
        Self::Chooser(Arc::new(f))
    }
}

/// What can go wrong: before the provider is bound ([`crate::Builder::connect`]), or with a
/// request the gateway answers (pushes, updates, queries).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No token found.
    #[error(transparent)]
    NoToken(#[from] crate::discovery::NoToken),
    /// A tool's schema does not compile (from [`crate::Builder::tool_fn`]).
    #[error(transparent)]
    BadSchema(#[from] crate::errors::BadSchema),
    /// The socket could not be opened or broke.
    #[error("cannot reach the gateway at {url}: {why}")]
    Unreachable {
        /// Where.
        url: String,
        /// Why.
        why: String,
    },
    /// The gateway refused (`AUTH_FAILED`, `DUPLICATE_INSTANCE`, `TOOL_CONFLICT`,
    /// `RATE_LIMITED` for a push over the budget, …).
    #[error("the gateway refused: {code}: {message}")]
    Refused {
        /// Its code.
        code: ErrorCode,
        /// Its message.
        message: String,
    },
    /// The socket dropped (or the provider closed) before the gateway answered. An update
    /// still stands: the next bind declares it.
    #[error("the connection to the gateway closed before it answered")]
    Disconnected,
    /// The gateway did not answer within [`crate::REQUEST_TIMEOUT`].
    #[error("no answer to '{0}' within the request timeout")]
    Timeout(&'static str),
}

impl Error {
    /// The gateway's code, for a refusal.
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            Self::Refused { code, .. } => Some(code),
            _ => None,
        }
    }

    /// A push refused for the budget (10 `surface`/`inject` per second per session).
    pub fn is_rate_limited(&self) -> bool {
        self.code() == Some(&ErrorCode::RateLimited)
    }
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
    /// An `error` the gateway sent about something the provider did that nothing awaited
    /// (a push whose [`crate::Pushed`] was dropped, a filter set again after a bind, …),
    /// or a transform handler's failure (`reply_to: "transform.request"`).
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
    /// Bound again after a drop; `restored` when the gateway gave the binding back under
    /// the same provider id (the reconnect token, within 30 s), else a fresh bind.
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
    pub metadata: Option<JsonObject>,
    /// For `inject`: the prompt of the turn to start.
    pub prompt: Option<String>,
}

impl PushOptions {
    /// Options naming only the stream.
    pub fn stream(stream: impl Into<String>) -> Self {
        Self {
            stream: Some(stream.into()),
            ..Default::default()
        }
    }
}

/// What never changes after the builder: everything a (re)connection needs besides the
/// declaration (tools, hooks, context, filters), which updates change.
pub(crate) struct Config {
    pub name: String,
    pub instance: Option<String>,
    pub session: SessionChoice,
    pub subscribe: Vec<String>,
    pub endpoint: Option<Endpoint>,
    pub metadata: Option<JsonObject>,
    pub startup_context: Option<String>,
    pub concurrency: Option<Concurrency>,
}

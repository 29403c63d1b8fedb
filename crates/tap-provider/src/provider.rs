//! Building a provider and the handle to a running one.

use crate::conn::{self, Command, Shared};
use crate::discovery::{discover, Endpoint, ProcessEnv};
use crate::tool::Tool;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tap_protocol::provider::{Hooks, PushLevel, SessionInfo};
use tap_protocol::ErrorCode;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

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

/// Builds a provider: `Provider::builder("name").tool(t).connect().await`.
pub struct Builder {
    pub(crate) name: String,
    pub(crate) instance: Option<String>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) session: SessionChoice,
    pub(crate) hooks: Option<Hooks>,
    pub(crate) context: Option<String>,
    pub(crate) subscribe: Vec<String>,
    pub(crate) endpoint: Option<Endpoint>,
}

impl Builder {
    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Declares this provider one instance of several (`hello.instance`).
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }

    /// Which session to bind to (default: the foreground one).
    pub fn session(mut self, choice: SessionChoice) -> Self {
        self.session = choice;
        self
    }

    /// Hook rules and transforms (`hello.hooks`).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Ambient context added to every prompt of the session.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Session events to receive as [`Event::Session`].
    pub fn subscribe(mut self, events: &[&str]) -> Self {
        self.subscribe = events.iter().map(|e| e.to_string()).collect();
        self
    }

    /// Connects here instead of discovering the gateway.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Self {
        self.endpoint = Some(endpoint);
        self
    }

    /// Finds the gateway, authenticates, binds (waiting for a matching session), and
    /// starts answering calls.
    pub async fn connect(self) -> Result<Provider, ConnectError> {
        let endpoint = match self.endpoint.clone() {
            Some(e) => e,
            None => discover(&ProcessEnv)?,
        };
        let (events, _) = broadcast::channel(crate::EVENT_BUFFER);
        let shared = Arc::new(Shared {
            tools: Mutex::new(
                self.tools
                    .iter()
                    .map(|t| (t.def.name.clone(), t.clone()))
                    .collect::<HashMap<_, _>>(),
            ),
            events: events.clone(),
        });
        let (bound, session_id) = conn::bind(&self, &endpoint, &shared, None).await?;
        let (commands, rx) = mpsc::unbounded_channel();
        let (ended_tx, ended) = watch::channel(None);
        let provider_id = bound.provider_id.clone();
        tokio::spawn(conn::run(self, endpoint, shared, bound, rx, ended_tx));
        Ok(Provider {
            commands,
            events,
            session_id,
            provider_id,
            ended,
        })
    }
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

/// A running provider. Dropping it leaves it running; [`Provider::close`] says goodbye.
pub struct Provider {
    commands: mpsc::UnboundedSender<Command>,
    events: broadcast::Sender<Event>,
    session_id: String,
    provider_id: String,
    ended: watch::Receiver<Option<String>>,
}

impl Provider {
    /// A builder for a provider named `name`.
    pub fn builder(name: impl Into<String>) -> Builder {
        Builder {
            name: name.into(),
            instance: None,
            tools: Vec::new(),
            session: SessionChoice::Foreground,
            hooks: None,
            context: None,
            subscribe: Vec::new(),
            endpoint: None,
        }
    }

    /// The session it bound to first (or `"all"`).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The gateway's id for this connection.
    pub fn provider_id(&self) -> &str {
        &self.provider_id
    }

    /// Everything it hears besides calls, from now on.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Pushes `event` at `level` into the bound session's stream. A push over the budget
    /// (10 `surface`/`inject` per second per session) is refused by the gateway with
    /// `RATE_LIMITED`, which arrives as an [`Event::Error`]; `keep` pushes have no budget.
    pub fn push(&self, level: PushLevel, event: impl Into<String>, options: PushOptions) {
        let _ = self.commands.send(Command::Push {
            level,
            event: event.into(),
            options,
        });
    }

    /// Replaces the tool set (`tools.update`); returns once the session's host has it.
    pub async fn set_tools(&self, tools: Vec<Tool>) -> Result<(), ConnectError> {
        let (done, answer) = oneshot::channel();
        let _ = self.commands.send(Command::SetTools { tools, done });
        answer.await.unwrap_or_else(|_| {
            Err(ConnectError::Refused {
                code: ErrorCode::Disconnected,
                message: "the provider stopped".into(),
            })
        })
    }

    /// Runs until the provider ends (its session ended and it said goodbye, or
    /// [`Provider::close`]); returns why.
    pub async fn run(&mut self) -> String {
        loop {
            if let Some(why) = self.ended.borrow().clone() {
                return why;
            }
            if self.ended.changed().await.is_err() {
                return "the provider task ended".into();
            }
        }
    }

    /// Says goodbye and closes.
    pub async fn close(mut self) {
        let _ = self.commands.send(Command::Close);
        self.run().await;
    }
}

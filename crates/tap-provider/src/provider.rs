//! Building a provider and the handle to a running one.

use crate::conn::{self, Command, Shared};
use crate::discovery::{discover, Endpoint, ProcessEnv};
use crate::tool::Tool;
use crate::types::{Config, ConnectError, Event, PushOptions, SessionChoice};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tap_protocol::provider::{Hooks, PushLevel};
use tap_protocol::ErrorCode;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Builds a provider: `Provider::builder("name").tool(t).connect().await`.
pub struct Builder(Config);

impl Builder {
    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.0.tools.push(tool);
        self
    }

    /// Declares this provider one instance of several (`hello.instance`).
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.0.instance = Some(instance.into());
        self
    }

    /// Which session to bind to (default: the foreground one).
    pub fn session(mut self, choice: SessionChoice) -> Self {
        self.0.session = choice;
        self
    }

    /// Hook rules and transforms (`hello.hooks`).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.0.hooks = Some(hooks);
        self
    }

    /// Ambient context added to every prompt of the session.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.0.context = Some(context.into());
        self
    }

    /// Session events to receive as [`Event::Session`].
    pub fn subscribe(mut self, events: &[&str]) -> Self {
        self.0.subscribe = events.iter().map(|e| e.to_string()).collect();
        self
    }

    /// Connects here instead of discovering the gateway.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Self {
        self.0.endpoint = Some(endpoint);
        self
    }

    /// Finds the gateway, authenticates, binds (waiting for a matching session), and
    /// starts answering calls.
    pub async fn connect(self) -> Result<Provider, ConnectError> {
        let config = self.0;
        let endpoint = match config.endpoint.clone() {
            Some(e) => e,
            None => discover(&ProcessEnv)?,
        };
        let (events, _) = broadcast::channel(crate::EVENT_BUFFER);
        let shared = Arc::new(Shared {
            tools: Mutex::new(
                config
                    .tools
                    .iter()
                    .map(|t| (t.def.name.clone(), t.clone()))
                    .collect::<HashMap<_, _>>(),
            ),
            events: events.clone(),
        });
        let (bound, session_id) = conn::bind(&config, &endpoint, &shared, None).await?;
        let (commands, rx) = mpsc::unbounded_channel();
        let (ended_tx, ended) = watch::channel(None);
        let provider_id = bound.provider_id.clone();
        tokio::spawn(conn::run(config, endpoint, shared, bound, rx, ended_tx));
        Ok(Provider {
            commands,
            events,
            session_id,
            provider_id,
            ended,
        })
    }
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
        Builder(Config {
            name: name.into(),
            instance: None,
            tools: Vec::new(),
            session: SessionChoice::Foreground,
            hooks: None,
            context: None,
            subscribe: Vec::new(),
            endpoint: None,
        })
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

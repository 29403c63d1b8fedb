//! Building a provider and the handle to a running one.

use crate::bind;
use crate::conn::{self, Command};
use crate::discovery::{discover, Endpoint, ProcessEnv};
use crate::errors::{BadSchema, ToolError};
use crate::hooks::{gate_handler, Transform};
use crate::output::Output;
use crate::requests::History;
use crate::state::{Binding, Declaration, Shared};
use crate::tool::{CallContext, Tool};
use crate::types::{Config, Error, Event, PushOptions, SessionChoice};
use crate::Verdict;
use serde_json::Value as Json;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tap_protocol::provider::{
    Concurrency, ContextUpdate, FilterRule, FilterSet, GateCheck, HookRule, Hooks, HooksUpdate,
    ProviderMessage, Push, PushLevel, ToolsUpdate,
};
use tap_protocol::JsonObject;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Builds a provider: `Provider::builder("name").tool(t).connect().await`.
pub struct Builder {
    config: Config,
    decl: Declaration,
    /// A [`Builder::tool_fn`] whose schema did not compile: `connect` reports it.
    bad: Option<BadSchema>,
}

impl Builder {
    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.decl.tools.push(tool);
        self
    }

    /// Adds a tool made as [`Tool::new`] makes it; a schema that does not compile makes
    /// `connect` fail with [`Error::BadSchema`].
    pub fn tool_fn<F, Fut, T>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Json,
        handler: F,
    ) -> Self
    where
        F: Fn(Json, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
        T: Into<Output>,
    {
        match Tool::new(name, description, parameters, handler) {
            Ok(t) => self.tool(t),
            Err(e) => Self {
                bad: self.bad.or(Some(e)),
                ..self
            },
        }
    }

    /// Declares this provider one instance of several (`hello.instance`).
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.config.instance = Some(instance.into());
        self
    }

    /// Which session to bind to (default: the foreground one).
    pub fn session(mut self, choice: SessionChoice) -> Self {
        self.config.session = choice;
        self
    }

    /// Hook rules and static transforms as the protocol spells them (`hello.hooks`).
    /// A `callback` transform given this way has no handler; use [`Builder::transform`].
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.decl.rules = hooks.on_pre_tool_use.unwrap_or_default();
        for (section, t) in hooks.transforms.unwrap_or_default() {
            if let Some(t) = t {
                self.decl
                    .transforms
                    .insert(section, Transform::from_wire(t));
            }
        }
        self
    }

    /// Adds a hook rule (see [`crate::deny_rule`], [`crate::gate_rule`], …).
    pub fn rule(mut self, rule: HookRule) -> Self {
        self.decl.rules.push(rule);
        self
    }

    /// Answers the `gate.check`s of rules with `gateId` `id` (see [`crate::gate_rule`]).
    /// The gateway waits 5 s for the verdict and denies after that (unless the rule is
    /// `fail_open`); a panicking handler denies.
    pub fn gate<F, Fut>(mut self, id: impl Into<String>, handler: F) -> Self
    where
        F: Fn(GateCheck) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Verdict> + Send + 'static,
    {
        self.decl.gates.insert(id.into(), gate_handler(handler));
        self
    }

    /// Transforms a prompt section (`hooks.transforms`).
    pub fn transform(mut self, section: impl Into<String>, transform: Transform) -> Self {
        self.decl.transforms.insert(section.into(), transform);
        self
    }

    /// Ambient context added to every prompt of the session.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.decl.context = Some(context.into());
        self
    }

    /// Context added once to the session's start (`startup_context`).
    pub fn startup_context(mut self, context: impl Into<String>) -> Self {
        self.config.startup_context = Some(context.into());
        self
    }

    /// A gateway-side filter of one of this provider's streams (`filter.set`), set again
    /// after every bind.
    pub fn filter(mut self, stream: impl Into<String>, rules: Vec<FilterRule>) -> Self {
        self.decl.filters.insert(stream.into(), rules);
        self
    }

    /// Session events to receive as [`Event::Session`].
    pub fn subscribe(mut self, events: &[&str]) -> Self {
        self.config.subscribe = events.iter().map(|e| e.to_string()).collect();
        self
    }

    /// Details shown with the provider (`hello.metadata`).
    pub fn metadata(mut self, metadata: JsonObject) -> Self {
        self.config.metadata = Some(metadata);
        self
    }

    /// How many calls may run at once (`hello.concurrency`).
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.config.concurrency = Some(concurrency);
        self
    }

    /// Connects here instead of discovering the gateway.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Self {
        self.config.endpoint = Some(endpoint);
        self
    }

    /// Finds the gateway, authenticates, binds (waiting for a matching session), and
    /// starts answering calls.
    pub async fn connect(self) -> Result<Provider, Error> {
        if let Some(bad) = self.bad {
            return Err(bad.into());
        }
        let endpoint = match self.config.endpoint.clone() {
            Some(e) => e,
            None => discover(&ProcessEnv)?,
        };
        let (events, _) = broadcast::channel(crate::EVENT_BUFFER);
        let shared = Arc::new(Shared {
            config: self.config,
            decl: Mutex::new(self.decl),
            binding: Mutex::new(Binding::default()),
            events,
        });
        let bound = bind::bind(&shared, &endpoint, None).await?;
        let (commands, rx) = mpsc::unbounded_channel();
        let (ended_tx, ended) = watch::channel(None);
        // The binding is recorded by the task before it reads a command; record it here too
        // so the handle has it the moment `connect` returns.
        *shared.binding() = Binding {
            provider_id: bound.provider_id.clone(),
            session_id: bound.session_id.clone(),
            persist_dir: bound.persist_dir.clone(),
        };
        tokio::spawn(conn::run(shared.clone(), endpoint, bound, rx, ended_tx));
        Ok(Provider {
            commands,
            shared,
            ended,
            updating: tokio::sync::Mutex::new(()),
        })
    }

    /// Connects and serves until the provider ends (its session ended); `Err` only when
    /// it could not bind.
    pub async fn serve(self) -> Result<(), Error> {
        let why = self.connect().await?.run().await;
        tracing::info!(%why, "provider ended");
        Ok(())
    }

    /// [`Builder::serve`] on a runtime of its own, for a `main` without `#[tokio::main]`;
    /// Ctrl-C or SIGTERM says goodbye and returns. Must not be called from async code.
    pub fn run_forever(self) -> Result<(), Error> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        rt.block_on(async move {
            let mut provider = self.connect().await?;
            let stopped = tokio::select! {
                why = provider.run() => {
                    tracing::info!(%why, "provider ended");
                    false
                }
                _ = stop_signal() => true,
            };
            if stopped {
                provider.close().await;
            }
            Ok(())
        })
    }
}

/// Ctrl-C, or SIGTERM where there is one (what `kill` and service managers send).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// A running provider. Dropping it says goodbye and closes, as [`Provider::close`] does
/// without waiting.
pub struct Provider {
    commands: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
    ended: watch::Receiver<Option<String>>,
    /// One update at a time: the gateway refuses a second `tools.update` while the first
    /// awaits its ack, and a refused update must be undone before the next is made.
    updating: tokio::sync::Mutex<()>,
}

/// A push on its way. The push is sent when [`Provider::push`] is called; await this for
/// the gateway's verdict: `Ok` once accepted, [`Error::Refused`] (`RATE_LIMITED` over the
/// budget, …) when refused. Dropped, a refusal arrives as an [`Event::Error`] instead.
pub struct Pushed(oneshot::Receiver<Result<(), Error>>);

impl Future for Pushed {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(Error::Disconnected)))
    }
}

impl Provider {
    /// A builder for a provider named `name`.
    pub fn builder(name: impl Into<String>) -> Builder {
        Builder {
            config: Config {
                name: name.into(),
                instance: None,
                session: SessionChoice::Foreground,
                subscribe: Vec::new(),
                endpoint: None,
                metadata: None,
                startup_context: None,
                concurrency: None,
            },
            decl: Declaration::default(),
            bad: None,
        }
    }

    /// The session it is bound to (`"all"` for every session); after a fresh bind on a
    /// reconnect, the new one.
    pub fn session_id(&self) -> String {
        self.shared.binding().session_id.clone()
    }

    /// The gateway's id for this provider, from the last `hello.ack`: the same after a
    /// restored reconnect, a new one after a fresh bind.
    pub fn provider_id(&self) -> String {
        self.shared.binding().provider_id.clone()
    }

    /// The provider's directory for state that outlives sessions (`persistDir`).
    pub fn persist_dir(&self) -> Option<PathBuf> {
        self.shared.binding().persist_dir.clone()
    }

    /// Everything it hears besides calls, from now on.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    /// Pushes `event` at `level` into the bound session's stream (sent now; await the
    /// returned [`Pushed`] for the verdict). Over the budget (10 `surface`/`inject` per
    /// second per session; `keep` has none) the gateway refuses with `RATE_LIMITED`.
    /// While reconnecting, the push waits for the new socket.
    pub fn push(&self, level: PushLevel, event: impl Into<String>, options: PushOptions) -> Pushed {
        let (done, verdict) = oneshot::channel();
        let push = Push {
            level,
            event: Some(event.into()),
            prompt: options.prompt,
            stream: options.stream,
            session_id: None,
            broadcast: false,
            metadata: options.metadata,
        };
        let _ = self.commands.send(Command::Push { push, done });
        Pushed(verdict)
    }

    /// Reads this provider's own streams (`stream.query`; all of them when `streams` is
    /// empty), the newest `last` events of each (at most 100; all kept when `None`).
    pub async fn query(&self, streams: &[&str], last: Option<usize>) -> Result<History, Error> {
        let (done, answer) = oneshot::channel();
        let streams =
            (!streams.is_empty()).then(|| streams.iter().map(|s| s.to_string()).collect());
        let _ = self.commands.send(Command::Query {
            streams,
            last,
            done,
        });
        wait("stream.query", answer).await
    }

    /// Replaces the tool set (`tools.update`); returns the binding's revision once the
    /// session's host has the new set. Calls of the new tools are answered at once.
    pub async fn set_tools(&self, tools: Vec<Tool>) -> Result<u64, Error> {
        let msg = ProviderMessage::ToolsUpdate(ToolsUpdate {
            request_id: None,
            session_id: None,
            tools: tools.iter().map(|t| t.def.clone()).collect(),
            remove: None,
        });
        self.update("tools.update", msg, move |d| {
            let old = std::mem::replace(&mut d.tools, tools);
            Box::new(move |d| d.tools = old)
        })
        .await
    }

    /// Replaces the hook rules (`hooks.update`).
    pub async fn set_rules(&self, rules: Vec<HookRule>) -> Result<u64, Error> {
        let msg = ProviderMessage::HooksUpdate(HooksUpdate {
            request_id: None,
            session_id: None,
            on_pre_tool_use: Some(rules.clone()),
            transforms: None,
        });
        self.update("hooks.update", msg, move |d| {
            let old = std::mem::replace(&mut d.rules, rules);
            Box::new(move |d| d.rules = old)
        })
        .await
    }

    /// Sets (or with `None` removes) the transform of a prompt section (`hooks.update`).
    pub async fn set_transform(
        &self,
        section: &str,
        transform: Option<Transform>,
    ) -> Result<u64, Error> {
        let wire = transform.as_ref().map(|t| t.wire.clone());
        let msg = ProviderMessage::HooksUpdate(HooksUpdate {
            request_id: None,
            session_id: None,
            on_pre_tool_use: None,
            transforms: Some([(section.to_string(), wire)].into()),
        });
        let section = section.to_string();
        self.update("hooks.update", msg, move |d| {
            let old = match transform {
                Some(t) => d.transforms.insert(section.clone(), t),
                None => d.transforms.remove(&section),
            };
            Box::new(move |d| match old {
                Some(t) => drop(d.transforms.insert(section, t)),
                None => drop(d.transforms.remove(&section)),
            })
        })
        .await
    }

    /// Replaces (or with `None` clears) the ambient context (`context.update`).
    pub async fn set_context(&self, context: Option<String>) -> Result<u64, Error> {
        let msg = ProviderMessage::ContextUpdate(ContextUpdate {
            request_id: None,
            session_id: None,
            context: context.clone(),
        });
        self.update("context.update", msg, move |d| {
            let old = std::mem::replace(&mut d.context, context);
            Box::new(move |d| d.context = old)
        })
        .await
    }

    /// Sets the gateway-side filter of one of this provider's streams (`filter.set`); no
    /// rules removes it. Set again after every bind.
    pub async fn set_filter(&self, stream: &str, rules: Vec<FilterRule>) -> Result<u64, Error> {
        let msg = ProviderMessage::FilterSet(FilterSet {
            request_id: None,
            session_id: None,
            stream: stream.to_string(),
            rules: rules.clone(),
        });
        let stream = stream.to_string();
        self.update("filter.set", msg, move |d| {
            let old = match rules.is_empty() {
                true => d.filters.remove(&stream),
                false => d.filters.insert(stream.clone(), rules),
            };
            Box::new(move |d| match old {
                Some(r) => drop(d.filters.insert(stream, r)),
                None => drop(d.filters.remove(&stream)),
            })
        })
        .await
    }

    /// Changes the declaration with `change` (so a reconnect meanwhile declares the new
    /// state), sends `msg`, and undoes the change if the gateway refuses it.
    async fn update(
        &self,
        what: &'static str,
        msg: ProviderMessage,
        change: impl FnOnce(&mut Declaration) -> Undo,
    ) -> Result<u64, Error> {
        let _one = self.updating.lock().await;
        let undo = change(&mut self.shared.decl());
        let (done, answer) = oneshot::channel();
        let _ = self.commands.send(Command::Update { msg, done });
        let answer = wait(what, answer).await;
        if let Err(Error::Refused { .. }) = &answer {
            undo(&mut self.shared.decl());
        }
        answer
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

type Undo = Box<dyn FnOnce(&mut Declaration) + Send>;

async fn wait<T>(
    what: &'static str,
    answer: oneshot::Receiver<Result<T, Error>>,
) -> Result<T, Error> {
    match tokio::time::timeout(crate::REQUEST_TIMEOUT, answer).await {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => Err(Error::Disconnected),
        Err(_) => Err(Error::Timeout(what)),
    }
}

//! What the MCP facade keeps per gateway session it serves: a [`Binding`], shared by every
//! MCP client that names the session (`/mcp/<session>`, `tap mcp --session`), and the
//! [`Target`] a client names it by. Data only; `attach` creates and ends them.

use crate::limits::NOTICE_BUFFER;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tap_protocol::host::Delivery;
use tokio::sync::{broadcast, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Something an MCP client of the session may want to hear about.
#[derive(Debug, Clone)]
pub(crate) enum Notice {
    /// The session's tool set changed (debounced like `session.tools`).
    ToolsChanged,
    /// A resource changed: a stream's `tap://streams/…` URI (a new event), or an MCP
    /// server's resource as sessions name it (the server said so).
    ResourceUpdated(String),
    /// An MCP server's resources or templates changed (or a server came or went).
    ResourcesChanged,
    /// An MCP server's prompts changed (or a server came or went).
    PromptsChanged,
    /// A `notifications/message` of an MCP server, for the clients of the sessions whose
    /// calls it was running (it cannot say which call it belongs to).
    ServerLog(ServerLog),
    /// A `surface` or `inject` push for the session (only when the facade owns it).
    Delivery(Delivery),
}

/// One log entry of an MCP server, passed on as `notifications/message`.
#[derive(Debug, Clone)]
pub(crate) struct ServerLog {
    /// The server's name, the logger clients see (`<server>` or `<server>/<its logger>`).
    pub logger: String,
    /// As MCP numbers levels (`LoggingLevel as u8`: debug 0 … emergency 7).
    pub level: u8,
    pub data: serde_json::Value,
}

/// What an MCP server may ask of the client that made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientAsk {
    /// `sampling/createMessage`: the client's model answers.
    Sampling,
    /// `elicitation/create`: the client's user answers.
    Elicitation,
}

/// An MCP client of the session that can answer what servers ask (it declared the
/// capability): the facade registers one per such client, for as long as it is connected.
pub(crate) trait ClientAsker: Send + Sync {
    fn can(&self, ask: ClientAsk) -> bool;
    /// The request's params as JSON; its result as JSON, or why not.
    fn ask(
        &self,
        ask: ClientAsk,
        params: tap_protocol::Json,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<tap_protocol::Json, String>> + Send>,
    >;
}

/// The gateway session an MCP client named, put in the HTTP request's extensions by the
/// endpoint (or given to the handler by `tap mcp`'s WebSocket).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub name: String,
    /// For a session the facade registers.
    pub cwd: Option<String>,
    /// The profile the client asks for (`tap-profile`): the session's, or a new session's.
    pub profile: Option<String>,
}

/// One gateway session as the MCP facade serves it.
pub(crate) struct Binding {
    /// The name MCP clients use: the session's id or label.
    pub name: String,
    /// The gateway session.
    pub session_id: String,
    /// The in-process session host that registered the session; `None` when the facade
    /// joined a session another host owns (then it never ends it and never sets busy).
    pub host_id: Option<String>,
    /// MCP clients present: MCP sessions, open `subscriptions/listen` streams, requests
    /// in flight, `tap mcp` connections. At zero the end timer starts.
    pub clients: AtomicUsize,
    /// Tool calls in flight, for busy/idle.
    pub calls: AtomicUsize,
    /// Bumped whenever a client arrives, so an end timer started before knows it lost.
    pub epoch: AtomicU64,
    pub notices: broadcast::Sender<Notice>,
    /// Woken when the last client leaves and the end timer is not armed: the binding's
    /// watcher arms it. While it is armed, clients come and go without waking anyone (a
    /// stateless client is one per request); the timer looks at [`Binding::end_at`] when it
    /// runs out.
    pub idle: Notify,
    /// Whether the watcher's end timer is armed (or about to be: `idle` was notified).
    pub timer_armed: AtomicBool,
    /// When a client last left, in microseconds since `born`.
    left_us: AtomicU64,
    born: Instant,
    /// Cancelled when the binding is gone (its session ended, or it was given up).
    pub gone: CancellationToken,
    /// Its clients that can answer servers' requests, oldest first, by registration id.
    askers: std::sync::Mutex<Vec<(u64, std::sync::Arc<dyn ClientAsker>)>>,
    /// The same for one call in flight, by its trace id: what a server asks during that
    /// call goes to the client that made it, on that request's own stream.
    call_askers: std::sync::Mutex<Vec<(u128, std::sync::Arc<dyn ClientAsker>)>>,
    /// Clients that show deliveries (the `initialize` generation's), shared with the
    /// session's in-process host: with none, deliveries wait in the session's queue.
    pub delivery_listeners: std::sync::Arc<AtomicUsize>,
}

/// One MCP client showing the session's deliveries, for as long as it is held.
pub(crate) struct DeliveryListener {
    count: std::sync::Arc<AtomicUsize>,
}

impl Drop for DeliveryListener {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Binding {
    pub fn new(
        name: String,
        session_id: String,
        host_id: Option<String>,
        gone: CancellationToken,
    ) -> Self {
        Self {
            name,
            session_id,
            host_id,
            clients: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
            epoch: AtomicU64::new(0),
            notices: broadcast::channel(NOTICE_BUFFER).0,
            idle: Notify::new(),
            timer_armed: AtomicBool::new(false),
            left_us: AtomicU64::new(0),
            born: Instant::now(),
            gone,
            askers: std::sync::Mutex::new(Vec::new()),
            call_askers: std::sync::Mutex::new(Vec::new()),
            delivery_listeners: Default::default(),
        }
    }

    /// A client of the `initialize` generation now shows deliveries (it subscribed to
    /// [`Binding::notices`] first): what waited for one is sent now, in order, through
    /// the session's host to the notices. Under the state lock, so no delivery slips
    /// between the queue and the count.
    pub fn listen_for_deliveries(&self, core: &crate::state::Core) -> DeliveryListener {
        let mut state = core.state();
        self.delivery_listeners.fetch_add(1, Ordering::SeqCst);
        if self.host_id.is_some() {
            crate::state::delivery_queue::flush(&mut state, &self.session_id);
        }
        DeliveryListener {
            count: self.delivery_listeners.clone(),
        }
    }

    /// Notes that a client leaves now. Called before the client count drops, so whoever
    /// sees the count at zero also sees this time.
    /// Registers a client that can answer servers' requests; the id removes it.
    pub fn add_asker(&self, asker: std::sync::Arc<dyn ClientAsker>) -> u64 {
        let mut askers = self.askers.lock().unwrap();
        let id = askers.iter().map(|(i, _)| *i).max().map_or(0, |i| i + 1);
        askers.push((id, asker));
        id
    }

    pub fn remove_asker(&self, id: u64) {
        self.askers.lock().unwrap().retain(|(i, _)| *i != id);
    }

    /// Registers the client that made the call of trace `trace`, until
    /// [`Binding::remove_call_asker`].
    pub fn add_call_asker(&self, trace: u128, asker: std::sync::Arc<dyn ClientAsker>) {
        self.call_askers.lock().unwrap().push((trace, asker));
    }

    pub fn remove_call_asker(&self, trace: u128) {
        let mut askers = self.call_askers.lock().unwrap();
        if let Some(at) = askers.iter().position(|(t, _)| *t == trace) {
            askers.remove(at);
        }
    }

    /// The client that made the call of trace `trace`, if it can answer `ask`.
    pub fn call_asker(
        &self,
        trace: u128,
        ask: ClientAsk,
    ) -> Option<std::sync::Arc<dyn ClientAsker>> {
        let askers = self.call_askers.lock().unwrap();
        askers
            .iter()
            .find(|(t, a)| *t == trace && a.can(ask))
            .map(|(_, a)| a.clone())
    }

    /// The newest client that can answer `ask`.
    pub fn asker(&self, ask: ClientAsk) -> Option<std::sync::Arc<dyn ClientAsker>> {
        let askers = self.askers.lock().unwrap();
        askers
            .iter()
            .rev()
            .find(|(_, a)| a.can(ask))
            .map(|(_, a)| a.clone())
    }

    pub fn leaving(&self) {
        let us = self.born.elapsed().as_micros().min(u64::MAX as u128) as u64;
        self.left_us.fetch_max(us, Ordering::SeqCst);
    }

    /// When the binding may end if no client comes back: `grace` after a client last left.
    pub fn end_at(&self, grace: Duration) -> Instant {
        self.born + Duration::from_micros(self.left_us.load(Ordering::SeqCst)) + grace
    }

    /// Whether the facade registered (and so owns) the session.
    pub fn owns_session(&self) -> bool {
        self.host_id.is_some()
    }

    pub fn notify(&self, notice: Notice) {
        // No receiver: no MCP client listens right now; nothing to keep.
        let _ = self.notices.send(notice);
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }
}

/// The URI of a stream as an MCP resource.
pub(crate) fn stream_uri(provider: &str, stream: &str) -> String {
    format!("tap://streams/{provider}/{stream}")
}

/// `stream@provider` (the stream store's key) as `(provider, stream)`.
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    match key.rsplit_once('@') {
        Some((stream, provider)) => (provider, stream),
        None => ("", key),
    }
}

//! What the MCP facade keeps per gateway session it serves: a [`Binding`], shared by every
//! MCP client that names the session (`/mcp/<session>`, `tap mcp --session`). Data only;
//! `attach` creates and ends them.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tap_protocol::host::Delivery;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

/// Notices buffered for a slow MCP client before it misses some. A missed tool-list
/// change is harmless (the next one carries the whole state), so a small buffer is enough.
pub(crate) const NOTICE_BUFFER: usize = 256;

/// Something an MCP client of the session may want to hear about.
#[derive(Debug, Clone)]
pub(crate) enum Notice {
    /// The session's tool set changed (debounced like `session.tools`).
    ToolsChanged,
    /// A stream resource has a new event: its `tap://streams/…` URI.
    StreamUpdated(String),
    /// A `surface` or `inject` push for the session (only when the facade owns it).
    Delivery(Delivery),
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
    /// Woken when the last client leaves: the binding's watcher starts the end timer (one
    /// timer per binding, however many stateless requests come and go).
    pub idle: Notify,
    /// Cancelled when the binding is gone (its session ended, or it was given up).
    pub gone: CancellationToken,
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
            gone,
        }
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

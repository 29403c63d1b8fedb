//! What a caller hands the call path, and the failure it may get back.

use crate::limits::{MAX_PROGRESS_QUEUED_BYTES_PER_CALL, MAX_PROGRESS_QUEUED_PER_CALL};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::Json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Where a call's `tool.progress` messages go: a bounded queue, and a count of those it
/// had no room for.
#[derive(Debug, Clone)]
pub struct ProgressSink {
    tx: mpsc::Sender<String>,
    counts: Arc<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Bytes of the messages queued now.
    bytes: AtomicUsize,
    dropped: AtomicU64,
}

/// The caller's end of a [`ProgressSink`].
#[derive(Debug)]
pub struct ProgressReceiver {
    rx: mpsc::Receiver<String>,
    counts: Arc<Counts>,
}

impl ProgressSink {
    /// A sink bounded by [`MAX_PROGRESS_QUEUED_PER_CALL`] and
    /// [`MAX_PROGRESS_QUEUED_BYTES_PER_CALL`], and its receiving end.
    pub fn channel() -> (Self, ProgressReceiver) {
        let (tx, rx) = mpsc::channel(MAX_PROGRESS_QUEUED_PER_CALL);
        let counts = Arc::new(Counts::default());
        let sink = Self {
            tx,
            counts: counts.clone(),
        };
        (sink, ProgressReceiver { rx, counts })
    }

    /// Queues `message`, or counts it when the caller has fallen that far behind. Never
    /// waits: it runs on the provider's socket task.
    pub fn offer(&self, message: String) {
        let len = message.len();
        let before = self.counts.bytes.fetch_add(len, Ordering::SeqCst);
        let fits = before + len <= MAX_PROGRESS_QUEUED_BYTES_PER_CALL;
        if !fits || self.tx.try_send(message).is_err() {
            self.counts.bytes.fetch_sub(len, Ordering::SeqCst);
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Messages dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.counts.dropped.load(Ordering::Relaxed)
    }
}

impl ProgressReceiver {
    /// The next message; `None` once every sink is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<String> {
        let m = self.rx.recv().await?;
        self.counts.bytes.fetch_sub(m.len(), Ordering::SeqCst);
        Some(m)
    }

    /// The next message if one is queued.
    pub fn try_recv(&mut self) -> Option<String> {
        let m = self.rx.try_recv().ok()?;
        self.counts.bytes.fetch_sub(m.len(), Ordering::SeqCst);
        Some(m)
    }
}

/// A tool invocation from a session host (or from in-process code).
#[derive(Debug, Default)]
pub struct CallRequest {
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Json,
    /// Cancelled by the caller: the provider gets `tool.cancel`, the call ends `CANCELLED`.
    pub cancel: CancellationToken,
    /// Where `tool.progress` messages go.
    pub progress: Option<ProgressSink>,
    /// The caller's W3C trace context (`traceparent`): the call's `tool.call` span joins
    /// that trace under that span. `None`: a trace of its own.
    pub traceparent: Option<String>,
    /// On whose behalf: the gateway's built-in tools protect what the user owns from the
    /// agent.
    pub caller: Caller,
}

/// Who makes a call.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The session's agent (a session host, an MCP client): the default.
    #[default]
    Agent,
    /// The user, through the panel's playground or the CLI.
    User,
}

/// The failure outcome of a call: the engine's one [`Error`](crate::error::Error), a spec
/// error code and a human message (and, from a provider, whether another instance may
/// succeed).
pub type CallError = crate::error::Error;

use super::answers::{answer_key, RecentAnswers};
use crate::socket::outbound::OutSender;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::host::{HostEvent, SessionModeResult};
use tap_protocol::limits::HOST_OUTBOX_CAP;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::sessions::hosts";

/// How the MCP facade names the in-process host of a session it registers: `mcp:<name>`,
/// `<name>` being the session name in `/mcp/<name>` (`tap mcp --session`).
pub(crate) const MCP_HOST_PREFIX: &str = "mcp:";

/// A session host's identity, which outlives any one of its connections for the resume
/// window. Messages for a detached host are kept (up to a cap) and replayed on resume, so
/// a brief disconnect loses no tool result or delivery.
pub(crate) struct HostEntry {
    pub id: String,
    pub name: String,
    pub resume_token: String,
    /// The attached connection's outbound queue; `None` while detached. Bounded: a host
    /// that does not take what it is sent is dropped, and is then a detached host that may
    /// resume.
    pub out: Option<OutSender>,
    /// Closes the attached connection (when another takes over by resuming).
    pub kill: CancellationToken,
    /// Bumped on every attach, so a stale grace timer knows it lost.
    pub epoch: u64,
    /// Messages kept while detached, each with whether it may be dropped on overflow.
    pub outbox: VecDeque<(Message, bool)>,
    pub dropped: u64,
    pub sessions: HashSet<String>,
    /// callId → cancel token of this host's invocations in flight.
    pub invocations: HashMap<String, CancellationToken>,
    /// Answers sent lately, for a resume to send again what a dropped socket lost.
    pub answers: RecentAnswers,
    /// For the MCP facade's in-process host: how many of its session's MCP clients show
    /// deliveries (`mcp/listening.rs`). `None` for a session host, which shows them
    /// whenever its socket is attached.
    pub listeners: Option<Arc<AtomicUsize>>,
    /// `session.mode.set` requests sent to this host and waiting for its
    /// `session.mode.result` (`builtin/session_mode.rs`), by `requestId`.
    pub mode_requests: HashMap<String, tokio::sync::oneshot::Sender<SessionModeResult>>,
}

impl HostEntry {
    /// A new host, attached to the connection whose queue is `out` (closed by `kill`), with
    /// a fresh resume token.
    pub fn new(id: String, name: String, out: OutSender, kill: CancellationToken) -> Self {
        Self {
            id,
            name,
            resume_token: crate::auth::tokens::generate("hrt-"),
            out: Some(out),
            kill,
            epoch: 1,
            outbox: VecDeque::new(),
            dropped: 0,
            sessions: HashSet::new(),
            invocations: HashMap::new(),
            answers: RecentAnswers::default(),
            listeners: None,
            mode_requests: HashMap::new(),
        }
    }

    /// Whether a delivery sent now reaches someone who shows it; otherwise it waits in
    /// the session's queue (`state/delivery_queue.rs`).
    pub fn shows_deliveries(&self) -> bool {
        self.out.is_some()
            && self
                .listeners
                .as_ref()
                .is_none_or(|l| l.load(Ordering::SeqCst) > 0)
    }

    /// The client its sessions are for (hook rules' `match.client`): the session name an
    /// MCP client opened its session under (what `tap connect` writes: `claude-code`), or
    /// the `hostName` a session host gave (`copilot` for Copilot's extension).
    pub fn client(&self) -> &str {
        self.name
            .strip_prefix(MCP_HOST_PREFIX)
            .unwrap_or(&self.name)
    }

    pub fn send(&mut self, event: &HostEvent) {
        let mut frame = crate::socket::frame::frame(event);
        if let Some(call_id) = answer_key(event) {
            self.answers.record(call_id, &frame);
        }
        if let Some(out) = &self.out {
            // Refused (the socket closed, or its queue is full and it is being dropped):
            // kept for a resume, after what was queued (`detach` puts that in front).
            match out.send(frame) {
                Ok(()) => return,
                Err(refused) => frame = refused.into_message(),
            }
        }
        if self.outbox.len() >= HOST_OUTBOX_CAP {
            // Deliveries and progress may go; tool results, tool sets, session ends and
            // errors never do (they are bounded by what the host asked for and by the
            // tool-set debounce).
            match self.outbox.iter().position(|(_, droppable)| *droppable) {
                Some(i) => {
                    self.outbox.remove(i);
                    self.dropped += 1;
                }
                None => {
                    tracing::warn!(target: LOG_TARGET, host = %self.id, "host outbox above its cap with only answers in it")
                }
            }
        }
        let droppable = matches!(event, HostEvent::Delivery(_) | HostEvent::ToolProgress(_));
        self.outbox.push_back((frame, droppable));
    }
}

use std::collections::{HashMap, HashSet, VecDeque};
use tap_protocol::host::HostEvent;
use tap_protocol::limits::HOST_OUTBOX_CAP;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// A session host's identity, which outlives any one of its connections for the resume
/// window. Messages for a detached host are kept (up to a cap) and replayed on resume, so
/// a brief disconnect loses no tool result or delivery.
pub(crate) struct HostEntry {
    pub id: String,
    pub name: String,
    pub resume_token: String,
    /// The attached connection's outbound queue; `None` while detached.
    pub out: Option<mpsc::UnboundedSender<Message>>,
    /// Closes the attached connection (when another takes over by resuming).
    pub kill: CancellationToken,
    /// Bumped on every attach, so a stale grace timer knows it lost.
    pub epoch: u64,
    pub outbox: VecDeque<Message>,
    pub dropped: u64,
    pub sessions: HashSet<String>,
    /// callId → cancel token of this host's invocations in flight.
    pub invocations: HashMap<String, CancellationToken>,
}

impl HostEntry {
    pub fn send(&mut self, event: &HostEvent) {
        let frame = crate::providers::frame(event);
        if let Some(out) = &self.out {
            if out.send(frame.clone()).is_ok() {
                return;
            }
        }
        if self.outbox.len() >= HOST_OUTBOX_CAP {
            self.outbox.pop_front();
            self.dropped += 1;
        }
        self.outbox.push_back(frame);
    }
}

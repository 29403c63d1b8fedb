//! `surface` / `inject` deliveries on their way to a session's host. A host that can
//! show them right now gets them at once; otherwise they wait in the session's queue and
//! go, in the order they came, when a host attaches: a session host resuming
//! (`host_protocol/resume.rs`), or an MCP client of the `initialize` generation joining
//! a facade session (`mcp/listening.rs`). Nothing pushed while nobody listened is lost
//! on the way, within the queue's bound:
//!
//! - at most [`MAX_QUEUED_DELIVERIES_PER_SESSION`] wait per session; one more drops the
//!   oldest, counted: the push's trace says how many the session has dropped so far
//!   (`delivery.dropped`), and the host that attaches gets a `session.warning` with the
//!   count. Every delivery, dropped ones too, is in the stream history.
//! - deduplication (the spec's `metadata` "for … deduplication"): pushes of one provider
//!   to one session and stream whose `metadata.dedupKey` is the same string within
//!   [`DELIVERY_DEDUP_WINDOW`] are one delivery. While it waits in the queue, the newer
//!   push replaces it in its place (the host sees the latest text once); once shown, a
//!   repeat within the window is not shown again. Both are stored in the stream as usual.

use super::State;
use crate::limits::{
    DELIVERY_DEDUP_WINDOW, MAX_DEDUP_KEYS_PER_SESSION, MAX_QUEUED_DELIVERIES_PER_SESSION,
};
use std::collections::VecDeque;
use tap_protocol::host::{Delivery, HostEvent, SessionWarning};
use tokio::time::Instant;

/// The metadata key a provider sets to have identical pushes merged.
pub(crate) const DEDUP_KEY: &str = "dedupKey";

/// `(provider, stream, metadata.dedupKey)`: what makes two pushes one delivery.
type Key = (String, String, String);

/// One session's deliveries waiting for a host, and the keys shown lately.
#[derive(Debug, Default)]
pub(crate) struct DeliveryQueue {
    waiting: VecDeque<(Delivery, Option<Key>)>,
    /// Dropped for the bound since a host last took the queue.
    dropped: u64,
    /// `(provider, stream, key)` → when it was last queued or shown, oldest first.
    recent: VecDeque<(Key, Instant)>,
}

/// What became of one delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Handed to the attached host.
    Sent,
    /// Waiting for a host; `dropped` for the bound so far (this one made it one more
    /// when it is above zero and grew).
    Queued { dropped: u64 },
    /// Merged with one of the same `dedupKey` within the window.
    Merged,
    /// The session is gone (ended while the push was on its way).
    NoSession,
}

impl Outcome {
    /// Records the outcome on a push's `delivery` span and ends it.
    pub fn record(self, mut span: crate::trace::OpenSpan) {
        match self {
            Outcome::Sent => span.ok(),
            Outcome::Queued { dropped } => {
                span.set("delivery.queued", true);
                span.set("delivery.dropped", dropped as i64);
                span.ok();
            }
            Outcome::Merged => {
                span.set("delivery.merged", true);
                span.ok();
            }
            // Stored all the same; the stream history has it.
            Outcome::NoSession => span.fail("NO_HOST", "the session has no host connected"),
        }
    }
}

/// Whether the session's host can show a delivery now: a session host with its socket
/// attached, or an MCP facade session with a client listening.
fn attached(state: &State, host: &str) -> bool {
    state.hosts.get(host).is_some_and(|h| h.shows_deliveries())
}

/// Sends `delivery` to its session's host, or queues it until one attaches.
pub(crate) fn deliver(state: &mut State, delivery: Delivery) -> Outcome {
    let now = Instant::now();
    let Some(session) = state.sessions.get(&delivery.session_id) else {
        return Outcome::NoSession;
    };
    let host = session.host.clone();
    let attached = attached(state, &host);
    let session = state
        .sessions
        .get_mut(&delivery.session_id)
        .expect("looked up above");
    let queue = &mut session.delivery_queue;
    let key = dedup_key(&delivery);
    if let Some(k) = &key {
        queue
            .recent
            .retain(|(_, at)| now.duration_since(*at) < DELIVERY_DEDUP_WINDOW);
        let fresh = !queue.recent.iter().any(|(seen, _)| seen == k);
        if !fresh {
            // Still waiting: the newer push takes its place. Shown already: not again.
            if let Some(slot) = queue
                .waiting
                .iter_mut()
                .find(|(_, q)| q.as_ref() == Some(k))
            {
                slot.0 = delivery;
            }
            return Outcome::Merged;
        }
        if queue.recent.len() == MAX_DEDUP_KEYS_PER_SESSION {
            queue.recent.pop_front();
        }
        queue.recent.push_back((k.clone(), now));
    }
    if attached {
        if let Some(h) = state.hosts.get_mut(&host) {
            h.send(&HostEvent::Delivery(delivery));
        }
        return Outcome::Sent;
    }
    if queue.waiting.len() >= MAX_QUEUED_DELIVERIES_PER_SESSION {
        queue.waiting.pop_front();
        queue.dropped += 1;
    }
    queue.waiting.push_back((delivery, key));
    Outcome::Queued {
        dropped: queue.dropped,
    }
}

/// `(provider, stream, metadata.dedupKey)` when the push names a key.
fn dedup_key(d: &Delivery) -> Option<Key> {
    let key = d.metadata.as_ref()?.get(DEDUP_KEY)?.as_str()?;
    Some((d.provider.clone(), d.stream.clone(), key.to_string()))
}

/// A host attached to `session_id`: sends what waited, in order (after a
/// `session.warning` counting what the bound dropped). Returns how many were sent.
pub(crate) fn flush(state: &mut State, session_id: &str) -> usize {
    let Some(session) = state.sessions.get_mut(session_id) else {
        return 0;
    };
    let waiting = std::mem::take(&mut session.delivery_queue.waiting);
    let dropped = std::mem::take(&mut session.delivery_queue.dropped);
    let host = session.host.clone();
    let Some(h) = state.hosts.get_mut(&host) else {
        return 0;
    };
    if dropped > 0 {
        h.send(&HostEvent::SessionWarning(SessionWarning {
            session_id: session_id.to_string(),
            message: format!(
                "{dropped} deliveries were dropped while no host was attached (at most {MAX_QUEUED_DELIVERIES_PER_SESSION} wait per session, the oldest go first); they are in the stream history"
            ),
            config: None,
            provider: None,
        }));
    }
    let sent = waiting.len();
    for (d, _) in waiting {
        h.send(&HostEvent::Delivery(d));
    }
    if sent > 0 || dropped > 0 {
        tracing::info!(session = %session_id, sent, dropped, "deliveries that waited for a host sent");
    }
    sent
}

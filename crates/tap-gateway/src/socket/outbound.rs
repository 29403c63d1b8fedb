//! The outbound queue between the engine and one connection's socket writer, bounded in
//! messages and bytes.
//!
//! Senders live under the state lock (a `HostEntry`, a `ProviderLink`), so sending never
//! waits: a frame that would take the queue past its limits is refused, the queue is
//! marked overflowed for good and the connection's kill token is cancelled. The connection
//! loop then drops the peer (`socket::conn`), with the disconnect semantics of its
//! protocol. One slow peer therefore costs at most its limits, never the engine's time or
//! another connection's service.

use super::kind::Kind;
use crate::config::OutboundLimits;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// What is queued for every connection of one kind, for the diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Gauge {
    bytes: AtomicUsize,
    messages: AtomicUsize,
    /// The most bytes ever queued for one connection of this kind.
    peak_bytes: AtomicUsize,
}

impl Gauge {
    /// Bytes queued now, summed over this kind's connections.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn messages(&self) -> usize {
        self.messages.load(Ordering::Relaxed)
    }

    /// The high-water mark of one connection's queue, in bytes.
    pub fn peak_bytes(&self) -> usize {
        self.peak_bytes.load(Ordering::Relaxed)
    }
}

/// One gauge per kind of connection.
#[derive(Debug, Default)]
pub(crate) struct Gauges {
    pub providers: Arc<Gauge>,
    pub hosts: Arc<Gauge>,
    pub control: Arc<Gauge>,
}

impl Gauges {
    pub fn of(&self, kind: Kind) -> &Arc<Gauge> {
        match kind {
            Kind::Provider => &self.providers,
            Kind::Host => &self.hosts,
            Kind::Control => &self.control,
        }
    }
}

/// State shared by a queue's senders and its receiver.
struct Shared {
    bytes: AtomicUsize,
    messages: AtomicUsize,
    /// Set once a frame was refused: every later send is refused too, so nothing is sent
    /// after a gap (a session host's refused frames go to its outbox, in order).
    overflowed: AtomicBool,
    /// Cancelled with `overflowed`: a write stuck on this peer gives up at once.
    overflow: CancellationToken,
    limits: OutboundLimits,
    /// The connection's kill token: an overflow closes the connection.
    kill: CancellationToken,
    gauge: Arc<Gauge>,
}

impl Shared {
    fn take(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::Relaxed);
        self.messages.fetch_sub(1, Ordering::Relaxed);
        self.gauge.bytes.fetch_sub(len, Ordering::Relaxed);
        self.gauge.messages.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The sending end; cheap to clone.
#[derive(Clone)]
pub(crate) struct OutSender {
    tx: mpsc::UnboundedSender<Message>,
    shared: Arc<Shared>,
}

/// The receiving end, owned by the connection loop.
pub(crate) struct OutReceiver {
    rx: mpsc::UnboundedReceiver<Message>,
    shared: Arc<Shared>,
}

/// A queue for one connection whose kill token is `kill`, counted in `gauge`.
pub(crate) fn channel(
    limits: OutboundLimits,
    kill: CancellationToken,
    gauge: Arc<Gauge>,
) -> (OutSender, OutReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        bytes: AtomicUsize::new(0),
        messages: AtomicUsize::new(0),
        overflowed: AtomicBool::new(false),
        overflow: CancellationToken::new(),
        limits,
        kill,
        gauge,
    });
    (
        OutSender {
            tx,
            shared: shared.clone(),
        },
        OutReceiver { rx, shared },
    )
}

/// Why a frame was not queued; it is handed back.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The connection is gone.
    Closed(Message),
    /// The peer is not taking what it is sent: the connection is being closed.
    Overflow(Message),
}

impl Refused {
    pub fn into_message(self) -> Message {
        match self {
            Refused::Closed(m) | Refused::Overflow(m) => m,
        }
    }
}

impl OutSender {
    /// Queues `msg`, or refuses it when the connection is closed or the queue would go
    /// past its limits (the connection is then closed). Never waits.
    pub fn send(&self, msg: Message) -> Result<(), Refused> {
        let s = &*self.shared;
        if s.overflowed.load(Ordering::Relaxed) {
            return Err(Refused::Overflow(msg));
        }
        let len = msg.len();
        // Add first, then check: concurrent senders can only refuse too much, never let
        // the queue hold more than its limits.
        let bytes = s.bytes.fetch_add(len, Ordering::Relaxed) + len;
        let messages = s.messages.fetch_add(1, Ordering::Relaxed) + 1;
        if bytes > s.limits.max_queued_bytes || messages > s.limits.max_queued_messages {
            s.bytes.fetch_sub(len, Ordering::Relaxed);
            s.messages.fetch_sub(1, Ordering::Relaxed);
            if !s.overflowed.swap(true, Ordering::Relaxed) {
                s.overflow.cancel();
                s.kill.cancel();
            }
            return Err(Refused::Overflow(msg));
        }
        self.enqueue(msg, len, bytes)
    }
}

impl OutSender {
    /// Queues frames the gateway held already (a resumed session host's outbox), counted
    /// but never refused for the limits: moving them costs no memory, and refusing them
    /// would lose them. Sends after them see the queue as full until the peer takes them.
    pub fn requeue(&self, msg: Message) -> Result<(), Refused> {
        let s = &*self.shared;
        let len = msg.len();
        let bytes = s.bytes.fetch_add(len, Ordering::Relaxed) + len;
        s.messages.fetch_add(1, Ordering::Relaxed);
        self.enqueue(msg, len, bytes)
    }

    /// Puts `msg` (`len` bytes, counted in the queue already, which now holds `bytes`) on
    /// the channel and into the gauge; a closed channel takes the count back.
    fn enqueue(&self, msg: Message, len: usize, bytes: usize) -> Result<(), Refused> {
        let s = &*self.shared;
        s.gauge.bytes.fetch_add(len, Ordering::Relaxed);
        s.gauge.messages.fetch_add(1, Ordering::Relaxed);
        s.gauge.peak_bytes.fetch_max(bytes, Ordering::Relaxed);
        self.tx.send(msg).map_err(|e| {
            s.take(len);
            Refused::Closed(e.0)
        })
    }
}

impl OutReceiver {
    /// The next frame; `None` once every sender is gone. Cancel-safe.
    pub async fn recv(&mut self) -> Option<Message> {
        let msg = self.rx.recv().await?;
        self.shared.take(msg.len());
        Some(msg)
    }

    /// A frame if one is queued.
    pub fn try_recv(&mut self) -> Option<Message> {
        let msg = self.rx.try_recv().ok()?;
        self.shared.take(msg.len());
        Some(msg)
    }

    pub fn is_empty(&self) -> bool {
        self.rx.is_empty()
    }

    /// A frame was refused because the peer did not take what it was sent.
    pub fn overflowed(&self) -> bool {
        self.shared.overflowed.load(Ordering::Relaxed)
    }

    /// Resolves once a frame was refused (see [`Self::overflowed`]).
    pub fn overflow(&self) -> CancellationToken {
        self.shared.overflow.clone()
    }

    /// What is queued now, in bytes and messages (for the log line of a drop).
    pub fn queued(&self) -> (usize, usize) {
        let s = &*self.shared;
        (
            s.bytes.load(Ordering::Relaxed),
            s.messages.load(Ordering::Relaxed),
        )
    }
}

impl Drop for OutReceiver {
    /// Frames never taken leave the kind's gauge with the connection.
    fn drop(&mut self) {
        self.rx.close();
        while self.try_recv().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(bytes: usize, messages: usize) -> OutboundLimits {
        OutboundLimits {
            max_queued_bytes: bytes,
            max_queued_messages: messages,
            ..OutboundLimits::default()
        }
    }

    #[test]
    fn a_frame_past_the_byte_limit_is_refused_and_kills_the_connection() {
        let kill = CancellationToken::new();
        let gauge = Arc::new(Gauge::default());
        let (tx, mut rx) = channel(limits(10, 100), kill.clone(), gauge.clone());
        tx.send(Message::text("12345678")).unwrap();
        assert!(matches!(
            tx.send(Message::text("123")),
            Err(Refused::Overflow(_))
        ));
        assert!(kill.is_cancelled() && rx.overflowed());
        assert_eq!((gauge.bytes(), gauge.peak_bytes()), (8, 8));
        // Sticky: nothing is queued after a refused frame, even a small one.
        assert!(tx.send(Message::text("1")).is_err());
        assert_eq!(rx.try_recv().map(|m| m.len()), Some(8));
        assert_eq!((gauge.bytes(), gauge.messages()), (0, 0));
    }

    #[test]
    fn a_frame_past_the_message_limit_is_refused() {
        let kill = CancellationToken::new();
        let (tx, rx) = channel(limits(1000, 2), kill.clone(), Arc::default());
        tx.send(Message::text("a")).unwrap();
        tx.send(Message::text("b")).unwrap();
        assert!(tx.send(Message::text("c")).is_err());
        assert!(kill.is_cancelled());
        assert_eq!(rx.queued(), (2, 2));
    }

    #[test]
    fn dropping_the_receiver_empties_the_gauge_and_closes_the_queue() {
        let gauge = Arc::new(Gauge::default());
        let (tx, rx) = channel(limits(1000, 10), CancellationToken::new(), gauge.clone());
        tx.send(Message::text("abc")).unwrap();
        drop(rx);
        assert_eq!((gauge.bytes(), gauge.messages()), (0, 0));
        assert!(matches!(
            tx.send(Message::text("x")),
            Err(Refused::Closed(_))
        ));
        assert_eq!(gauge.bytes(), 0);
    }
}

//! Changes the control plane streams to the panel and the CLI. Engine parts call
//! [`Events::emit`] on the handle in the core; each control connection subscribes and
//! numbers what it forwards.
//!
//! Changes only the clients that follow them want (`emitters.follow`, `traces.follow`)
//! travel a channel of their own, [`Changed`]: they are coalesced (at most one per
//! 250 ms each, see `diagnostics::Coalesced`), and a connection that follows none of
//! them never receives them.

use crate::limits::{CHANGED_BUFFER, EVENT_BUFFER};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::pairing::PairingEntry;
use tokio::sync::broadcast;

/// Something the panel should show changed.
#[derive(Debug, Clone, PartialEq)]
pub enum GatewayEvent {
    /// A pairing request appeared or changed (configured, confirmed, connected).
    PairingChanged(Box<PairingEntry>),
    /// A pairing request or a paired provider is gone (denied, expired, revoked).
    PairingRemoved {
        /// Its id.
        id: String,
        /// Why: `denied`, `expired`, `revoked`, `failed`.
        reason: String,
    },
    /// Sessions or providers changed; the status snapshot should be fetched again.
    StatusChanged,
    /// Diagnostics counters or connection states changed (at most one per 250 ms).
    DiagnosticsChanged,
    /// The settings were saved.
    SettingsChanged(tap_protocol::settings::Settings),
    /// A rule of `policy.json` was set or removed, or a remembered answer (grant) made
    /// or revoked.
    PolicyChanged,
    /// A tool call waits for the user's approval (`crate::approvals`).
    ApprovalWaiting(Box<tap_protocol::approvals::WaitingCall>),
    /// A call stopped waiting: answered, timed out, or its caller went away.
    ApprovalResolved {
        /// Its approval id.
        id: String,
        /// How it ended.
        outcome: tap_protocol::approvals::ApprovalOutcome,
    },
}

/// A followed part of the engine changed: what `emitters.changed` and `traces.changed`
/// tell the clients that follow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    /// An emitter started, stopped, ran, counted lines or changed state.
    Emitters,
    /// Spans were recorded (and committed to the ledger).
    Traces,
}

/// The engine's event bus: a cheap, cloneable handle.
#[derive(Clone)]
pub(crate) struct Events {
    all: broadcast::Sender<GatewayEvent>,
    changed: broadcast::Sender<Changed>,
    /// The [`ChangedReceiver`]s alive. Every finished span asks whether there is one, so
    /// this is an atomic: the channel's own receiver count takes its lock.
    following: Arc<AtomicUsize>,
}

/// A connection's receiver of followed changes; while it lives, changes are published.
pub(crate) struct ChangedReceiver {
    rx: broadcast::Receiver<Changed>,
    following: Arc<AtomicUsize>,
}

impl ChangedReceiver {
    /// The next change, as [`broadcast::Receiver::recv`] gives it.
    pub async fn recv(&mut self) -> Result<Changed, broadcast::error::RecvError> {
        self.rx.recv().await
    }
}

impl Drop for ChangedReceiver {
    fn drop(&mut self) {
        self.following.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Events {
    pub fn new() -> Self {
        Self {
            all: broadcast::channel(EVENT_BUFFER).0,
            changed: broadcast::channel(CHANGED_BUFFER).0,
            following: Arc::default(),
        }
    }

    /// Publishes an event to every control-plane subscriber. Never blocks; with no
    /// subscriber it is dropped.
    pub fn emit(&self, event: GatewayEvent) {
        let _ = self.all.send(event);
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.all.subscribe()
    }

    /// Publishes a followed change (callers coalesce them). Never blocks.
    pub fn emit_changed(&self, changed: Changed) {
        let _ = self.changed.send(changed);
    }

    /// A receiver of every followed change from now on (a connection that follows
    /// `emitters` or `traces` holds one).
    pub fn subscribe_changed(&self) -> ChangedReceiver {
        self.following.fetch_add(1, Ordering::Relaxed);
        ChangedReceiver {
            rx: self.changed.subscribe(),
            following: self.following.clone(),
        }
    }

    /// Whether any connection follows `emitters` or `traces` now.
    pub fn changes_followed(&self) -> bool {
        self.following.load(Ordering::Relaxed) > 0
    }
}

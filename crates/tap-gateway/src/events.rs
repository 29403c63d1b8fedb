//! Changes the control plane streams to the panel and the CLI. Engine parts call
//! [`Events::emit`] on the handle in the core; each control connection subscribes and
//! numbers what it forwards.

use tap_protocol::pairing::PairingEntry;
use tokio::sync::broadcast;

/// Events buffered for a slow subscriber before it lags (and is told to refresh).
pub const EVENT_BUFFER: usize = 1024;

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
}

/// The engine's event bus: a cheap, cloneable handle.
#[derive(Clone)]
pub(crate) struct Events(broadcast::Sender<GatewayEvent>);

impl Events {
    pub fn new() -> Self {
        Self(broadcast::channel(EVENT_BUFFER).0)
    }

    /// Publishes an event to every control-plane subscriber. Never blocks; with no
    /// subscriber it is dropped.
    pub fn emit(&self, event: GatewayEvent) {
        let _ = self.0.send(event);
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.0.subscribe()
    }
}

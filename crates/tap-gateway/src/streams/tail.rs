//! The live tail of stored stream events (`streams.follow`, the `stream.entry` event).
//!
//! The push path pays one relaxed atomic load when nobody follows; with followers, the
//! entry is formatted once and shared by all of them.

use crate::limits::TAIL_BUFFER;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::provider::StreamEntry;
use tokio::sync::broadcast;

/// One stored event, as followers see it.
#[derive(Debug)]
pub(crate) struct TailEntry {
    pub session: String,
    /// `stream@provider`.
    pub key: String,
    pub entry: StreamEntry,
}

pub(crate) struct Tail {
    tx: broadcast::Sender<Arc<TailEntry>>,
    followers: Arc<AtomicUsize>,
}

impl Default for Tail {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(TAIL_BUFFER).0,
            followers: Arc::default(),
        }
    }
}

impl Tail {
    /// Publishes the entry `make` builds, if anyone follows.
    pub fn publish(&self, make: impl FnOnce() -> TailEntry) {
        if self.followers.load(Ordering::Relaxed) > 0 {
            let _ = self.tx.send(Arc::new(make()));
        }
    }

    /// Whether anyone follows now (a batch of entries need not be walked otherwise).
    pub fn has_followers(&self) -> bool {
        self.followers.load(Ordering::Relaxed) > 0
    }

    pub fn subscribe(&self) -> TailReceiver {
        self.followers.fetch_add(1, Ordering::Relaxed);
        TailReceiver {
            rx: self.tx.subscribe(),
            followers: self.followers.clone(),
        }
    }
}

/// A follower's receiver; dropping it stops the publishing once nobody is left.
pub(crate) struct TailReceiver {
    pub rx: broadcast::Receiver<Arc<TailEntry>>,
    followers: Arc<AtomicUsize>,
}

impl Drop for TailReceiver {
    fn drop(&mut self) {
        self.followers.fetch_sub(1, Ordering::Relaxed);
    }
}

//! At most one event per [`DIAGNOSTICS_EVENT_INTERVAL`]: the first change after a quiet interval is
//! published at once; changes within the interval are published together at its end. One
//! small timer task per interval at most (spawned by the recorder).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tap_protocol::limits::DIAGNOSTICS_EVENT_INTERVAL;
// Tokio's clock, so paused-time tests control the interval.
use tokio::time::Instant;

#[derive(Default)]
pub(super) struct Throttle {
    /// A publication is scheduled; later changes ride on it.
    scheduled: AtomicBool,
    /// When the last one was published.
    last: Mutex<Option<Instant>>,
}

/// A publication to make: wait until `due` (if any), then publish.
pub(super) struct Scheduled {
    pub due: Option<Instant>,
}

impl Throttle {
    /// `Some` when this change must schedule a publication; `None` when one is already
    /// scheduled (the change rides on it) or there is no runtime to time it with.
    pub fn schedule(&self) -> Option<Scheduled> {
        if self.scheduled.swap(true, Ordering::AcqRel) {
            return None;
        }
        // Outside a runtime (never in the engine's own tasks) there is no timer to use.
        if tokio::runtime::Handle::try_current().is_err() {
            self.scheduled.store(false, Ordering::Release);
            return None;
        }
        let due = self
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|at| at + DIAGNOSTICS_EVENT_INTERVAL);
        Some(Scheduled { due })
    }

    /// Called right before publishing.
    pub fn publishing(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        // Cleared before publishing: a change from now on schedules the next event, so
        // none is lost between the two.
        self.scheduled.store(false, Ordering::Release);
    }
}

//! At most one event per [`DIAGNOSTICS_EVENT_INTERVAL`]: the first change after a quiet interval is
//! published at once; changes within the interval are published together at its end. One
//! small timer task per interval at most (spawned by [`Coalesced`], which the recorder,
//! the emitters and the tracer each hold).

use crate::events::{Changed, Events, GatewayEvent};
use crate::ledger::Ledger;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tap_protocol::limits::DIAGNOSTICS_EVENT_INTERVAL;
// Tokio's clock, so paused-time tests control the interval.
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

#[derive(Default)]
struct Throttle {
    /// A publication is scheduled; later changes ride on it.
    scheduled: AtomicBool,
    /// When the last one was published.
    last: Mutex<Option<Instant>>,
}

/// A publication to make: wait until `due` (if any), then publish.
struct Scheduled {
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

    /// Called once the publication is due, before the ledger flush that precedes it.
    pub fn publishing(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        // Cleared before the flush and the event: a change from now on schedules the next
        // event (one interval later), so none is lost between the two. Cleared after the
        // flush instead, a span recorded while the ledger flushed rode on an event sent
        // before it was committed, and no later event told of it (a panel reading the
        // ledger on `traces.changed` then missed that call until the next one).
        self.scheduled.store(false, Ordering::Release);
    }
}

/// An event published through a [`Throttle`]: [`Coalesced::changed`] notes a change, and
/// the event goes out at most once per [`DIAGNOSTICS_EVENT_INTERVAL`] (`diagnostics.changed`,
/// `emitters.changed` and `traces.changed` all go this way). Its timer task runs on the
/// engine's tasks and ends when the gateway stops. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Coalesced(Arc<CoalescedInner>);

/// What a [`Coalesced`] publishes.
pub(crate) enum Publish {
    /// An event every control connection receives (and filters by what it follows).
    Event(GatewayEvent),
    /// A followed change, on the channel only following connections read.
    Changed(Changed),
}

struct CoalescedInner {
    publish: Publish,
    throttle: Throttle,
    events: Events,
    tasks: TaskTracker,
    stopping: CancellationToken,
    /// Flushed before publishing, so a client that reads the ledger on the event sees
    /// what the change wrote there (spans are written to the ledger in the background).
    ledger: Option<Ledger>,
}

impl Coalesced {
    pub fn new(
        publish: Publish,
        events: Events,
        tasks: TaskTracker,
        stopping: CancellationToken,
        ledger: Option<Ledger>,
    ) -> Self {
        Self(Arc::new(CoalescedInner {
            publish,
            throttle: Throttle::default(),
            events,
            tasks,
            stopping,
            ledger,
        }))
    }

    /// Schedules the event: the first change after a quiet interval is published at
    /// once; changes within the interval are published together at its end. An atomic
    /// swap when one is already scheduled. A followed change nobody follows costs a load:
    /// no task, and no ledger flush (a client that follows later lists the state after
    /// it followed).
    pub fn changed(&self) {
        if matches!(self.0.publish, Publish::Changed(_)) && !self.0.events.changes_followed() {
            return;
        }
        let Some(scheduled) = self.0.throttle.schedule() else {
            return;
        };
        let inner = self.0.clone();
        self.0.tasks.spawn(async move {
            let ready = async {
                if let Some(due) = scheduled.due {
                    tokio::time::sleep_until(due).await;
                }
                inner.throttle.publishing();
                if let Some(ledger) = &inner.ledger {
                    ledger.flush().await;
                }
            };
            tokio::select! {
                _ = ready => {}
                _ = inner.stopping.cancelled() => return,
            }
            match &inner.publish {
                Publish::Event(event) => inner.events.emit(event.clone()),
                Publish::Changed(changed) => inner.events.emit_changed(*changed),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A span recorded while the ledger flushes for an event may be queued after the flush:
    /// the change it notes must get an event of its own, not ride on the one about to go
    /// out before it is committed (a panel reading the ledger on that event would miss it
    /// for good).
    #[tokio::test]
    async fn a_change_noted_during_the_flush_gets_the_next_event() {
        let events = Events::new();
        let mut followed = events.subscribe_changed();
        let ledger = Ledger::in_memory("test");
        let c = Coalesced::new(
            Publish::Changed(Changed::Traces),
            events.clone(),
            TaskTracker::new(),
            CancellationToken::new(),
            Some(ledger),
        );
        c.changed();
        // On this single-threaded runtime the publication task now runs up to the flush,
        // which waits for the ledger's writer thread; it goes on only when this task waits.
        tokio::task::yield_now().await;
        assert!(
            !c.0.throttle.scheduled.load(Ordering::Acquire),
            "a change noted now schedules the next event"
        );
        c.changed();
        for n in 1..=2 {
            let got = tokio::time::timeout(Duration::from_secs(5), followed.recv()).await;
            assert!(matches!(got, Ok(Ok(Changed::Traces))), "event {n}: {got:?}");
        }
    }
}

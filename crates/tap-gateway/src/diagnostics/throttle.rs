//! `diagnostics.changed`, at most once per [`EVENT_INTERVAL`]: the first change after a
//! quiet interval is published at once; changes within the interval are published
//! together at its end. One small timer task per interval at most, owned by the gateway.

use super::EVENT_INTERVAL;
use crate::events::GatewayEvent;
use crate::gateway::Gateway;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
// Tokio's clock, so paused-time tests control the interval.
use tokio::time::Instant;

#[derive(Default)]
pub(super) struct Throttle {
    /// A publication is scheduled; later changes ride on it.
    scheduled: AtomicBool,
    /// When the last one was published.
    last: Mutex<Option<Instant>>,
}

impl Gateway {
    /// Schedules a `diagnostics.changed` event (see the module doc).
    pub(crate) fn diagnostics_changed(&self) {
        let t = &self.shared().diagnostics.throttle;
        if t.scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        // Outside a runtime (never in the engine's own tasks) there is no timer to use.
        if tokio::runtime::Handle::try_current().is_err() {
            t.scheduled.store(false, Ordering::Release);
            return;
        }
        let gw = self.clone();
        self.shared().tasks.spawn(async move {
            let t = &gw.shared().diagnostics.throttle;
            let due = t.last.lock().unwrap().map(|at| at + EVENT_INTERVAL);
            if let Some(due) = due {
                tokio::select! {
                    _ = tokio::time::sleep_until(due) => {}
                    _ = gw.shared().stopping.cancelled() => return,
                }
            }
            *t.last.lock().unwrap() = Some(Instant::now());
            // Cleared before publishing: a change from now on schedules the next event,
            // so none is lost between the two.
            t.scheduled.store(false, Ordering::Release);
            gw.emit(GatewayEvent::DiagnosticsChanged);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Limit;
    use crate::{GatewayConfig, GatewayHandle};
    use std::time::Duration;
    use tokio::sync::broadcast::Receiver;

    /// The next `DiagnosticsChanged`, skipping other events; `None` after `within`.
    async fn next_change(rx: &mut Receiver<GatewayEvent>, within: Duration) -> Option<Instant> {
        tokio::time::timeout(within, async {
            loop {
                if rx.recv().await.unwrap() == GatewayEvent::DiagnosticsChanged {
                    return Instant::now();
                }
            }
        })
        .await
        .ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_of_changes_makes_at_most_one_event_per_interval() {
        let dir = tempfile::tempdir().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let handle = GatewayHandle::start(listener, GatewayConfig::new(dir.path().into()))
            .await
            .unwrap();
        let gw = handle.gateway().clone();
        let mut rx = gw.subscribe();
        let start = Instant::now();

        for _ in 0..1000 {
            gw.limit_hit(Limit::PayloadSize);
        }
        // The first change after a quiet time is published at once.
        let first = next_change(&mut rx, Duration::from_secs(1)).await.unwrap();
        assert_eq!(first, start, "published without waiting");
        // The rest of the burst rode on it: no second event.
        assert_eq!(next_change(&mut rx, Duration::from_secs(5)).await, None);

        // Long after the last publication: at once again; a burst right after one waits
        // for the end of the interval.
        let burst = Instant::now();
        for _ in 0..1000 {
            gw.limit_hit(Limit::PayloadSize);
        }
        let second = next_change(&mut rx, Duration::from_secs(1)).await.unwrap();
        assert_eq!(second, burst);
        for _ in 0..1000 {
            gw.limit_hit(Limit::PayloadSize);
        }
        let third = next_change(&mut rx, Duration::from_secs(1)).await.unwrap();
        assert_eq!(third - second, EVENT_INTERVAL, "held back to the interval");
        assert_eq!(next_change(&mut rx, Duration::from_secs(5)).await, None);
        assert_eq!(gw.diagnostics().limits[0].hits, 3000);
        handle.stop().await.unwrap();
    }
}

//! The diagnostics counters: a cheap, cloneable handle every part of the engine that
//! sends an error or enforces a limit holds.

use super::limit_hits::Limit;
use super::throttle::{Coalesced, Publish};
use crate::events::{Events, GatewayEvent};
use crate::limits::{FAILURES_KEPT, MAX_FAILURE_MESSAGE_CHARS};
use crate::text::cut;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tap_protocol::diagnostics::{ErrorCount, Failure, LimitHits};
use tap_protocol::provider::ErrorMessage;
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The counters of one gateway.
#[derive(Clone)]
pub(crate) struct Recorder(Arc<Inner>);

struct Inner {
    // std Mutex, never held across an await nor while taking the state lock: each update
    // is a map increment and a ring push.
    counters: Mutex<Counters>,
    /// `diagnostics.changed`, at most one per interval.
    changed: Coalesced,
}

#[derive(Default)]
struct Counters {
    errors: HashMap<ErrorCode, u64>,
    /// Per limit (indexed by `Limit::index`): hits and the last hit's time.
    limits: [(u64, Option<SystemTime>); Limit::ALL.len()],
    /// Newest last.
    failures: VecDeque<Failure>,
}

impl Counters {
    fn fail(&mut self, failure: Failure) {
        if self.failures.len() == FAILURES_KEPT {
            self.failures.pop_front();
        }
        self.failures.push_back(failure);
    }
}

/// What the counters say now.
pub(crate) struct Counted {
    pub errors: Vec<ErrorCount>,
    pub limits: Vec<LimitHits>,
    /// Newest first.
    pub failures: Vec<Failure>,
}

impl Recorder {
    pub fn new(events: Events, tasks: TaskTracker, stopping: CancellationToken) -> Self {
        Self(Arc::new(Inner {
            counters: Mutex::default(),
            changed: Coalesced::new(
                Publish::Event(GatewayEvent::DiagnosticsChanged),
                events,
                tasks,
                stopping,
                None,
            ),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counters> {
        self.0.counters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts an `error` about to be sent to a provider and keeps it as a failure.
    pub fn note_provider_error(&self, e: &ErrorMessage) {
        let now = SystemTime::now();
        {
            let mut c = self.lock();
            *c.errors.entry(e.code.clone()).or_default() += 1;
            c.fail(Failure {
                at: crate::time::rfc3339(now),
                code: Some(e.code.clone()),
                limit: None,
                message: cut(&e.message, MAX_FAILURE_MESSAGE_CHARS),
                reply_to: e.reply_to.clone(),
                provider: e.provider_id.clone(),
                session: e.session_id.clone(),
            });
        }
        self.changed();
    }

    /// Counts a hit of `limit`. One that refuses or closes a connection without an
    /// `error` message is also kept as a failure.
    pub fn limit_hit(&self, limit: Limit) {
        let now = SystemTime::now();
        {
            let mut c = self.lock();
            let slot = &mut c.limits[limit.index()];
            slot.0 += 1;
            slot.1 = Some(now);
            if limit.is_silent() {
                c.fail(Failure {
                    at: crate::time::rfc3339(now),
                    code: None,
                    limit: Some(limit.id().to_string()),
                    message: limit.description(),
                    reply_to: None,
                    provider: None,
                    session: None,
                });
            }
        }
        self.changed();
    }

    /// Schedules a `diagnostics.changed` event, at most one per `DIAGNOSTICS_EVENT_INTERVAL`: the
    /// first change after a quiet interval is published at once; changes within the
    /// interval are published together at its end.
    pub fn changed(&self) {
        self.0.changed.changed();
    }

    /// The counters since the start.
    pub fn counted(&self) -> Counted {
        let c = self.lock();
        let mut errors: Vec<ErrorCount> = c
            .errors
            .iter()
            .map(|(code, count)| ErrorCount {
                code: code.clone(),
                count: *count,
            })
            .collect();
        errors.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.code.as_str().cmp(b.code.as_str()))
        });
        let limits = Limit::ALL
            .iter()
            .map(|l| {
                let (hits, last) = c.limits[l.index()];
                LimitHits {
                    id: l.id().to_string(),
                    description: l.description(),
                    hits,
                    last_at: last.map(crate::time::rfc3339),
                }
            })
            .collect();
        Counted {
            errors,
            limits,
            failures: c.failures.iter().rev().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::sync::broadcast::Receiver;
    use tokio::time::Instant;

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
        let events = Events::new();
        let stopping = CancellationToken::new();
        let recorder = Recorder::new(events.clone(), TaskTracker::new(), stopping.clone());
        let mut rx = events.subscribe();
        let start = Instant::now();

        for _ in 0..1000 {
            recorder.limit_hit(Limit::PayloadSize);
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
            recorder.limit_hit(Limit::PayloadSize);
        }
        let second = next_change(&mut rx, Duration::from_secs(1)).await.unwrap();
        assert_eq!(second, burst);
        for _ in 0..1000 {
            recorder.limit_hit(Limit::PayloadSize);
        }
        let third = next_change(&mut rx, Duration::from_secs(1)).await.unwrap();
        assert_eq!(
            third - second,
            tap_protocol::limits::DIAGNOSTICS_EVENT_INTERVAL,
            "held back to the interval"
        );
        assert_eq!(next_change(&mut rx, Duration::from_secs(5)).await, None);
        assert_eq!(recorder.counted().limits[0].hits, 3000);
        stopping.cancel();
    }
}

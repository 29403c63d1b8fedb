//! Diagnostics (control method `diagnostics`, the panel's Diagnostics page): how many
//! `error`s went to providers by code, how often each limit was hit, the newest failures,
//! and every connection's state.
//!
//! The counters are fed from the few places errors leave and limits trip: the provider
//! connection's one error path (`note_provider_error`), and a `limit_hit` call where each
//! limit is enforced. Connection states are read from the registry when asked, not
//! counted. Every change schedules a `diagnostics.changed` event, at most one per
//! [`EVENT_INTERVAL`], so a flood of bad frames cannot flood the panel.

mod connections;
mod limits;
mod throttle;

pub(crate) use limits::Limit;

use crate::gateway::Gateway;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use tap_protocol::diagnostics::{Diagnostics, ErrorCount, Failure, LimitHits};
use tap_protocol::provider::ErrorMessage;
use tap_protocol::ErrorCode;

/// How many recent failures are kept.
pub const FAILURES_KEPT: usize = 100;

/// At most one `diagnostics.changed` event per this long.
pub const EVENT_INTERVAL: Duration = Duration::from_millis(250);

/// Failure messages are cut to this many characters: some quote what the peer sent.
const MAX_MESSAGE_CHARS: usize = 300;

/// The counters of one gateway.
#[derive(Default)]
pub(crate) struct Recorder {
    // std Mutex, never held across an await nor while taking the state lock: each update
    // is a map increment and a ring push.
    counters: Mutex<Counters>,
    throttle: throttle::Throttle,
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

impl Recorder {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counters> {
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn cut(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &message[..i]),
        None => message.to_string(),
    }
}

impl Gateway {
    /// Counts an `error` about to be sent to a provider and keeps it as a failure.
    pub(crate) fn note_provider_error(&self, e: &ErrorMessage) {
        let now = SystemTime::now();
        {
            let mut c = self.shared().diagnostics.lock();
            *c.errors.entry(e.code.clone()).or_default() += 1;
            c.fail(Failure {
                at: crate::time::rfc3339(now),
                code: Some(e.code.clone()),
                limit: None,
                message: cut(&e.message),
                reply_to: e.reply_to.clone(),
                provider: e.provider_id.clone(),
                session: e.session_id.clone(),
            });
        }
        self.diagnostics_changed();
    }

    /// Counts a hit of `limit`. One that refuses or closes a connection without an
    /// `error` message is also kept as a failure.
    pub(crate) fn limit_hit(&self, limit: Limit) {
        let now = SystemTime::now();
        {
            let mut c = self.shared().diagnostics.lock();
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
        self.diagnostics_changed();
    }

    /// The counters since the start, the newest failures and every connection's state.
    pub fn diagnostics(&self) -> Diagnostics {
        let connections = self.connection_states();
        let c = self.shared().diagnostics.lock();
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
        Diagnostics {
            since: crate::time::rfc3339(self.shared().started_at),
            errors,
            limits,
            connections,
            recent_failures: c.failures.iter().rev().cloned().collect(),
            failures_kept: FAILURES_KEPT,
        }
    }
}

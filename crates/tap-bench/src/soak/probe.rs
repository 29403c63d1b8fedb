//! What the soak reads of the gateway process from `/proc`: resident memory, open file
//! descriptors, and threads (the gateway exposes no task count; its tokio runtime's worker
//! and blocking threads are what a leak of blocking work would grow).

use std::time::{Duration, Instant};

/// How often [`settle`] samples.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub rss_kib: u64,
    /// Of `rss_kib`: the heap and other private memory (`RssAnon`)…
    pub anon_kib: u64,
    /// …and mapped files and shared memory (`RssFile` + `RssShmem`: SQLite's WAL index is
    /// one), told apart because only the first is the gateway's own allocations.
    pub mapped_kib: u64,
    pub fds: usize,
    pub threads: usize,
}

pub fn sample(pid: u32) -> Result<Sample, String> {
    let kib = |field| crate::rss::vm_kib(pid, field);
    Ok(Sample {
        rss_kib: kib("VmRSS")?,
        anon_kib: kib("RssAnon")?,
        mapped_kib: kib("RssFile")? + kib("RssShmem")?,
        fds: count(&format!("/proc/{pid}/fd"))?,
        threads: count(&format!("/proc/{pid}/task"))?,
    })
}

fn count(dir: &str) -> Result<usize, String> {
    std::fs::read_dir(dir)
        .map(|d| d.count())
        .map_err(|e| format!("{dir}: {e}"))
}

/// Samples until `done` holds for a sample or `within` passes; returns the last sample.
/// The gateway closes sockets and retires threads on its own schedule, so the soak polls
/// with a deadline rather than sleeping a fixed time.
pub async fn settle(
    pid: u32,
    within: Duration,
    done: impl Fn(&Sample) -> bool,
) -> Result<Sample, String> {
    let deadline = Instant::now() + within;
    loop {
        let s = sample(pid)?;
        if done(&s) || Instant::now() >= deadline {
            return Ok(s);
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// Samples until the descriptor count is the same `STEADY` times in a row (the chaos's
/// last sockets have closed), or `within` passes.
pub async fn steady(pid: u32, within: Duration) -> Result<Sample, String> {
    const STEADY: usize = 5;
    let deadline = Instant::now() + within;
    let mut last = sample(pid)?;
    let mut same = 1;
    while same < STEADY && Instant::now() < deadline {
        tokio::time::sleep(SAMPLE_EVERY).await;
        let s = sample(pid)?;
        same = if s.fds == last.fds { same + 1 } else { 1 };
        last = s;
    }
    Ok(last)
}

/// Waits until the ledger's queue is empty (`status`, over a host connection of the
/// soak's own), or `within` passes; returns the records still queued then. A gateway at
/// rest has written its history: records waiting for the writer (up to
/// `LEDGER_QUEUE_BYTES` of them after a flood of calls) are work still to do, not growth.
pub async fn drained(status: &tap_client::HostClient, within: Duration) -> u32 {
    let deadline = Instant::now() + within;
    loop {
        let depth = match status.status().await.map(|s| s.history) {
            Ok(Some(ledger)) => ledger.queue_depth,
            _ => return 0, // no history kept, or no answer: nothing to wait for
        };
        if depth == 0 || Instant::now() >= deadline {
            return depth;
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// How often [`rss_over_time`] samples.
const TRACE_EVERY: Duration = Duration::from_secs(1);

/// What [`rss_over_time`] saw.
#[derive(Debug, Default)]
pub struct Trace {
    /// The gateway's RSS (KiB), one sample per [`TRACE_EVERY`].
    pub rss_kib: Vec<u64>,
    /// The most records the ledger's queue held at a sample, and its capacity: a queue that
    /// fills holds memory the RSS trace shows as steps (records wait there, not in SQLite).
    pub ledger_peak: u32,
    pub ledger_capacity: u32,
    /// Producers that had to wait for room in the ledger's queue, over the trace.
    pub ledger_waits: u64,
}

/// Samples the gateway's RSS every [`TRACE_EVERY`] until `stop`, so that a long run shows
/// whether memory levels off or keeps growing, not only where it ended; and, through
/// `status` (a host connection of its own), how full the ledger's queue gets meanwhile.
pub async fn rss_over_time(
    pid: u32,
    status: std::sync::Arc<tap_client::HostClient>,
    stop: tokio_util::sync::CancellationToken,
) -> Trace {
    let mut trace = Trace::default();
    let mut waits_at_start = None;
    let mut every = tokio::time::interval(TRACE_EVERY);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.cancelled() => return trace,
        }
        match crate::rss::vm_kib(pid, "VmRSS") {
            Ok(kib) => trace.rss_kib.push(kib),
            Err(_) => return trace,
        }
        if let Ok(Some(ledger)) = status.status().await.map(|s| s.history) {
            trace.ledger_peak = trace.ledger_peak.max(ledger.queue_depth);
            trace.ledger_capacity = ledger.queue_capacity;
            let start = *waits_at_start.get_or_insert(ledger.waits);
            trace.ledger_waits = ledger.waits - start;
        }
    }
}

/// Growth (percent) under load over the run: the highest RSS of the trace's last quarter
/// against the highest of its second. The first quarter is left out: the working set is
/// still filling after the warm-up's pause (the ledger's queue, buffers). `None` for a
/// trace too short to have quarters of a few samples each.
pub fn creep(seen: &[u64]) -> Option<f64> {
    const MIN_SAMPLES: usize = 8;
    if seen.len() < MIN_SAMPLES {
        return None;
    }
    let quarter = seen.len() / 4;
    let max = |s: &[u64]| s.iter().copied().max().unwrap_or(0) as f64;
    let early = max(&seen[quarter..2 * quarter]);
    let late = max(&seen[seen.len() - quarter..]);
    Some((late / early - 1.0) * 100.0)
}

/// `n` samples spread evenly over `seen`, first and last included, in MiB.
pub fn spread(seen: &[u64], n: usize) -> Vec<f64> {
    if seen.is_empty() || n == 0 {
        return Vec::new();
    }
    let n = n.min(seen.len());
    (0..n)
        .map(|i| {
            let at = if n == 1 {
                0
            } else {
                i * (seen.len() - 1) / (n - 1)
            };
            seen[at] as f64 / 1024.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn creep_compares_the_last_quarter_with_the_second() {
        // A ramp in the first quarter is not creep; a rise at the end is.
        let flat = [10, 50, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100];
        assert_eq!(super::creep(&flat), Some(0.0));
        let rising = [100, 100, 100, 100, 100, 100, 100, 100, 100, 110, 110, 110];
        assert_eq!(super::creep(&rising).map(f64::round), Some(10.0));
        assert_eq!(super::creep(&[1, 2, 3]), None);
    }

    #[test]
    fn spread_takes_first_last_and_even_steps() {
        let seen: Vec<u64> = (0..=100).map(|i| i * 1024).collect();
        assert_eq!(super::spread(&seen, 5), vec![0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(super::spread(&seen[..2], 5), vec![0.0, 1.0]);
        assert!(super::spread(&[], 5).is_empty());
    }
}

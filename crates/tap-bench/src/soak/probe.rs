//! What the soak reads of the gateway process from `/proc`: resident memory, open file
//! descriptors, and threads (the gateway exposes no task count; its tokio runtime's worker
//! and blocking threads are what a leak of blocking work would grow).

use std::time::{Duration, Instant};

/// How often [`settle`] samples.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub rss_kib: u64,
    pub fds: usize,
    pub threads: usize,
}

pub fn sample(pid: u32) -> Result<Sample, String> {
    Ok(Sample {
        rss_kib: crate::rss::vm_kib(pid, "VmRSS")?,
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

//! Latency samples and the number formats the report uses.

use std::time::{Duration, Instant};

/// Per-operation latencies of a sequential run, and the run's wall time.
pub struct Latencies {
    sorted_ns: Vec<u64>,
    elapsed: Duration,
    /// Context switches of this process's threads per operation, when counted.
    switches: Option<f64>,
}

impl Latencies {
    /// Builds from raw samples (any order) and the wall time of the measured part.
    pub fn new(mut samples_ns: Vec<u64>, elapsed: Duration) -> Self {
        samples_ns.sort_unstable();
        Self {
            sorted_ns: samples_ns,
            elapsed,
            switches: None,
        }
    }

    /// Records `total` context switches over the run (see [`context_switches`]).
    pub fn with_switches(mut self, total: Option<u64>) -> Self {
        self.switches = total.map(|t| t as f64 / self.sorted_ns.len().max(1) as f64);
        self
    }

    /// Context switches per operation, when counted.
    pub fn switches_per_op(&self) -> Option<f64> {
        self.switches
    }

    /// The `p`-quantile (0 < p <= 1), nearest-rank.
    pub fn quantile(&self, p: f64) -> Duration {
        if self.sorted_ns.is_empty() {
            return Duration::ZERO;
        }
        let rank = (p * self.sorted_ns.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.sorted_ns.len()) - 1;
        Duration::from_nanos(self.sorted_ns[i])
    }

    pub fn p50(&self) -> Duration {
        self.quantile(0.50)
    }

    pub fn p99(&self) -> Duration {
        self.quantile(0.99)
    }

    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.sorted_ns.last().copied().unwrap_or_default())
    }

    /// Operations per second over the measured wall time.
    pub fn rate(&self) -> f64 {
        rate(self.sorted_ns.len(), self.elapsed)
    }
}

/// Voluntary plus involuntary context switches of every thread of this process so far
/// (`/proc/self/task/*/status`). A task hand-off that wakes a parked runtime worker costs
/// one or two of these; a hand-off within one worker costs none.
pub fn context_switches() -> Option<u64> {
    switches_in("/proc/self/task")
}

/// The same for another process (S7 out of process counts the gateway's and the
/// provider's).
pub fn process_switches(pid: u32) -> Option<u64> {
    switches_in(&format!("/proc/{pid}/task"))
}

fn switches_in(tasks: &str) -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(tasks).ok()? {
        let status = std::fs::read_to_string(task.ok()?.path().join("status")).ok()?;
        for line in status.lines() {
            if let Some(v) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().ok()?;
            }
        }
    }
    Some(total)
}

/// CPU time (user and system) of every thread of this process so far, from the
/// scheduler's own accounting (`/proc/self/task/*/schedstat`, nanoseconds; `/proc/*/stat`
/// counts in 10 ms ticks, too coarse for a run of a second). Threads that already exited
/// are not counted: the processes measured keep theirs (runtime workers).
pub fn own_cpu() -> Option<Duration> {
    cpu_in("/proc/self/task")
}

/// The same for another process.
pub fn process_cpu(pid: u32) -> Option<Duration> {
    cpu_in(&format!("/proc/{pid}/task"))
}

fn cpu_in(tasks: &str) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir(tasks).ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// Context switches since `before` (`None` when either count is missing).
pub fn switches_since(before: Option<u64>) -> Option<u64> {
    Some(context_switches()?.saturating_sub(before?))
}

/// Collects timed operations over several rounds, so that sequential scenarios can be
/// interleaved (E0, S1a, S1b, E0, S1a, …) and drift of the machine hits them alike.
pub struct Sampler {
    samples: Vec<u64>,
    elapsed: Duration,
    switches: Option<u64>,
    mark: Option<(Instant, Option<u64>)>,
}

impl Sampler {
    pub fn new(capacity: usize) -> Self {
        Self {
            samples: Vec::with_capacity(capacity),
            elapsed: Duration::ZERO,
            switches: Some(0),
            mark: None,
        }
    }

    /// Starts a round: wall time and context switches count from here.
    pub fn begin(&mut self) {
        self.mark = Some((Instant::now(), context_switches()));
    }

    /// Ends the round started by [`Sampler::begin`].
    pub fn end(&mut self) {
        if let Some((start, before)) = self.mark.take() {
            self.elapsed += start.elapsed();
            self.switches = match (self.switches, switches_since(before)) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
    }

    /// Runs and times one operation.
    pub async fn time(
        &mut self,
        op: impl std::future::Future<Output = Result<(), String>>,
    ) -> Result<(), String> {
        let t = Instant::now();
        op.await?;
        self.samples.push(t.elapsed().as_nanos() as u64);
        Ok(())
    }

    pub fn finish(self) -> Latencies {
        Latencies::new(self.samples, self.elapsed).with_switches(self.switches)
    }
}

/// `n` operations in `elapsed`, per second.
pub fn rate(n: usize, elapsed: Duration) -> f64 {
    n as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// `a / b`, with a zero `b` giving a huge ratio rather than infinity or NaN.
pub fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(f64::MIN_POSITIVE)
}

/// A duration in seconds, as the ratios take it.
pub fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// `31.2 us`.
pub fn micros(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

/// `123,456/s`.
pub fn per_sec(r: f64) -> String {
    format!("{}/s", thousands(r.round() as u64))
}

/// `12.3 MiB`.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let l = Latencies::new((1..=100).rev().collect(), Duration::from_secs(1));
        assert_eq!(l.p50(), Duration::from_nanos(50));
        assert_eq!(l.p99(), Duration::from_nanos(99));
        assert_eq!(l.quantile(1.0), Duration::from_nanos(100));
        assert_eq!(l.rate(), 100.0);
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(per_sec(11999.6), "12,000/s");
        assert_eq!(micros(Duration::from_nanos(31_260)), "31.3 us");
        assert_eq!(mib(12 * 1024), "12.0 MiB");
    }
}

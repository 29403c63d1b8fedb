//! Throughput scenarios run several times (`--quick` aside): the median run is the one
//! reported, and the range of the rates is shown beside it, so that one run disturbed by
//! the machine decides nothing on its own.

use crate::report::Row;
use crate::running::bounded;
use crate::setup::Counted;
use crate::stats::{per_sec, Latencies};
use std::future::Future;
use std::time::Duration;

/// A throughput scenario run `reps` times: the median run, and the range of the rates.
pub struct Repeated<T> {
    pub median: T,
    pub min: f64,
    pub max: f64,
    pub reps: usize,
}

impl<T> Repeated<T> {
    /// The `min / max` row, when there was more than one run.
    pub fn range_row(&self, scenario: &str) -> Option<Row> {
        self.range_row_of(scenario, "")
    }

    /// The same, with `tag` after the metric (`", ledger off"`).
    pub fn range_row_of(&self, scenario: &str, tag: &str) -> Option<Row> {
        (self.reps > 1).then(|| {
            Row::info(
                scenario,
                &format!("min / max of {} runs{tag}", self.reps),
                format!("{} / {}", per_sec(self.min), per_sec(self.max)),
            )
        })
    }
}

pub async fn repeated<T, F, Fut>(
    reps: usize,
    limit: Duration,
    rate_of: impl Fn(&T) -> f64,
    mut run: F,
) -> Result<Repeated<T>, String>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut runs = Vec::with_capacity(reps);
    for i in 0..reps.max(1) {
        runs.push(bounded(limit, run(i)).await?);
    }
    Ok(summarize(runs, rate_of))
}

/// The same for each of `rigs` in-process gateways, interleaved (rig 0, rig 1, rig 0, …) so
/// that drift of the machine weighs on each alike: `run(rig, i)`; one summary per rig.
pub async fn repeated_per_rig<T, F, Fut>(
    rigs: usize,
    reps: usize,
    limit: Duration,
    rate_of: impl Fn(&T) -> f64,
    mut run: F,
) -> Result<Vec<Repeated<T>>, String>
where
    F: FnMut(usize, usize) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut runs: Vec<Vec<T>> = (0..rigs).map(|_| Vec::with_capacity(reps)).collect();
    for i in 0..reps.max(1) {
        for (r, list) in runs.iter_mut().enumerate() {
            list.push(bounded(limit, run(r, i)).await?);
        }
    }
    Ok(runs
        .into_iter()
        .map(|list| summarize(list, &rate_of))
        .collect())
}

/// The median of `runs` (at least one) by `rate_of`, and the range of the rates.
pub fn summarize<T>(mut runs: Vec<T>, rate_of: impl Fn(&T) -> f64) -> Repeated<T> {
    runs.sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
    let (min, max) = (rate_of(&runs[0]), rate_of(&runs[runs.len() - 1]));
    let reps = runs.len();
    let median = runs.swap_remove(reps / 2);
    Repeated {
        median,
        min,
        max,
        reps,
    }
}

pub fn same(r: &f64) -> f64 {
    *r
}

pub fn rate_of(l: &Latencies) -> f64 {
    l.rate()
}

pub fn counted_rate(c: &Counted<Latencies>) -> f64 {
    c.run.rate()
}

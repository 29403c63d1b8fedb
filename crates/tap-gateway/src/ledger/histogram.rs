//! The tool calls' latency histogram: fixed, log-spaced buckets, so that two histograms
//! (two minutes, two keys) add up bucket by bucket and a percentile is read from the sum
//! without keeping any duration.
//!
//! Bucket 0 holds durations under [`BASE_US`]; bucket `i` (1 ≤ i < [`BUCKETS`] − 1) holds
//! `[bound(i − 1), bound(i))` with `bound(j) = BASE_US · 2^(j / PER_DOUBLING)` rounded to
//! the microsecond; the last bucket holds everything from its lower bound (about 20 min)
//! up. A percentile is the bucket of the call of that rank (nearest rank), reported as the
//! bucket's harmonic middle `2·lo·hi / (lo + hi)`, the value equally far (relatively) from
//! both ends: the true value is in the same bucket, so the estimate is within
//! `(r − 1) / (r + 1)` of it, r = 2^(1/4): 8.6 %, 8.8 % with the bounds rounded to the
//! microsecond (`PERCENTILE_ERROR`); within 0.05 ms under 0.1 ms; a lower bound past the
//! last bound.
//!
//! Stored as a BLOB of (bucket index: one byte, count: LEB128) pairs for the non-empty
//! buckets, in index order: a minute of one tool holds a few buckets, so a row stays small.

use std::sync::LazyLock;

/// The upper bound of bucket 0, in microseconds.
pub(crate) const BASE_US: u64 = 100;
/// Buckets per doubling of the duration: each bound is 2^(1/4) ≈ 1.19 times the last.
pub(crate) const PER_DOUBLING: u32 = 4;
/// Buckets in all: 0 (under 0.1 ms), 94 log-spaced ones, and one past about 20 minutes.
pub(crate) const BUCKETS: usize = 96;
/// The most a percentile read in a bucket between 0.1 ms and the last bound is off, as a
/// fraction of the true value (tested against every bucket's bounds; the docs say it).
#[cfg(test)]
pub(crate) const PERCENTILE_ERROR: f64 = 0.088;

/// `BOUNDS[j]` = the upper bound of bucket `j` (exclusive) and the lower one of `j + 1`.
static BOUNDS: LazyLock<[u64; BUCKETS - 1]> = LazyLock::new(|| {
    let mut b = [0u64; BUCKETS - 1];
    for (j, bound) in b.iter_mut().enumerate() {
        *bound = (BASE_US as f64 * 2f64.powf(j as f64 / PER_DOUBLING as f64)).round() as u64;
    }
    b
});

/// The bucket of a duration in microseconds.
pub(crate) fn bucket_of(us: u64) -> usize {
    BOUNDS.partition_point(|&b| b <= us)
}

/// The value a percentile falling in bucket `i` is reported as, in milliseconds.
fn representative_ms(i: usize) -> f64 {
    let us = match i {
        0 => BASE_US as f64 / 2.0,
        i if i == BUCKETS - 1 => BOUNDS[i - 1] as f64,
        i => {
            let (lo, hi) = (BOUNDS[i - 1] as f64, BOUNDS[i] as f64);
            2.0 * lo * hi / (lo + hi)
        }
    };
    us / 1000.0
}

/// Counts per bucket, sparse: (bucket, count) pairs in bucket order, no zero count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Histogram(Vec<(u8, u64)>);

impl Histogram {
    /// Counts `n` calls in bucket `i`.
    pub fn add_to(&mut self, i: usize, n: u64) {
        if n == 0 {
            return;
        }
        let i = i.min(BUCKETS - 1) as u8;
        match self.0.binary_search_by_key(&i, |&(b, _)| b) {
            Ok(at) => self.0[at].1 += n,
            Err(at) => self.0.insert(at, (i, n)),
        }
    }

    /// Counts one call of `us` microseconds.
    pub fn record(&mut self, us: u64) {
        self.add_to(bucket_of(us), 1);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        for &(i, n) in &other.0 {
            self.add_to(i as usize, n);
        }
    }

    /// Adds the counts of a stored histogram ([`Histogram::encode`]); a malformed tail is
    /// ignored (a row is only ever written by [`Histogram::encode`]).
    pub fn merge_encoded(&mut self, mut bytes: &[u8]) {
        while let Some((&i, rest)) = bytes.split_first() {
            let Some((n, rest)) = leb128(rest) else {
                return;
            };
            self.add_to(i as usize, n);
            bytes = rest;
        }
    }

    /// The stored form: (bucket byte, LEB128 count) pairs.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() * 3);
        for &(i, mut n) in &self.0 {
            out.push(i);
            loop {
                let byte = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(byte);
                    break;
                }
                out.push(byte | 0x80);
            }
        }
        out
    }

    /// Calls counted.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|&(_, n)| n).sum()
    }

    /// The `q` quantile (0 < q ≤ 1) in milliseconds, nearest rank; `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for &(i, n) in &self.0 {
            seen += n;
            if seen >= rank {
                return Some(representative_ms(i as usize));
            }
        }
        self.0.last().map(|&(i, _)| representative_ms(i as usize))
    }
}

/// One LEB128 number and what follows it; `None` when cut or longer than a u64.
fn leb128(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut n = 0u64;
    for (k, &b) in bytes.iter().enumerate().take(10) {
        n |= ((b & 0x7f) as u64) << (7 * k);
        if b & 0x80 == 0 {
            return Some((n, &bytes[k + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_duration_in_order() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(BASE_US - 1), 0);
        assert_eq!(bucket_of(BASE_US), 1);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        let mut last = 0;
        for us in (0..2_000_000u64).step_by(997) {
            let b = bucket_of(us);
            assert!(b >= last);
            last = b;
        }
        // The last bound is past 19 minutes: a tool's timeout fits before it.
        assert!(BOUNDS[BUCKETS - 2] > 19 * 60 * 1_000_000);
    }

    #[test]
    fn a_percentile_is_within_the_stated_error_in_every_bucket() {
        for i in 1..BUCKETS - 1 {
            let (lo, hi) = (BOUNDS[i - 1], BOUNDS[i] - 1);
            for v in [lo, (lo + hi) / 2, hi] {
                let mut h = Histogram::default();
                h.record(v);
                let got = h.quantile_ms(0.95).unwrap();
                let truth = v as f64 / 1000.0;
                assert!(
                    (got - truth).abs() <= PERCENTILE_ERROR * truth,
                    "bucket {i}: {v} us read as {got} ms"
                );
            }
        }
        let mut h = Histogram::default();
        h.record(7);
        assert!((h.quantile_ms(0.5).unwrap() - 0.007).abs() <= 0.05);
    }

    #[test]
    fn nearest_rank_over_merged_histograms_and_their_stored_form() {
        let mut a = Histogram::default();
        for ms in 1..=90u64 {
            a.record(ms * 1000);
        }
        let mut b = Histogram::default();
        for _ in 0..10 {
            b.record(5_000_000); // 5 s
        }
        b.record(u64::MAX);
        let mut sum = Histogram::default();
        sum.merge_encoded(&a.encode());
        sum.merge_encoded(&b.encode());
        let mut direct = a.clone();
        direct.merge(&b);
        assert_eq!(sum, direct);
        assert_eq!(sum.count(), 101);
        // Rank 51 of 101 is 51 ms; rank 96 is one of the 5 s calls.
        let p50 = sum.quantile_ms(0.5).unwrap();
        assert!((p50 - 51.0).abs() <= 51.0 * PERCENTILE_ERROR, "{p50}");
        let p95 = sum.quantile_ms(0.95).unwrap();
        assert!((p95 - 5000.0).abs() <= 5000.0 * PERCENTILE_ERROR, "{p95}");
        assert_eq!(Histogram::default().quantile_ms(0.5), None);
        // A cut blob adds what it holds whole, and no more.
        let bytes = b.encode();
        let mut cut = Histogram::default();
        cut.merge_encoded(&bytes[..bytes.len() - 1]);
        assert_eq!(cut.count(), 10);
    }
}

//! The bench's allocator: the product's, counting allocations while a counted run is on,
//! for the allocations-per-message rows (issue 14: S2's calls and S3's pushes against E0's
//! echoes and frames, docs/performance-log.md run 35).
//!
//! Off, counting costs one relaxed load of a flag nobody writes, so the timed runs are not
//! perturbed; the counts come from one extra run after them. On, every thread's
//! allocations are counted (the gateway's tasks, the ledger's writer, the bench's own
//! clients), which is why E0, whose clients are the same, is counted the same way.
// A `GlobalAlloc` cannot be written without `unsafe`; each function hands its arguments to
// the wrapped allocator unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// `A`, counting its allocations and reallocations while [`counted`] runs.
pub struct Counting<A>(pub A);

static ON: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

#[inline]
fn count() {
    if ON.load(Relaxed) {
        ALLOCATIONS.fetch_add(1, Relaxed);
    }
}

// SAFETY: every call goes to `A` with the caller's arguments, so `A`'s guarantees hold;
// counting only touches two atomics and never allocates.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) }
    }

    /// A growth copies like an allocation in the worst case, so it counts as one.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

/// Awaits `f` with counting on: its output, and the allocations every thread of the
/// process made meanwhile. Counted runs must not overlap (the bench runs them one at a
/// time).
pub async fn counted<F: Future>(f: F) -> (F::Output, u64) {
    let before = ALLOCATIONS.load(Relaxed);
    ON.store(true, Relaxed);
    let out = f.await;
    ON.store(false, Relaxed);
    (out, ALLOCATIONS.load(Relaxed) - before)
}

/// `count` (allocations, or any count over a run) over `n` messages, as a row shows it.
pub fn per_message(count: u64, n: usize) -> f64 {
    count as f64 / n.max(1) as f64
}

/// Allocations per message of `run`, a run of `n` messages counted as in [`counted`]; the
/// run's error when it failed.
pub async fn allocations_per<T, E>(
    n: usize,
    run: impl Future<Output = Result<T, E>>,
) -> Result<f64, E> {
    let (result, allocations) = counted(run).await;
    result.map(|_| per_message(allocations, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    fn run<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn counts_what_the_run_allocates_and_nothing_outside_it() {
        let (boxes, n) = run(counted(async {
            (0..1000)
                .map(|i| black_box(Box::new(i)))
                .collect::<Vec<_>>()
        }));
        assert_eq!(boxes.len(), 1000);
        // The 1,000 boxes and the vector (other test threads may add to the count).
        assert!(n >= 1001, "counted {n}");

        let before = ALLOCATIONS.load(Relaxed);
        let outside: Vec<Box<u64>> = (0..1000).map(|i| black_box(Box::new(i))).collect();
        black_box(outside);
        assert_eq!(
            ALLOCATIONS.load(Relaxed),
            before,
            "counted with counting off"
        );
    }
}

//! Identifiers. Call and gate ids must be globally unique (spec: "Session IDs and
//! correlation IDs"): a random 64-bit prefix per gateway process plus a counter gives
//! that without a syscall per call.

use rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};

/// Makes ids unique across this process and, through the random prefix, across restarts.
#[derive(Debug)]
pub struct IdGen {
    prefix: u64,
    next: AtomicU64,
}

impl IdGen {
    pub fn new() -> Self {
        Self {
            prefix: rand::rng().random(),
            next: AtomicU64::new(1),
        }
    }

    /// `<tag>-<prefix>-<n>`, e.g. `c-9f2b…-17`.
    pub fn next(&self, tag: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{tag}-{:016x}-{n:x}", self.prefix)
    }
}

/// A short random id for things people read in logs: `p-8f3a1c2d`.
pub fn short(tag: &str) -> String {
    format!("{tag}-{:08x}", rand::rng().random::<u32>())
}

/// The low `N / 2` bytes of an id as `N` lower-case hex digits, zero-padded (what
/// `{:0Nx}` writes), on the stack: every call formats a `traceparent`, and the ledger's
/// writer three ids per span, where `fmt` was 3 % of its time (docs/performance.md, run 31).
pub(crate) struct Hex<const N: usize>([u8; N]);

impl<const N: usize> Hex<N> {
    pub fn new(mut id: u128) -> Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b'0'; N];
        for d in out.iter_mut().rev() {
            *d = DIGITS[(id & 0xf) as usize];
            id >>= 4;
        }
        Self(out)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

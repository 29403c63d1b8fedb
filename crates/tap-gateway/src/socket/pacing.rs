//! How fast the gateway takes new connections while some go away without authenticating.
//!
//! Every connection costs the gateway an HTTP parse, an upgrade and a task before it can
//! tell a provider from a flood, and on a 2-core machine a client opening connections as
//! fast as it can (9–10k/s) took enough of that work to multiply the p99 of calls on
//! connections already open by more than five (`tap-bench` S8, docs/performance.md). The
//! slot pool (`slots.rs`) keeps a flood from holding slots; this keeps it from holding the
//! CPU.
//!
//! A connection that ends without authenticating (it left, was evicted, or timed out)
//! spends a token; tokens come back at [`MAX_ABANDONED_CONNECTIONS_PER_SECOND`] up to
//! [`ABANDONED_CONNECTIONS_BURST`]. While the bucket is in debt, the listener accepts
//! nothing: new connections wait in the kernel's backlog until it is paid off. Connections
//! that authenticate spend nothing, so a client that reconnects often (or `tap-bench`'s
//! churn) is never slowed; during a flood, new connections of every kind wait their turn,
//! and the ones already open carry on.

use axum::serve::Listener;
use std::sync::{Arc, Mutex};
use tap_protocol::limits::{ABANDONED_CONNECTIONS_BURST, MAX_ABANDONED_CONNECTIONS_PER_SECOND};
use tokio::time::{Duration, Instant};

/// The token bucket connections that never authenticate draw from.
pub(crate) struct Abandonments {
    bucket: Mutex<Bucket>,
    rate: f64,
    burst: f64,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Default for Abandonments {
    fn default() -> Self {
        Self::new(
            f64::from(MAX_ABANDONED_CONNECTIONS_PER_SECOND),
            f64::from(ABANDONED_CONNECTIONS_BURST),
        )
    }
}

impl Abandonments {
    pub(crate) fn new(rate: f64, burst: f64) -> Self {
        Self {
            bucket: Mutex::new(Bucket {
                tokens: burst,
                at: Instant::now(),
            }),
            rate,
            burst,
        }
    }

    /// A connection ended without authenticating.
    pub fn spend(&self) {
        let mut b = self.refilled();
        b.tokens -= 1.0;
    }

    /// How long the listener must wait before it accepts again; zero when not in debt.
    pub fn wait(&self) -> Duration {
        let b = self.refilled();
        match b.tokens < 0.0 {
            true => Duration::from_secs_f64(-b.tokens / self.rate),
            false => Duration::ZERO,
        }
    }

    fn refilled(&self) -> std::sync::MutexGuard<'_, Bucket> {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let earned = now.duration_since(b.at).as_secs_f64() * self.rate;
        b.tokens = (b.tokens + earned).min(self.burst);
        b.at = now;
        b
    }
}

/// A listener that accepts only while [`Abandonments`] is not in debt.
pub(crate) struct Paced<L> {
    pub inner: L,
    pub abandoned: Arc<Abandonments>,
}

impl<L: Listener> Listener for Paced<L> {
    type Io = L::Io;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let wait = self.abandoned.wait();
            if wait.is_zero() {
                break;
            }
            tokio::time::sleep(wait).await;
        }
        self.inner.accept().await
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_burst_is_free_then_each_abandonment_costs_its_share_of_a_second() {
        let a = Abandonments::new(100.0, 10.0);
        for _ in 0..10 {
            a.spend();
        }
        assert_eq!(a.wait(), Duration::ZERO, "the burst costs nothing");
        for _ in 0..5 {
            a.spend();
        }
        assert_eq!(a.wait(), Duration::from_millis(50));
        tokio::time::advance(Duration::from_millis(50)).await;
        assert_eq!(a.wait(), Duration::ZERO);
    }

    /// Real sockets, virtual time: in debt, the listener takes the waiting connection only
    /// once the debt is paid.
    #[tokio::test(start_paused = true)]
    async fn in_debt_the_listener_accepts_only_once_it_is_paid() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let abandoned = Arc::new(Abandonments::new(100.0, 1.0));
        for _ in 0..3 {
            abandoned.spend();
        }
        let mut paced = Paced {
            inner: listener,
            abandoned,
        };
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let start = Instant::now();
        let (_io, from) = paced.accept().await;
        assert_eq!(from.ip(), addr.ip());
        assert!(
            start.elapsed() >= Duration::from_millis(20),
            "{:?}",
            start.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_come_back_no_further_than_the_burst() {
        let a = Abandonments::new(100.0, 10.0);
        tokio::time::advance(Duration::from_secs(60)).await;
        for _ in 0..11 {
            a.spend();
        }
        assert_eq!(a.wait(), Duration::from_millis(10));
    }
}

//! Connection slots of one kind, and who gives one up at the limit.
//!
//! The spec caps concurrent connections (50 providers). A connection takes its slot before
//! the upgrade and keeps it until it ends, so connections that never authenticate (a
//! flood, or a client that connects and stalls) could fill every slot for the auth
//! timeout and keep real providers out. So while a connection has not authenticated, its
//! slot is only lent: at the limit, the oldest such connection is closed and its slot goes
//! to the newcomer. Authenticated connections are never displaced; with every slot held by
//! one, a newcomer is refused (HTTP 503) as before.

use super::pacing::Abandonments;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Context;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The slots of one kind of connection.
pub(crate) struct Pool {
    slots: Arc<Semaphore>,
    lent: Arc<Mutex<Lent>>,
    /// Charged for each connection that ends unauthenticated (`pacing.rs`).
    abandoned: Arc<Abandonments>,
}

/// Slots held by connections that have not authenticated, oldest first.
#[derive(Default)]
struct Lent {
    next: u64,
    queue: VecDeque<(u64, OwnedSemaphorePermit, CancellationToken)>,
}

/// How a connection got its slot.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    Free,
    /// From the oldest unauthenticated connection, which is being closed.
    Displaced,
}

impl Pool {
    pub fn new(max: usize, abandoned: Arc<Abandonments>) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max)),
            lent: Arc::default(),
            abandoned,
        }
    }

    /// Slots in use (for the diagnostics), out of `max`.
    pub fn open(&self, max: usize) -> usize {
        max.saturating_sub(self.slots.available_permits())
    }

    /// A slot for a new, unauthenticated connection: a free one, or the oldest
    /// unauthenticated connection's. `None` when every slot is held by an authenticated
    /// connection.
    pub fn take(&self) -> Option<(Ticket, Taken)> {
        let mut lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
        let (permit, taken) = match self.slots.clone().try_acquire_owned() {
            Ok(p) => (p, Taken::Free),
            Err(_) => {
                let (_, permit, evict) = lent.queue.pop_front()?;
                evict.cancel();
                (permit, Taken::Displaced)
            }
        };
        lent.next += 1;
        let id = lent.next;
        let evicted = CancellationToken::new();
        lent.queue.push_back((id, permit, evicted.clone()));
        drop(lent);
        Some((
            Ticket {
                lent: self.lent.clone(),
                abandoned: self.abandoned.clone(),
                id,
                evicted: Some(Box::pin(evicted.cancelled_owned())),
                held: None,
            },
            taken,
        ))
    }
}

/// A connection's claim on its slot: lent until [`Ticket::authenticated`], then held
/// until the ticket drops (with the connection).
pub(crate) struct Ticket {
    lent: Arc<Mutex<Lent>>,
    abandoned: Arc<Abandonments>,
    id: u64,
    /// Resolves when the slot was given to a newcomer; `None` once the slot is held.
    evicted: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    held: Option<OwnedSemaphorePermit>,
}

impl Ticket {
    /// The peer authenticated: its slot can no longer be taken. `false` if it was taken
    /// already (the connection is closing, and [`Ticket::poll_evicted`] stays ready).
    pub fn authenticated(&mut self) -> bool {
        if self.held.is_some() {
            return true;
        }
        let mut lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = lent.queue.iter().position(|(id, ..)| *id == self.id) else {
            return false;
        };
        let (_, permit, _) = lent.queue.remove(i).expect("found above");
        self.held = Some(permit);
        self.evicted = None;
        true
    }

    /// Ready once the slot went to a newcomer; registers `cx` to be woken then.
    pub fn poll_evicted(&mut self, cx: &mut Context<'_>) -> bool {
        match self.evicted.as_mut() {
            Some(e) => e.as_mut().poll(cx).is_ready(),
            None => false,
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.held.is_none() {
            let mut lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
            lent.queue.retain(|(id, ..)| *id != self.id);
            drop(lent);
            self.abandoned.spend();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evicted(t: &mut Ticket) -> bool {
        let waker = futures_util::task::noop_waker();
        t.poll_evicted(&mut Context::from_waker(&waker))
    }

    #[test]
    fn at_the_limit_the_oldest_unauthenticated_connection_gives_up_its_slot() {
        let pool = Pool::new(2, Arc::default());
        let (mut a, how) = pool.take().unwrap();
        assert_eq!(how, Taken::Free);
        let (mut b, _) = pool.take().unwrap();
        let (mut c, how) = pool.take().unwrap();
        assert_eq!(how, Taken::Displaced);
        assert!(evicted(&mut a), "the oldest went");
        assert!(!evicted(&mut b) && !evicted(&mut c));
        assert!(!a.authenticated(), "too late to keep it");
        assert_eq!(pool.open(2), 2, "never more slots than the limit");
        drop(a);
        assert_eq!(pool.open(2), 2);
    }

    #[test]
    fn authenticated_connections_keep_their_slots_and_newcomers_are_refused() {
        let pool = Pool::new(2, Arc::default());
        let (mut a, _) = pool.take().unwrap();
        let (mut b, _) = pool.take().unwrap();
        assert!(a.authenticated() && b.authenticated());
        assert!(pool.take().is_none());
        drop(a);
        assert_eq!(pool.open(2), 1);
        let (_c, how) = pool.take().unwrap();
        assert_eq!(how, Taken::Free);
        assert!(!evicted(&mut b));
    }

    #[test]
    fn a_connection_that_ends_unauthenticated_frees_its_slot() {
        let pool = Pool::new(1, Arc::default());
        let (a, _) = pool.take().unwrap();
        drop(a);
        assert_eq!(pool.open(1), 0);
        let (_b, how) = pool.take().unwrap();
        assert_eq!(how, Taken::Free);
    }

    #[test]
    fn only_connections_that_end_unauthenticated_are_charged() {
        let abandoned = Arc::new(Abandonments::new(0.001, 1.0));
        let pool = Pool::new(4, abandoned.clone());
        let (mut provider, _) = pool.take().unwrap();
        assert!(provider.authenticated());
        drop(provider);
        let (first, _) = pool.take().unwrap();
        drop(first);
        assert!(
            abandoned.wait().is_zero(),
            "one abandonment is within the burst"
        );
        let (second, _) = pool.take().unwrap();
        drop(second);
        assert!(!abandoned.wait().is_zero(), "the second one is charged");
    }
}

//! Tool concurrency limits (spec: "Tool concurrency"): `hello.concurrency {max, scope}`.
//! A call takes a slot before its `tool.call` is sent and gives it back on its terminal
//! outcome. When no slot is free the call waits in a FIFO queue (tokio's semaphore is
//! fair); with `MAX_QUEUED_CALLS` already waiting a new call fails `RATE_LIMITED` at once.
//! A waiting call still honours its deadline and its caller's cancellation.

use super::CallError;
use crate::gateway::Gateway;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::limits::MAX_QUEUED_CALLS;
use tap_protocol::provider::{Concurrency, ConcurrencyScope};
use tap_protocol::ErrorCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What a limit is counted over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// One connection (`providerId`).
    Instance(String),
    /// Every instance of a provider name.
    Provider(String),
    /// One tool of one connection.
    Tool(String, String),
}

struct Gate {
    max: u32,
    slots: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
}

/// Limits declared by bound providers, and their slot pools. Under the state lock.
#[derive(Default)]
pub(crate) struct Limits {
    /// providerId → (name, limit).
    declared: HashMap<String, (String, Concurrency)>,
    gates: HashMap<Key, Gate>,
}

impl Limits {
    /// Records (or clears) the limit a provider declared in its `hello`.
    pub fn set(&mut self, provider_id: &str, name: &str, limit: Option<Concurrency>) {
        match limit {
            Some(c) => {
                // A new declaration gets fresh pools where the size changed (calls holding
                // old slots finish on the old pool). For scope `provider` the most recent
                // declaration sizes the pool shared by every instance.
                let max = c.max.max(1);
                let keys = [
                    Key::Instance(provider_id.to_string()),
                    Key::Provider(name.to_string()),
                ];
                for k in keys {
                    if self.gates.get(&k).is_some_and(|g| g.max != max) {
                        self.gates.remove(&k);
                    }
                }
                self.gates.retain(|k, g| {
                    !matches!(k, Key::Tool(p, _) if p == provider_id) || g.max == max
                });
                self.declared
                    .insert(provider_id.to_string(), (name.to_string(), c));
            }
            None => {
                self.declared.remove(provider_id);
            }
        }
    }

    /// The provider is gone: its own pools go (a `provider`-scoped pool stays, shared).
    pub fn forget(&mut self, provider_id: &str) {
        self.declared.remove(provider_id);
        self.gates.retain(|k, _| match k {
            Key::Instance(p) | Key::Tool(p, _) => p != provider_id,
            Key::Provider(_) => true,
        });
    }

    fn gate(
        &mut self,
        provider_id: &str,
        tool: &str,
    ) -> Option<(Arc<Semaphore>, Arc<AtomicUsize>)> {
        let (name, c) = self.declared.get(provider_id)?;
        let key = match c.scope {
            ConcurrencyScope::Instance => Key::Instance(provider_id.to_string()),
            ConcurrencyScope::Provider => Key::Provider(name.clone()),
            ConcurrencyScope::Tool => Key::Tool(provider_id.to_string(), tool.to_string()),
        };
        let max = c.max.max(1);
        let gate = self.gates.entry(key).or_insert_with(|| Gate {
            max,
            slots: Arc::new(Semaphore::new(max as usize)),
            waiting: Arc::default(),
        });
        Some((gate.slots.clone(), gate.waiting.clone()))
    }
}

/// Validates `hello.concurrency`.
pub(crate) fn validate(c: Option<&Concurrency>) -> Result<(), (ErrorCode, String)> {
    match c {
        Some(c) if c.max < 1 => Err((
            ErrorCode::InvalidJson,
            "'concurrency.max' must be at least 1".into(),
        )),
        _ => Ok(()),
    }
}

struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes a slot for a call of `tool` routed to provider connection `provider_id`, waiting in
/// line if needed. `None` when the provider declared no limit. (For a shared tool the
/// instance is chosen first, so scope `instance` and `tool` count that instance's calls and
/// scope `provider` every instance's.) Fails `RATE_LIMITED` when the line is full,
/// `TIMEOUT` at `deadline`, `CANCELLED` when `cancel` fires; the provider never hears of a
/// call that did not get a slot.
pub(crate) async fn acquire(
    gw: &Gateway,
    provider_id: &str,
    tool: &str,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Option<OwnedSemaphorePermit>, CallError> {
    let gate = gw.state().limits.gate(provider_id, tool);
    let Some((slots, waiting)) = gate else {
        return Ok(None);
    };
    if let Ok(permit) = slots.clone().try_acquire_owned() {
        // Only when nobody is queued ahead (the semaphore is fair, so this holds).
        return Ok(Some(permit));
    }
    if waiting.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED_CALLS {
        waiting.fetch_sub(1, Ordering::SeqCst);
        gw.limit_hit(crate::diagnostics::Limit::CallQueue);
        return Err(CallError::new(
            ErrorCode::RateLimited,
            format!(
                "Tool '{tool}' is at its concurrency limit with {MAX_QUEUED_CALLS} calls queued; retry later"
            ),
        ));
    }
    let _in_line = Waiting(waiting);
    tokio::select! {
        permit = slots.acquire_owned() => Ok(permit.ok()),
        _ = tokio::time::sleep_until(deadline) => Err(CallError::new(
            ErrorCode::Timeout,
            format!("Tool '{tool}' did not get a concurrency slot before its timeout"),
        )),
        _ = cancel.cancelled() => Err(CallError::new(
            ErrorCode::Cancelled,
            format!("Call to '{tool}' was cancelled while queued"),
        )),
    }
}

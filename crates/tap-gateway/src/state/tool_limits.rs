//! Tool concurrency limits (spec: "Tool concurrency"): `hello.concurrency {max, scope}`.
//! The declared limits and their slot pools, under the state lock; taking a slot is
//! `concurrency`.

use crate::error::Error;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use tap_protocol::provider::{Concurrency, ConcurrencyScope};
use tap_protocol::ErrorCode;
use tokio::sync::Semaphore;

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

    /// The limit provider `provider_id` declared, if any.
    pub fn declared(&self, provider_id: &str) -> Option<Concurrency> {
        self.declared.get(provider_id).map(|(_, c)| c.clone())
    }

    /// The provider is gone: its own pools go (a `provider`-scoped pool stays, shared).
    pub fn forget(&mut self, provider_id: &str) {
        self.declared.remove(provider_id);
        self.gates.retain(|k, _| match k {
            Key::Instance(p) | Key::Tool(p, _) => p != provider_id,
            Key::Provider(_) => true,
        });
    }

    pub(crate) fn gate(
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
pub(crate) fn validate(c: Option<&Concurrency>) -> Result<(), Error> {
    match c {
        Some(c) if c.max < 1 => Err(Error::new(
            ErrorCode::InvalidJson,
            "'concurrency.max' must be at least 1",
        )),
        _ => Ok(()),
    }
}

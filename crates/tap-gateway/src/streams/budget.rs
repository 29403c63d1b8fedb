//! Per-(provider, session) stream controls: filters and push budgets (spec: "Push loop
//! prevention").
//!
//! - At most [`MAX_PUSHES_PER_SECOND`] `surface`/`inject` pushes in any one-second window;
//!   `keep` pushes only store (bounded by retention) and cannot start a turn, so they are
//!   not counted.
//! - After an `inject` is delivered, the next `inject` from that provider to that session
//!   is refused until the host reports the session idle.
//! - Once [`MAX_INJECT_CYCLES`] inject→response→inject cycles happened in a row (that is,
//!   `MAX_INJECT_CYCLES + 1` injects, each after the session went idle), further injects
//!   are paused until the user speaks (`session.event user.message`).
//!
//! Refusals are `RATE_LIMITED`; the refused push is neither stored nor delivered.

use super::filter::Filter;
use crate::error::Error;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tap_protocol::limits::MAX_INJECT_CYCLES;
use tap_protocol::limits::{MAX_PUSHES_PER_SECOND, MAX_STREAMS_PER_PROVIDER, PUSH_BUDGET_WINDOW};
use tap_protocol::provider::PushLevel;
use tap_protocol::ErrorCode;
use tokio::time::Instant;

/// The state of one (provider, session).
#[derive(Default)]
struct Binding {
    filters: HashMap<String, Arc<Filter>>,
    /// When the counted pushes of the last second were accepted.
    window: VecDeque<Instant>,
    /// An inject was delivered and the session has not been reported idle since.
    awaiting_idle: bool,
    /// Injects delivered since the last reset (user message).
    injects: u32,
}

/// Provider id → session → its binding. Nested rather than keyed by a `(String, String)`
/// pair so that a push finds its binding by `&str` without allocating the pair (run 35's
/// heaptrack: two copies per push, every push).
type Bindings = HashMap<String, HashMap<String, Binding>>;

/// Filters and budgets of every (provider id, session).
#[derive(Default)]
pub(crate) struct StreamControls {
    // std Mutex, never held across an await, never held while taking the state lock.
    inner: Mutex<Bindings>,
}

/// The binding of (`provider`, `session`), created when missing; allocates only then.
fn binding_mut<'a>(map: &'a mut Bindings, provider: &str, session: &str) -> &'a mut Binding {
    if !map.contains_key(provider) {
        map.insert(provider.to_string(), HashMap::new());
    }
    let sessions = map.get_mut(provider).expect("inserted above");
    if !sessions.contains_key(session) {
        sessions.insert(session.to_string(), Binding::default());
    }
    sessions.get_mut(session).expect("inserted above")
}

impl StreamControls {
    fn lock(&self) -> std::sync::MutexGuard<'_, Bindings> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets (or, with `None`, removes) the filter of one of the provider's streams.
    pub fn set_filter(
        &self,
        provider: &str,
        session: &str,
        stream: &str,
        filter: Option<Arc<Filter>>,
    ) -> Result<(), Error> {
        let mut inner = self.lock();
        let b = binding_mut(&mut inner, provider, session);
        match filter {
            None => {
                b.filters.remove(stream);
            }
            Some(f) => {
                if !b.filters.contains_key(stream) && b.filters.len() >= MAX_STREAMS_PER_PROVIDER {
                    return Err(Error::new(
                        ErrorCode::PayloadTooLarge,
                        format!("A provider may filter at most {MAX_STREAMS_PER_PROVIDER} streams per session"),
                    ));
                }
                b.filters.insert(stream.to_string(), f);
            }
        }
        Ok(())
    }

    /// Applies the stream's filter and the budgets to a push. `Ok(None)`: dropped by the
    /// filter; `Ok(Some(level))`: store (and deliver unless `keep`) at `level`; `Err`:
    /// refused (`RATE_LIMITED` with this message).
    pub fn admit(
        &self,
        provider: &str,
        session: &str,
        stream: &str,
        text: &str,
        level: PushLevel,
    ) -> Result<Option<PushLevel>, Error> {
        let mut inner = self.lock();
        let found = inner.get(provider).and_then(|m| m.get(session));
        let level = match found.and_then(|b| b.filters.get(stream)) {
            Some(f) => match f.apply(text, level) {
                Some(level) => level,
                None => return Ok(None),
            },
            None => level,
        };
        if level == PushLevel::Keep {
            return Ok(Some(level));
        }
        let b = binding_mut(&mut inner, provider, session);
        let now = Instant::now();
        while b
            .window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= PUSH_BUDGET_WINDOW)
        {
            b.window.pop_front();
        }
        if b.window.len() >= MAX_PUSHES_PER_SECOND as usize {
            return Err(Error::new(ErrorCode::RateLimited, format!(
                "More than {MAX_PUSHES_PER_SECOND} surface/inject pushes a second to this session; push not delivered"
            )));
        }
        if level == PushLevel::Inject {
            if b.injects > MAX_INJECT_CYCLES {
                return Err(Error::new(ErrorCode::RateLimited, format!(
                    "Injects to this session are paused after {MAX_INJECT_CYCLES} consecutive inject→response→inject cycles; they resume after the next user message"
                )));
            }
            if b.awaiting_idle {
                return Err(Error::new(ErrorCode::RateLimited, "An inject from this provider is still being answered; the next one is accepted once the session is idle"));
            }
            b.awaiting_idle = true;
            b.injects += 1;
            if b.injects > MAX_INJECT_CYCLES {
                tracing::warn!(provider, session, "push loop: {MAX_INJECT_CYCLES} consecutive inject cycles; pausing this provider's injects until the next user message");
            }
        }
        b.window.push_back(now);
        Ok(Some(level))
    }

    /// The session was reported idle: the answer to any delivered inject is complete.
    pub fn idle(&self, session: &str) {
        for b in self.lock().values_mut().filter_map(|m| m.get_mut(session)) {
            b.awaiting_idle = false;
        }
    }

    /// The user spoke in the session: inject cycles start over and paused injects resume.
    pub fn user_message(&self, session: &str) {
        for b in self.lock().values_mut().filter_map(|m| m.get_mut(session)) {
            b.injects = 0;
        }
    }

    /// The provider disconnected or (re)bound: its filters and budgets go.
    pub fn forget(&self, provider: &str) {
        self.lock().remove(provider);
    }

    /// The provider left one session (an `"all"` binding's session ended).
    pub fn forget_session(&self, provider: &str, session: &str) {
        let mut inner = self.lock();
        if let Some(sessions) = inner.get_mut(provider) {
            sessions.remove(session);
            if sessions.is_empty() {
                inner.remove(provider);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(c: &StreamControls, provider: &str, session: &str) {
        for _ in 0..MAX_PUSHES_PER_SECOND {
            c.admit(provider, session, "st", "x", PushLevel::Surface)
                .expect("within the budget");
        }
    }

    fn refused(c: &StreamControls, provider: &str, session: &str) -> bool {
        c.admit(provider, session, "st", "x", PushLevel::Surface)
            .is_err()
    }

    // Paused: the budget's one-second window cannot pass while the test runs.
    #[tokio::test(start_paused = true)]
    async fn budgets_are_per_provider_and_session_and_forgotten_one_by_one() {
        let c = StreamControls::default();
        fill(&c, "p1", "s1");
        fill(&c, "p1", "s2");
        fill(&c, "p2", "s1");
        assert!(refused(&c, "p1", "s1"));
        assert!(refused(&c, "p1", "s2"));
        assert!(refused(&c, "p2", "s1"));
        assert!(!refused(&c, "p2", "s2"), "a new binding starts empty");

        c.forget_session("p1", "s1");
        assert!(!refused(&c, "p1", "s1"), "forgotten: a fresh budget");
        assert!(
            refused(&c, "p1", "s2"),
            "the provider's other session is kept"
        );

        c.forget("p1");
        assert!(!refused(&c, "p1", "s2"));
        assert!(refused(&c, "p2", "s1"), "another provider is kept");
    }
}

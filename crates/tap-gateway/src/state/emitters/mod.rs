//! The live emitters and injectors of every session, with their own locks (routing a line
//! never takes them; listing and starting do), and what an emitter is: its definition
//! (`spec`, with `schedule` and `filter`), its live state (`emitter`), and the injection
//! policy of a stream (`injector`). Running them is `crate::emitters`.

pub(crate) mod emitter;
pub(crate) mod event_filter;
pub(crate) mod injector;
pub(crate) mod schedule;
pub(crate) mod spec;

use crate::diagnostics::Coalesced;
use emitter::Emitter;
use injector::Injector;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) use crate::limits::MAX_EMITTERS_PER_SESSION;

/// Every live session's emitters: session id → name → emitter.
pub(crate) struct Emitters {
    // Its own lock: routing lines never takes it, listing and starting do.
    map: Mutex<HashMap<String, BTreeMap<String, Arc<Emitter>>>>,
    /// Problems with sessions' configured emitters, by session.
    warnings: Mutex<HashMap<String, Vec<String>>>,
    /// Session injectors: session id → stream → injector (made on first use).
    injectors: Mutex<HashMap<String, BTreeMap<String, Arc<Injector>>>>,
    /// `emitters.changed`: what changes an emitter or what it does notes here (the
    /// runner, `crate::emitters::api`).
    pub changed: Coalesced,
}

impl Emitters {
    pub fn new(changed: Coalesced) -> Self {
        Self {
            map: Mutex::default(),
            warnings: Mutex::default(),
            injectors: Mutex::default(),
            changed,
        }
    }

    pub(crate) fn map(&self) -> MutexGuard<'_, HashMap<String, BTreeMap<String, Arc<Emitter>>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a problem with one of a session's configured emitters.
    pub fn warn(&self, session_id: &str, message: String) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(session_id.to_string())
            .or_default()
            .push(message);
        self.changed.changed();
    }

    /// The problems noted for `session_id` (every session's when `None`).
    pub fn warnings(&self, session_id: Option<&str>) -> Vec<String> {
        let w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        w.iter()
            .filter(|(s, _)| session_id.is_none_or(|id| id == s.as_str()))
            .flat_map(|(_, m)| m.iter().cloned())
            .collect()
    }

    /// The running emitter `name` of `session_id`.
    pub(crate) fn get(&self, session_id: &str, name: &str) -> Option<Arc<Emitter>> {
        self.map().get(session_id)?.get(name).cloned()
    }

    /// Every emitter of `session_id`.
    pub(crate) fn of_session(&self, session_id: &str) -> Vec<Arc<Emitter>> {
        self.map()
            .get(session_id)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The injector of `stream` in `session_id`, made with the default policy if new.
    pub fn injector(&self, session_id: &str, stream: &str) -> Arc<Injector> {
        let mut map = self.injectors.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(session_id.to_string())
            .or_default()
            .entry(stream.to_string())
            .or_default()
            .clone()
    }

    /// The injectors of `session_id` made so far, by stream.
    pub fn injectors(&self, session_id: &str) -> BTreeMap<String, Arc<Injector>> {
        let map = self.injectors.lock().unwrap_or_else(|e| e.into_inner());
        map.get(session_id).cloned().unwrap_or_default()
    }

    /// Forgets an ended session's emitters (its token already stopped them).
    pub fn forget_session(&self, session_id: &str) {
        self.injectors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session_id);
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session_id);
        if let Some(ems) = self.map().remove(session_id) {
            for em in ems.values() {
                em.cancel.cancel();
            }
        }
        self.changed.changed();
    }
}

//! Emitters: background commands and scheduled prompts the gateway runs for a session,
//! whose output lines go through an EventFilter into the session's EventStreams
//! (`docs/emitters.md`).
//!
//! - `spec`: a definition, checked (name, command or prompt, schedule, cwd inside the
//!   workspace, filter); `schedule` and `filter` its parts.
//! - `emitter`: one emitter's live state; `runner`: its task (runs, schedules, restarts);
//!   `process`: the child process group and its lines; `route`: where each line goes.
//! - `api`: start, stop, list, runs — what the control plane and the agent's tools call.
//!
//! Who may start a command: the session's own host (the agent, through its tools) and the
//! control plane (panel, CLI). Providers never can: nothing here is reachable from a
//! provider connection.

pub(crate) mod api;
pub(crate) mod config;
mod emitter;
pub(crate) mod filter;
mod process;
mod route;
mod runner;
pub(crate) mod schedule;
pub(crate) mod spec;

use emitter::Emitter;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

/// Emitters one session may have at once.
pub(crate) const MAX_EMITTERS_PER_SESSION: usize = 32;

/// Every live session's emitters: session id → name → emitter.
#[derive(Default)]
pub(crate) struct Emitters {
    // Its own lock: routing lines never takes it, listing and starting do.
    map: Mutex<HashMap<String, BTreeMap<String, Arc<Emitter>>>>,
    /// Problems with sessions' configured emitters, by session.
    warnings: Mutex<HashMap<String, Vec<String>>>,
}

impl Emitters {
    fn map(&self) -> MutexGuard<'_, HashMap<String, BTreeMap<String, Arc<Emitter>>>> {
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
    }

    /// The problems noted for `session_id` (every session's when `None`).
    pub fn warnings(&self, session_id: Option<&str>) -> Vec<String> {
        let w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        w.iter()
            .filter(|(s, _)| session_id.is_none_or(|id| id == s.as_str()))
            .flat_map(|(_, m)| m.iter().cloned())
            .collect()
    }

    /// Forgets an ended session's emitters (its token already stopped them).
    pub fn forget_session(&self, session_id: &str) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session_id);
        if let Some(ems) = self.map().remove(session_id) {
            for em in ems.values() {
                em.cancel.cancel();
            }
        }
    }
}

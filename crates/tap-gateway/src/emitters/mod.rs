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
pub(crate) mod persist;
pub(crate) mod route;
mod runner;

pub(crate) use crate::state::emitters::{Emitters, MAX_EMITTERS_PER_SESSION};

//! Sessions: the registry, each session's tool set (who holds which tool, debounced toward
//! its host), the session lifecycle toward providers, and the session-host connections
//! that own sessions.

pub(crate) mod lifecycle;
mod project_follow;
pub(crate) mod session_events;
pub(crate) mod toolset;

//! Sessions: the registry, each session's tool set (who holds which tool, debounced toward
//! its host), the session lifecycle toward providers, and the session-host connections
//! that own sessions.

pub(crate) mod delivery_queue;
pub(crate) mod lifecycle;
pub(crate) mod session_events;
pub(crate) mod toolset;

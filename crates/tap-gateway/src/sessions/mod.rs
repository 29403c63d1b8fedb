//! Sessions: the registry, each session's tool set (who holds which tool, debounced toward
//! its host), the session lifecycle toward providers, and the session-host connections
//! that own sessions.

pub(crate) mod answers;
pub(crate) mod ending;
pub(crate) mod events;
pub(crate) mod host_conn;
pub(crate) mod hosts;
pub(crate) mod instances;
pub(crate) mod lifecycle;
pub(crate) mod listing;
pub(crate) mod session;
pub(crate) mod tool_entry;
pub(crate) mod tool_map;
pub(crate) mod toolset;

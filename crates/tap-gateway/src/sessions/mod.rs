//! Sessions: the registry, each session's tool set (debounced toward its host), the
//! session lifecycle toward providers, and the session-host connections that own sessions.

mod events;
mod host_conn;
mod hosts;
pub(crate) mod instances;
pub(crate) mod lifecycle;
mod session;
mod tool_map;
mod toolset;

pub(crate) use host_conn::serve as serve_host;
pub(crate) use hosts::HostEntry;
pub(crate) use session::Session;
pub(crate) use tool_map::{Claimant, Resolved, Want};

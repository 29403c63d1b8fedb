//! The TAP Provider Interface v2: every message in both directions.
//!
//! Field names follow the spec exactly (camelCase, except `startup_context`). Optional
//! fields are skipped when absent so the gateway never sends `null` where the spec
//! shows nothing.
//!
//! One file per capability, everything re-exported from here: the two message enums
//! (`messages`), the connection's own messages (`connection`: auth, `hello`, `ack`, `error`),
//! `sessions`, `tools`, `hooks` (rules and gates), `prompt` (transforms and context) and
//! `streams`.

mod connection;
mod hooks;
mod messages;
mod prompt;
mod sessions;
mod streams;
mod tools;

pub use connection::*;
pub use hooks::*;
pub use messages::*;
pub use prompt::*;
pub use sessions::*;
pub use streams::*;
pub use tools::*;

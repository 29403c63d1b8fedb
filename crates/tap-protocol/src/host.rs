//! The Tap session-host protocol (ours), spoken on `ws://127.0.0.1:9400/session`.
//!
//! A session host turns an agent runtime's session into a gateway session: it registers
//! and ends sessions, receives each session's tool set whenever it changes, invokes tools,
//! receives deliveries, and reports busy/idle and session events. `docs/session-host-protocol.md`
//! is the prose version of this module.
//!
//! Requests that expect an answer carry a host-chosen `requestId` (or `callId` for tool
//! invocations) that the answer echoes.
//!
//! One file per capability, everything re-exported from here: the two message enums
//! (`messages`), the connection's own messages (`connection`: auth, `error`), `sessions`
//! (and what a host reports of one: `capabilities`), `tools`, `prompt`, `streams`, `status`,
//! and what the gateway asks of the host's user (`asks`: approvals, a mode change).

mod asks;
mod capabilities;
mod connection;
mod messages;
mod prompt;
mod sessions;
mod status;
mod streams;
mod tools;

pub use asks::*;
pub use capabilities::*;
pub use connection::*;
pub use messages::*;
pub use prompt::*;
pub use sessions::*;
pub use status::*;
pub use streams::*;
pub use tools::*;

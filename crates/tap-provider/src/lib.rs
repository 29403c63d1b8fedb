//! Write a Tap provider in a few lines: tools with handlers, and everything the TAP
//! Provider Interface v2 asks of a provider done for you (finding the gateway and its
//! token, auth, picking a session, `hello`, answering `tool.call` with cancellation,
//! timeouts and progress, checking arguments against each tool's schema, pushes,
//! `tools.update`, `shutdown.pending`, reconnecting with the reconnect token).
//!
//! ```no_run
//! use serde_json::json;
//! use tap_provider::{Provider, Tool};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let greet = Tool::new("greet", "Says hello to someone",
//!     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
//!     |args, _ctx| async move { Ok(json!(format!("Hello, {}!", args["name"].as_str().unwrap_or("you")))) })?;
//! let mut provider = Provider::builder("greeter").tool(greet).connect().await?;
//! println!("bound to {}", provider.session_id());
//! provider.run().await;
//! # Ok(()) }
//! ```
//!
//! See `docs/sdk/rust.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod conn;
pub mod discovery;
mod provider;
mod tool;
mod types;

pub use discovery::Endpoint;
pub use provider::{Builder, Provider};
pub use tap_protocol::provider::{Hooks, PushLevel, SessionInfo};
pub use tap_protocol::ErrorCode;
pub use tool::{BadSchema, CallContext, Tool, ToolError};
pub use types::{Chooser, ConnectError, Event, PushOptions, SessionChoice};

use std::time::Duration;

/// How long the gateway keeps a dropped provider's binding for its reconnect token (spec:
/// "within 30 s"); after it the SDK binds afresh.
pub const RECONNECT_WINDOW: Duration = tap_protocol::limits::RECONNECT_TOKEN_TTL;
/// The first wait between reconnect attempts; doubled after each failure.
pub const RECONNECT_FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between reconnect attempts.
pub const RECONNECT_MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Events kept for a slow [`Provider::events`] receiver before it misses some.
pub const EVENT_BUFFER: usize = 256;

//! Write a Tap provider in a few lines: tools with handlers, and everything the TAP
//! Provider Interface v2 asks of a provider done for you (finding the gateway and its
//! token, auth, picking a session, `hello`, answering `tool.call` with cancellation,
//! timeouts and progress, checking arguments against each tool's schema, file results,
//! gates and callback transforms, pushes and their budget, runtime updates,
//! `shutdown.pending`, reconnecting with the reconnect token).
//!
//! ```no_run
//! use tap_provider::{json, Provider};
//!
//! fn main() -> Result<(), tap_provider::Error> {
//!     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
//!     Provider::builder("greeter")
//!         .tool_fn("greet", "Greets someone", schema, |a, _| async move {
//!             Ok(format!("Hello, {}!", a["name"].as_str().unwrap_or("you")))
//!         })
//!         .run_forever()
//! }
//! ```
//!
//! See `docs/sdk/rust.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bind;
mod conn;
pub mod discovery;
mod dispatch;
mod errors;
mod hooks;
mod outbox;
mod output;
mod provider;
mod requests;
mod state;
mod tool;
mod types;

pub use discovery::Endpoint;
pub use errors::{BadSchema, ToolError};
pub use hooks::{context_rule, deny_rule, gate_rule, RuleExt, Transform, Verdict};
pub use output::{FileResult, Output, DEFAULT_FILE_TTL};
pub use provider::{Builder, Provider, Pushed};
pub use requests::History;
pub use tool::{CallContext, Tool};
pub use types::{Chooser, Error, Event, PushOptions, SessionChoice};

/// Handlers take and give JSON: re-exported so a provider needs no `serde_json` of its own.
pub use serde_json::{json, Value};
pub use tap_protocol::provider::{
    Concurrency, FilterOutcome, FilterRule, GateCheck, HookAction, HookMatch, HookRule, Hooks,
    PushLevel, SessionInfo, StreamEntry, TransformRequest,
};
pub use tap_protocol::ErrorCode;

use std::time::Duration;

/// How long the gateway keeps a dropped provider's binding for its reconnect token (spec:
/// "within 30 s"); after it the SDK binds afresh.
pub const RECONNECT_WINDOW: Duration = tap_protocol::limits::RECONNECT_TOKEN_TTL;
/// The first wait between reconnect attempts; doubled after each failure.
pub const RECONNECT_FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between reconnect attempts: several attempts fit in the window.
pub const RECONNECT_MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long an update (`tools.update`, …) or a query may wait for its answer. Above the
/// gateway's tool-set publish debounce (up to 1 s), which a `tools.update` ack waits for.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Events kept for a slow [`Provider::events`] receiver before it misses some.
pub const EVENT_BUFFER: usize = 256;

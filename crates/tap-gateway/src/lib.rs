//! The Tap gateway engine: a local relay between AI agent sessions and tool providers.
//!
//! The engine is a library with no GUI dependency. The `tap` CLI, the desktop app and the
//! tests all bind a listener and hand it in:
//!
//! ```no_run
//! # async fn demo() -> Result<(), tap_gateway::GatewayError> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let config = tap_gateway::GatewayConfig::new("/tmp/tap-home".into());
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! tap_gateway::run(listener, config, shutdown).await
//! # }
//! ```
//!
//! Endpoints on the one port: `/` (providers, TAP Provider Interface v2), `/session`
//! (session hosts, `docs/session-host-protocol.md`), `/control` (panel and `tap pairing`,
//! `docs/control-protocol.md`), `/healthz`, and the panel itself (`GET /` without an
//! upgrade, `/assets/…`, `POST /api/login`; see [`GatewayConfig::ui_dir`] and
//! [`GatewayConfig::embedded_panel`]).
//!
//! The shape (`docs/architecture.md`): [`Gateway`] (`gateway.rs`) is the one public API,
//! over the engine's state (`state/`); each capability is a module of functions over that
//! state or of its own handles, and none of them knows the façade. `socket/` is the one
//! connection type every protocol handler runs on; `server/` routes HTTP to them. The
//! modules stand in layers and import only downward: `tests/rooms/table.rs` is the fence.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod accept;
mod approvals;
mod auth;
mod builtin;
mod clients;
mod config;
mod control;
mod diagnostics;
mod emitters;
mod error;
mod events;
/// Entry points for the fuzz targets in `fuzz/` (`docs/reliability.md`). Not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod gateway;
mod handle;
mod hooks;
mod host_protocol;
mod ids;
mod ledger;
mod limits;
pub mod logs;
mod mcp;
/// MCP servers as providers: the `mcpServers` configuration (`config`) is public for `tap mcp add`.
pub mod mcp_servers;
mod oauth;
mod pairing;
mod patterns;
mod pins;
mod processes;
mod profiles;
mod project;
mod provider_protocol;
mod providers;
mod request;
mod server;
mod sessions;
pub mod settings;
mod socket;
mod state;
mod status;
mod streams;
mod text;
mod time;
mod tools;
mod trace;
mod transforms;

pub use auth::copilot_holder::{
    holding as copilot_token_holding, Holder as CopilotTokenHolder, Holding as CopilotTokenHolding,
};
pub use auth::files::{read_secret_file, GatewayFiles};
pub use config::embedded_panel::EmbeddedPanel;
pub use config::{GatewayConfig, History, OutboundLimits};
pub use error::{Error, GatewayError};
pub use events::GatewayEvent;
pub use gateway::Gateway;
pub use handle::{run, GatewayHandle};
pub use hooks::decide::Decision;
pub use limits::{MAX_PROGRESS_QUEUED_BYTES_PER_CALL, MAX_PROGRESS_QUEUED_PER_CALL};
pub use processes::restart::RestartPolicy;
pub use processes::spawn::SpawnSpec;
pub use provider_protocol::local::{LocalClosed, LocalProvider};
pub use request::{CallError, CallRequest, Caller, ProgressReceiver, ProgressSink};
#[cfg(feature = "lock-count")]
pub use state::state_locks;
pub use trace::otlp::otlp_endpoint_from_env;

/// The provider name the built-in tools are listed under in `session.tools`.
pub const BUILTIN_PROVIDER: &str = builtin::PROVIDER;

/// The gateway's built-in `tap_*` tools, which every session has beside its providers'
/// (`docs/emitters.md`, "Agent tools").
pub fn builtin_tools() -> Vec<tap_protocol::provider::ToolDef> {
    builtin::tools().iter().map(|d| (**d).clone()).collect()
}

/// The history database's DDL (tables, indexes, full-text index and its triggers), one
/// entry per schema version, in the order they apply. Not an API: `tap-bench` builds its
/// bare SQLite baseline (S3d) with exactly the ledger's schema from it.
#[doc(hidden)]
pub fn ledger_schema_sql() -> &'static [&'static str] {
    ledger::schema_sql()
}

/// Writes tool calls (start, duration, provider, tool, client, succeeded) into the history
/// database of `data_dir` as a gateway would (root spans, through the ledger's writer and
/// its activity rollup). Not an API: `tap-bench` fills a week of calls with it before it
/// times `activity.query`.
#[doc(hidden)]
pub async fn ledger_prefill_calls(
    data_dir: &std::path::Path,
    calls: impl IntoIterator<Item = ledger::rollup::PrefillCall>,
) -> Result<(), String> {
    ledger::rollup::prefill(data_dir, calls).await
}

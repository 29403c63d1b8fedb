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
//! upgrade, `/assets/…`, `POST /api/login`; see [`GatewayConfig::ui_dir`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod auth;
mod config;
mod control;
mod diagnostics;
mod error;
mod events;
mod gateway;
mod hooks;
mod ids;
pub mod logs;
mod pairing;
mod providers;
mod server;
mod sessions;
pub mod settings;
mod status;
mod streams;
mod time;
mod tools;
mod transforms;

pub use auth::files::{read_secret_file, GatewayFiles};
pub use config::GatewayConfig;
pub use error::GatewayError;
pub use events::GatewayEvent;
pub use gateway::{run, Gateway, GatewayHandle};
pub use hooks::Decision;
pub use pairing::PairingError;
pub use providers::{LocalClosed, LocalProvider, RestartPolicy, SpawnSpec};
pub use tools::{CallError, CallRequest};

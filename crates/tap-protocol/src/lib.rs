//! Wire types of every protocol the Tap gateway speaks.
//!
//! - [`provider`]: the TAP Provider Interface v2 (`ws://127.0.0.1:9400/`), one enum per
//!   direction, covering every message of the spec (not only the Core Profile).
//! - [`host`]: the Tap session-host protocol (`ws://127.0.0.1:9400/session`), ours.
//! - [`pairing`]: pairing requests and paired providers, as the control plane shows them.
//! - [`control`]: the control plane (`ws://127.0.0.1:9400/control`) of the panel and `tap pairing`,
//!   with what it shows: [`diagnostics`], [`logs`], [`settings`].
//! - [`emitters`]: background commands and scheduled prompts feeding streams.
//! - [`mcp_servers`]: MCP servers the gateway runs as providers.
//! - [`clients`]: MCP clients and the `tap` entry in their files.
//! - [`ledger`]: what the gateway keeps (stream events, traces, sessions) and how it is
//!   browsed; [`activity`]: the tool calls' figures over time, counted from it.
//! - [`ErrorCode`]: every error code either protocol puts on the wire.
//!
//! Forward compatibility follows the spec: unknown fields are ignored everywhere (the one
//! exception is [`settings::SettingsPatch`], where a misspelt setting must fail), and [`decode`] tells an unknown message type apart
//! from a malformed known one so the gateway can answer `UNKNOWN_TYPE` and stay connected.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod activity;
pub mod approvals;
pub mod clients;
pub mod control;
mod decode;
pub mod diagnostics;
pub mod emitters;
mod error_code;
pub mod host;
mod json_text;
pub mod ledger;
pub mod limits;
pub mod logs;
pub mod masking;
pub mod mcp_servers;
pub mod pairing;
pub mod pins;
pub mod profiles;
pub mod provider;
pub mod settings;
mod wire;

pub use decode::{decode, DecodeError};
pub use error_code::ErrorCode;
pub use json_text::JsonText;

/// The only Provider Interface version this gateway speaks.
pub const PROTOCOL_VERSION: u32 = 2;

/// The session-host protocol version this gateway speaks.
pub const HOST_PROTOCOL_VERSION: u32 = 1;

/// Free-form JSON, as carried in tool arguments, results and metadata.
pub type Json = serde_json::Value;

/// A JSON object, as required for `metadata` fields.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

//! The entry named `tap` in MCP clients' own configuration files (docs/clients.md): the
//! entry that makes a client launch `tap mcp --session <client>`, where each client keeps
//! it, where a client stands, and the edits (and for the Copilot CLI, tap's extension). Files only, no gateway: `tap connect` and the
//! gateway's `clients.*` control methods are both built on it.
//!
//! - [`clients`]: the clients, their files and formats, [`Dirs`];
//! - [`entry`]: what the entry holds;
//! - [`json_file`], [`toml_file`]: the edits, which keep every other byte;
//! - [`write`]: backup, atomic replace, dry-run diff;
//! - [`status`], [`record`]: connected / drifted;
//! - [`change`]: connect and disconnect, planned then applied;
//! - [`copilot`]: the Copilot CLI, connected by tap's extension instead of an entry.
#![forbid(unsafe_code)]

pub mod change;
pub mod clients;
pub mod copilot;
pub mod entry;
pub mod json_file;
pub mod record;
pub mod status;
pub mod toml_file;
pub mod write;

pub use change::{plan_connect, plan_disconnect, ConnectPlan, DisconnectPlan, Error, Removal};
pub use clients::{on_path, Client, Dirs, Format};
pub use status::{Report, State};

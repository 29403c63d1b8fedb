//! The desktop app's logic that needs no display: what `tap-desktop` decides and runs, kept
//! out of the Tauri shell (`src-tauri/`) so it builds and is unit-tested without Tauri,
//! GTK or WebKit (`cargo test -p tap-desktop-core`).
//!
//! The shell only adapts: it builds the tray and windows, registers the IPC commands, and
//! carries out what these modules decide ([`watcher::Action`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod args;
pub mod browser;
pub mod desktop;
pub mod engine;
pub mod failures;
pub mod first_run;
pub mod gtk_env;
pub mod headless;
pub mod ipc;
pub mod launch;
pub mod logging;
pub mod mcp_watch;
pub mod notify;
pub mod popup;
pub mod settings;
pub mod signals;
pub mod tap_program;
pub mod tray_state;
pub mod watcher;
pub mod windows;

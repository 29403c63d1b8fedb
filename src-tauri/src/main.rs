//! `tap-desktop`: the Tap Gateway tray app. It hosts the gateway engine in-process (what
//! `tap gateway` runs) and adds a tray icon, the pairing popup, the control panel window,
//! desktop notifications, the OS keyring, launch at login and a single instance.
//!
//! Everything that can be decided without a display lives in the Tauri-free crate
//! `tap-desktop-core`, with its unit tests; this crate is thin glue (`app`, `tray`,
//! `windows`, `commands`).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod app;
mod commands;
mod state;
mod tray;
mod windows;

use tap_desktop_core::{args, failures, headless, settings};

use std::io::IsTerminal;
use std::net::SocketAddr;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

fn main() {
    let (options, ignored) = match args::parse(std::env::args().skip(1), |k| std::env::var(k).ok())
    {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("tap-desktop: {e}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    if options.help {
        print!("{}", args::USAGE);
        return;
    }
    let (failures_tx, failures_rx) = tokio::sync::mpsc::unbounded_channel();
    let logs = init_logging(failures_tx);
    if !ignored.is_empty() {
        tracing::warn!(?ignored, "ignoring unknown arguments");
    }
    let home = tap_client::default_home();
    let listen = options
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], settings::load(&home).port)));
    let code = if has_display() {
        app::run(options, home, listen, failures_rx, logs)
    } else {
        // No X or Wayland display: GTK cannot start, but the gateway can.
        tracing::warn!("no display (DISPLAY and WAYLAND_DISPLAY are unset): running the gateway without tray or windows");
        headless::run(home, listen, logs)
    };
    std::process::exit(code);
}

fn has_display() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
}

/// The log goes to stderr (`TAP_LOG` filters it, as for `tap gateway`) and into the ring
/// the panel's Logs page reads (returned, for the engine); provider failures are also
/// picked out of it for notifications.
fn init_logging(
    failures: tokio::sync::mpsc::UnboundedSender<failures::ProviderFailure>,
) -> tap_gateway::logs::LogBuffer {
    let logs = tap_gateway::logs::LogBuffer::new(tap_gateway::logs::LogBuffer::DEFAULT_CAPACITY);
    let filter = tap_gateway::logs::env_filter();
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(logs.layer())
        .with(failures::FailureLayer::new(failures).with_filter(LevelFilter::WARN))
        .init();
    logs
}

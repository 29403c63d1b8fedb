//! `tap-desktop`: the Tap Gateway tray app. It hosts the gateway engine in-process (what
//! `tap gateway` runs) and adds a tray icon, the pairing popup, the control panel window,
//! desktop notifications, the OS keyring, launch at login and a single instance.
//!
//! The engine starts first and the windows only when shown (see `app` and `windows`): at
//! login the app is a gateway and a tray icon, with no webview.
//!
//! This crate is the Tauri shell, and only adapts: everything that can be decided or run
//! without a display is in `tap-desktop-core`, with its unit tests. Here: `app` (builder,
//! setup, run loop), `tray` and `windows` (Tauri objects), `actions` (carries out the
//! core's decisions on them), `commands` (IPC); what they share is the core's `Desktop`.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod actions;
mod app;
mod commands;
mod tray;
mod windows;

use tap_desktop_core::{args, gtk_env, headless, logging, settings};

/// What the tray, the windows, the commands and the event loop share (managed by the app).
type Desktop = tap_desktop_core::desktop::Desktop<tray::TrayHandles>;

fn main() {
    // Before any thread exists (see gtk_env): GDK reads it when Tauri starts GTK.
    let display = args::has_display(std::env::var_os);
    if display {
        gtk_env::apply();
    }
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
    let (logs, failures) = logging::install();
    if !ignored.is_empty() {
        tracing::warn!(?ignored, "ignoring unknown arguments");
    }
    let home = tap_client::default_home();
    let listen = settings::listen_address(options.listen, &home);
    let code = if display {
        app::run(options, home, listen, failures, logs)
    } else {
        // No X or Wayland display: GTK cannot start, but the gateway can.
        tracing::warn!("no display (DISPLAY and WAYLAND_DISPLAY are unset): running the gateway without tray or windows");
        headless::run(home, listen, logs)
    };
    std::process::exit(code);
}

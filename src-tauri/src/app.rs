//! Builds and runs the Tauri app around the engine, which starts first, before GTK and
//! WebKit are even loaded, unless another instance runs (`tap_desktop_core::launch`). No
//! window exists until one is opened (`windows`).

use crate::{actions, commands, tray, windows, Desktop};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Mutex;
use tap_desktop_core::args::Options;
use tap_desktop_core::engine::QUIT_WAIT;
use tap_desktop_core::failures::ProviderFailure;
use tap_desktop_core::launch::Launch;
use tap_desktop_core::notify::refuse_start;
use tap_desktop_core::signals::Signals;
use tap_desktop_core::{first_run, popup, windows::automated};
use tap_gateway::logs::LogBuffer;
use tauri::{AppHandle, Manager, RunEvent};
use tauri_plugin_autostart::ManagerExt;
use tokio::sync::mpsc::UnboundedReceiver;

/// Runs the app until Quit (or SIGINT/SIGTERM); returns the exit code.
pub fn run(
    options: Options,
    home: PathBuf,
    listen: SocketAddr,
    failures: UnboundedReceiver<ProviderFailure>,
    logs: LogBuffer,
) -> i32 {
    let context = tauri::generate_context!();
    let handing_over = instance_running(&context.config().identifier);
    let (launch, signals) = Launch::desktop(home, listen, logs, failures, handing_over);
    tauri::async_runtime::set(launch.runtime.handle().clone());
    let home = launch.home.clone();
    let early = Mutex::new(Some((launch, signals)));
    let home_for_errors = home.clone();
    let built = tauri::Builder::default()
        // First, so a second launch hands over and exits before anything else starts.
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| {
            if argv.iter().any(|a| a == "--hidden") {
                tracing::info!("second instance started at login; already running");
            } else {
                tracing::info!("second instance started; showing the panel");
                actions::open_panel(app);
            }
        }))
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .app_name("tap-desktop")
                .args(["--hidden"])
                .build(),
        )
        .invoke_handler(commands::handle)
        .setup(move |app| {
            let (launch, signals) = early.lock().unwrap().take().expect("setup runs once");
            if let Err(e) = setup(app.handle(), &options, launch, signals) {
                // Tauri runs this hook inside the event loop and panics on an error: say
                // why and leave instead.
                refuse_start(&home, &e);
            }
            Ok(())
        })
        .build(context);
    let app = match built {
        Ok(app) => app,
        Err(e) => refuse_start(&home_for_errors, &e.to_string()),
    };
    app.run(|app, event| match event {
        RunEvent::ExitRequested {
            code: None, api, ..
        } => {
            // No window left open is not a reason to quit a tray app: windows are
            // destroyed when closed, and this comes after the last one.
            api.prevent_exit();
        }
        RunEvent::Exit => {
            if let Some(engine) = app.state::<Desktop>().take_engine() {
                // Bounded: a peer that does not answer must not hold the quit (QUIT_WAIT).
                tauri::async_runtime::block_on(engine.quit(QUIT_WAIT));
            }
        }
        _ => {}
    });
    0
}

/// Whether the single-instance plugin's D-Bus name (`IDENTIFIER.SingleInstance`, see
/// tauri-plugin-single-instance's linux.rs) has an owner: another `tap-desktop` runs in
/// this session. No session bus: false (the plugin then launches normally too).
#[cfg(target_os = "linux")]
fn instance_running(identifier: &str) -> bool {
    let name = format!("{identifier}.SingleInstance");
    let Ok(name) = zbus::names::BusName::try_from(name.as_str()) else {
        return false;
    };
    zbus::blocking::Connection::session()
        .and_then(|c| {
            zbus::blocking::fdo::DBusProxy::new(&c)?
                .name_has_owner(name)
                .map_err(Into::into)
        })
        .unwrap_or(false)
}

/// Elsewhere the plugin's lock is taken before anything else is done in `build`, and a
/// second launch's engine refuses to start beside the first one's gateway.json.
#[cfg(not(target_os = "linux"))]
fn instance_running(_identifier: &str) -> bool {
    false
}

fn setup(
    app: &AppHandle,
    options: &Options,
    mut launch: Launch,
    signals: Signals,
) -> Result<(), String> {
    let (engine, home) = (launch.engine()?, launch.home.clone());
    let notify_after = popup::notify_after(|k| std::env::var(k).ok());
    let (desktop, follower) = Desktop::new(engine, home.clone(), notify_after);
    let (address, summary) = (desktop.address, desktop.summary());
    app.manage(desktop);
    tracing::info!(%address, home = %home.display(), "Tap Gateway desktop app running");

    first_run::apply_default_logged(&home, || {
        app.autolaunch().enable().map_err(|e| e.to_string())
    });
    let autostart_on = app.autolaunch().is_enabled().unwrap_or(false);
    let menu = actions::on_menu;
    match tray::build(app, &summary, &address.to_string(), autostart_on, menu) {
        Ok(handles) => app.state::<Desktop>().set_tray(handles),
        // No tray at all (rare: appindicator falls back to a status icon): the app
        // still serves, and a second launch or the notifications reach the panel.
        Err(e) => tracing::warn!(error = %e, "no tray icon"),
    }

    if options.show {
        actions::open_panel(app);
    } else if automated(|k| std::env::var(k).ok()) {
        // Under WebDriver the panel is made at start, hidden (see `automated`).
        windows::make_panel(app, false);
    }
    let follower_app = app.clone();
    let apply = move |actions| actions::apply(&follower_app, actions);
    tauri::async_runtime::spawn(follower.run(launch.failures, apply));
    let quit = app.clone();
    tauri::async_runtime::spawn(async move {
        let name = signals.recv().await;
        tracing::info!("{name}: quitting");
        quit.exit(0);
    });
    Ok(())
}

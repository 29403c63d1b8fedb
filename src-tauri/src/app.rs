//! Builds and runs the Tauri app around the engine.

use crate::state::Desktop;
use crate::{actions, commands, tray};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tap_desktop_core::args::Options;
use tap_desktop_core::engine::{Engine, StartOptions, QUIT_WAIT};
use tap_desktop_core::failures::ProviderFailure;
use tap_desktop_core::first_run;
use tap_desktop_core::notify::refuse_start;
use tap_desktop_core::popup;
use tap_desktop_core::signals::Signals;
use tap_desktop_core::watcher::{self, Watcher};
use tap_gateway::logs::LogBuffer;
use tauri::{AppHandle, Manager, RunEvent, WindowEvent};
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
    let failures = Mutex::new(Some(failures));
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
        .invoke_handler(tauri::generate_handler![
            commands::control_endpoint,
            commands::get_autostart,
            commands::set_autostart,
            commands::secret_storage_notice,
            commands::open_panel,
            commands::hide_window,
            commands::fit_popup,
        ])
        .on_window_event(|window, event| {
            if let WindowEvent::CloseRequested { api, .. } = event {
                // The app lives in the tray: closing a window hides it.
                api.prevent_close();
                let _ = window.hide();
            }
        })
        .setup(move |app| {
            let failures = failures.lock().unwrap().take().expect("setup runs once");
            let started = setup(
                app.handle(),
                &options,
                home.clone(),
                listen,
                failures,
                logs.clone(),
            );
            if let Err(e) = started {
                // Tauri runs this hook inside the event loop and panics on an error: say
                // why and leave instead.
                refuse_start(&home, &e);
            }
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match built {
        Ok(app) => app,
        Err(e) => refuse_start(&home_for_errors, &e.to_string()),
    };
    app.run(|app, event| match event {
        RunEvent::ExitRequested {
            code: None, api, ..
        } => {
            // No window left open is not a reason to quit a tray app.
            api.prevent_exit();
        }
        RunEvent::Exit => {
            let engine = app.state::<Desktop>().engine.lock().unwrap().take();
            if let Some(engine) = engine {
                // Bounded: a peer that does not answer must not hold the quit (QUIT_WAIT).
                tauri::async_runtime::block_on(engine.quit(QUIT_WAIT));
            }
        }
        _ => {}
    });
    0
}

fn setup(
    app: &AppHandle,
    options: &Options,
    home: PathBuf,
    listen: SocketAddr,
    failures: UnboundedReceiver<ProviderFailure>,
    logs: LogBuffer,
) -> Result<(), String> {
    let signals = tauri::async_runtime::block_on(async { Signals::register() });
    let engine = tauri::async_runtime::block_on(Engine::start(StartOptions::desktop(
        home.clone(),
        listen,
        logs,
    )))?;
    let gateway = engine.gateway().clone();
    let address = gateway.address();
    // Subscribe before reading the state, so nothing between the two is missed.
    let events = gateway.subscribe();
    let notify_after = popup::notify_after(|k| std::env::var(k).ok());
    let watcher = Arc::new(Mutex::new(
        Watcher::new(&gateway.status(), &gateway.pairing_list()).with_notify_after(notify_after),
    ));
    let summary = watcher.lock().unwrap().summary();
    app.manage(Desktop {
        home: home.clone(),
        address,
        control_token: gateway.control_token().to_string(),
        secret_notice: engine.secret_notice(),
        watcher: watcher.clone(),
        tray: Mutex::new(None),
        engine: Mutex::new(Some(engine)),
    });
    tracing::info!(%address, home = %home.display(), "Tap Gateway desktop app running");

    match first_run::apply_default(&home, || {
        app.autolaunch().enable().map_err(|e| e.to_string())
    }) {
        Ok(first_run::Outcome::Enabled) => tracing::info!("Start at login turned on (first run)"),
        Ok(first_run::Outcome::LeftAsIs) => {}
        Err(e) => tracing::warn!(error = %e, "could not turn Start at login on"),
    }

    let autostart_on = app.autolaunch().is_enabled().unwrap_or(false);
    match tray::build(
        app,
        &summary,
        &address.to_string(),
        autostart_on,
        actions::on_menu,
    ) {
        Ok(handles) => *app.state::<Desktop>().tray.lock().unwrap() = Some(handles),
        // No tray at all (rare: appindicator falls back to a status icon): the app
        // still serves, and a second launch or the notifications reach the panel.
        Err(e) => tracing::warn!(error = %e, "no tray icon"),
    }

    if options.show {
        actions::open_panel(app);
    }
    let follower = app.clone();
    tauri::async_runtime::spawn(watcher::follow(
        gateway,
        watcher,
        events,
        failures,
        move |actions| actions::apply(&follower, actions),
    ));
    let quit = app.clone();
    tauri::async_runtime::spawn(async move {
        let name = signals.recv().await;
        tracing::info!("{name}: quitting");
        quit.exit(0);
    });
    Ok(())
}

//! Builds and runs the Tauri app around the engine.

use crate::state::Desktop;
use crate::{commands, tray, windows};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tap_desktop_core::args::Options;
use tap_desktop_core::engine::{Engine, StartOptions};
use tap_desktop_core::failures::ProviderFailure;
use tap_desktop_core::signals::Signals;
use tap_desktop_core::watcher::{Action, Watcher};
use tap_desktop_core::{first_run, notify, settings};
use tap_gateway::logs::LogBuffer;
use tauri::{AppHandle, Manager, RunEvent, WindowEvent};
use tauri_plugin_autostart::ManagerExt;
use tokio::sync::broadcast::error::RecvError;
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
                windows::show_panel(app);
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
                tauri::async_runtime::block_on(engine.stop());
            }
        }
        _ => {}
    });
    0
}

/// The app cannot start (another gateway for this `TAP_HOME`, the port taken, …): says why
/// on stderr and, since a login item has no terminal, in a notification; exits 2.
fn refuse_start(home: &std::path::Path, why: &str) -> ! {
    eprintln!("tap-desktop: {why}");
    tracing::error!(error = %why, "the app could not start");
    if settings::load(home).notifications {
        if let Some(shown) = notify::send(notify::start_failed(why)) {
            let _ = shown.join();
        }
    }
    std::process::exit(2)
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
    let engine = tauri::async_runtime::block_on(Engine::start(StartOptions {
        home: home.clone(),
        listen,
        backend: Arc::new(tap_secrets::OsKeyring::default()),
        keyring_allowed: !tap_secrets::keyring_disabled_by_env(),
        copilot_home: tap_client::default_copilot_home(),
        ui_dir: tap_desktop_core::engine::ui_dir(),
        logs: Some(logs),
    }))?;
    let gateway = engine.gateway().clone();
    let address = gateway.address();
    // Subscribe before reading the state, so nothing between the two is missed.
    let events = gateway.subscribe();
    let watcher = Watcher::new(&gateway.status(), &gateway.pairing_list());
    let summary = watcher.summary();
    app.manage(Desktop {
        home: home.clone(),
        address,
        control_token: gateway.control_token().to_string(),
        secret_notice: engine.secret_notice(),
        watcher: Mutex::new(watcher),
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

    match tray::build(app, &summary, &address.to_string()) {
        Ok(handles) => *app.state::<Desktop>().tray.lock().unwrap() = Some(handles),
        // No tray at all (rare: appindicator falls back to a status icon): the app
        // still serves, and a second launch or the notifications reach the panel.
        Err(e) => tracing::warn!(error = %e, "no tray icon"),
    }

    if options.show {
        windows::show_panel(app);
    }
    tauri::async_runtime::spawn(watch(app.clone(), events, failures));
    let quit = app.clone();
    tauri::async_runtime::spawn(async move {
        let name = signals.recv().await;
        tracing::info!("{name}: quitting");
        quit.exit(0);
    });
    Ok(())
}

/// Follows the engine's events and the provider failures, and carries out what the
/// watcher decides.
async fn watch(
    app: AppHandle,
    mut events: tokio::sync::broadcast::Receiver<tap_gateway::GatewayEvent>,
    mut failures: UnboundedReceiver<ProviderFailure>,
) {
    let gateway = {
        let desktop = app.state::<Desktop>();
        let engine = desktop.engine.lock().unwrap();
        match engine.as_ref() {
            Some(e) => e.gateway().clone(),
            None => return,
        }
    };
    loop {
        let actions = tokio::select! {
            event = events.recv() => {
                let desktop = app.state::<Desktop>();
                match event {
                    Ok(event) => desktop.watcher.lock().unwrap().on_event(&event, || gateway.status()),
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!(missed = n, "desktop watcher lagged; resyncing");
                        let (status, pairings) = (gateway.status(), gateway.pairing_list());
                        desktop.watcher.lock().unwrap().resync(&status, &pairings)
                    }
                    Err(RecvError::Closed) => return,
                }
            }
            Some(failure) = failures.recv() => {
                app.state::<Desktop>().watcher.lock().unwrap().on_failure(&failure)
            }
        };
        apply(&app, actions);
    }
}

/// Carries out the watcher's actions. Tray and window changes are posted to the main
/// thread without waiting for it: this task must never block on the main thread, which may
/// itself be waiting for the engine to stop (on Quit).
fn apply(app: &AppHandle, actions: Vec<Action>) {
    for action in actions {
        let on_main = |f: fn(&AppHandle)| {
            let handle = app.clone();
            if let Err(e) = app.run_on_main_thread(move || f(&handle)) {
                tracing::debug!(error = %e, "the event loop is gone; tray/window update dropped");
            }
        };
        match action {
            Action::UpdateTray => on_main(tray::update),
            Action::ShowPopup => on_main(|app| windows::show_popup(app, false)),
            Action::HidePopup => on_main(windows::hide_popup),
            Action::Notify(note) => {
                let home = app.state::<Desktop>().home.clone();
                if settings::load(&home).notifications {
                    let _ = notify::send(note);
                } else {
                    tracing::info!(summary = %note.summary, "notification not shown: notifications are off in Settings");
                }
            }
        }
    }
}

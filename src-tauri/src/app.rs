//! Builds and runs the Tauri app around the engine.
//!
//! Order matters for what a login costs: the engine starts first, on a tokio runtime made
//! here and lent to Tauri, so the gateway answers before GTK and WebKit are even loaded.
//! No window exists until one is opened (`windows`).

use crate::state::Desktop;
use crate::{actions, commands, tray, windows};
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
    // One runtime for the engine and Tauri (which would otherwise make its own); it lives
    // as long as the process (the event loop never returns).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Box::leak(Box::new(rt)),
        Err(e) => refuse_start(&home, &format!("cannot start the async runtime: {e}")),
    };
    tauri::async_runtime::set(runtime.handle().clone());
    let signals = runtime.block_on(async { Signals::register() });
    // A second launch hands over to the first (the single-instance plugin, below) and must
    // not start an engine first: with another TAP_HOME or port it would bind and write its
    // files only to be cut short by the handover's exit. Then the engine waits for `setup`,
    // which runs only if the first instance went away meanwhile.
    let engine = if instance_running(&context.config().identifier) {
        tracing::debug!("another instance runs in this session: handing over");
        None
    } else {
        let start = Engine::start(StartOptions::desktop(home.clone(), listen, logs.clone()));
        match runtime.block_on(start) {
            Ok(engine) => Some(engine),
            Err(e) => refuse_start(&home, &e),
        }
    };
    let early = Mutex::new(Some((engine, signals, failures)));
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
            commands::page_rendered,
        ])
        .setup(move |app| {
            let (engine, signals, failures) =
                early.lock().unwrap().take().expect("setup runs once");
            let started = setup(
                app.handle(),
                &options,
                engine,
                home.clone(),
                listen,
                signals,
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

#[allow(clippy::too_many_arguments)]
fn setup(
    app: &AppHandle,
    options: &Options,
    engine: Option<Engine>,
    home: PathBuf,
    listen: SocketAddr,
    signals: Signals,
    failures: UnboundedReceiver<ProviderFailure>,
    logs: LogBuffer,
) -> Result<(), String> {
    let engine = match engine {
        Some(engine) => engine,
        // Another instance was running at launch, but the handover did not exit this one:
        // it went away meanwhile, so this one serves after all.
        None => tauri::async_runtime::block_on(Engine::start(StartOptions::desktop(
            home.clone(),
            listen,
            logs,
        )))?,
    };
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
        opening: Mutex::new(Default::default()),
        popup_wanted: Mutex::new(None),
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
    } else if windows::automated() {
        // WebKitWebDriver attaches to the app's first webview: under WebDriver the panel
        // is made at start (hidden), or a session could never begin.
        windows::make_panel(app, false);
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

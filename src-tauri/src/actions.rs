//! What the shell does across the tray, the windows and the state: carries out the
//! watcher's actions and the tray menu's choices. Imports run one way only:
//! `app` → `actions`/`commands` → `state` → `tray`, and `actions` → `windows`; `tray` and
//! `windows` know nothing of the app's state (the tray gets its menu handler passed in).

use crate::state::Desktop;
use crate::windows;
use tap_desktop_core::notify;
use tap_desktop_core::popup::{self, PopupShown};
use tap_desktop_core::tray_state::TrayItem;
use tap_desktop_core::watcher::Action;
use tauri::{AppHandle, Manager, WebviewWindow};
use tauri_plugin_autostart::ManagerExt;
use tokio::time::Instant;

/// Shows and focuses the panel. Failures shown there count as seen.
pub fn open_panel(app: &AppHandle) {
    // Noted before the window is made: its page may report its first render at once.
    if app.get_webview_window(windows::PANEL).is_none() {
        let desktop = app.state::<Desktop>();
        desktop
            .opening
            .lock()
            .unwrap()
            .insert(windows::PANEL.into(), Instant::now().into_std());
    }
    windows::show_panel(app);
    let changed = app
        .state::<Desktop>()
        .watcher
        .lock()
        .unwrap()
        .failures_seen();
    if !changed.is_empty() {
        refresh_tray(app);
    }
}

/// Shows the pairing popup by the tray icon (or in its corner) and tells the watcher
/// whether it could: a popup that cannot be shown is replaced by notifications.
pub fn show_popup(app: &AppHandle, focus: bool) {
    let desktop = app.state::<Desktop>();
    // Held while the popup is placed, so this and `fit_popup` place it one after the other,
    // each with the page's latest height.
    let mut wanted = desktop.popup_wanted.lock().unwrap();
    if app.get_webview_window(windows::POPUP).is_none() {
        // A new window and a new page: it has asked for nothing yet.
        *wanted = None;
        desktop
            .opening
            .lock()
            .unwrap()
            .insert(windows::POPUP.into(), Instant::now().into_std());
    }
    let shown = windows::show_popup(app, focus, *wanted, tray_rect(app));
    drop(wanted);
    if let Err(e) = &shown {
        tracing::warn!(error = %e, "could not show the pairing popup; notifying instead");
    }
    let state = if shown.is_ok() {
        PopupShown::Yes
    } else {
        PopupShown::No
    };
    let actions = app
        .state::<Desktop>()
        .watcher
        .lock()
        .unwrap()
        .set_popup(state, Instant::now());
    apply(app, actions);
}

/// The popup's page reported its content's height: the window follows.
pub fn fit_popup(app: &AppHandle, window: &WebviewWindow, wanted: f64) -> tauri::Result<()> {
    let desktop = app.state::<Desktop>();
    let mut last = desktop.popup_wanted.lock().unwrap();
    *last = Some(wanted);
    windows::fit_popup(app, window, wanted, tray_rect(app))
}

/// Where the tray icon is, when the platform says (not on Linux's AppIndicator).
fn tray_rect(app: &AppHandle) -> Option<popup::Rect> {
    let handles = app.state::<Desktop>().tray.lock().unwrap().clone();
    handles.and_then(|t| t.rect())
}

/// Redraws the icon, tooltip and pending item from the watcher's counts.
pub fn refresh_tray(app: &AppHandle) {
    let desktop = app.state::<Desktop>();
    let summary = desktop.watcher.lock().unwrap().summary();
    let handles = desktop.tray.lock().unwrap().clone();
    if let Some(t) = handles {
        t.show(&summary, &desktop.address.to_string());
    }
}

/// Turns the login item on or off, and keeps the tray's check item in step (also when it
/// fails: it then shows what really is).
pub fn set_autostart(app: &AppHandle, on: bool) -> Result<(), String> {
    let launcher = app.autolaunch();
    let result = if on {
        launcher.enable()
    } else {
        launcher.disable()
    };
    let actual = launcher.is_enabled().unwrap_or(false);
    let handles = app.state::<Desktop>().tray.lock().unwrap().clone();
    if let Some(t) = handles {
        t.set_autostart_checked(actual);
    }
    tracing::info!(on = actual, "Start at login");
    result.map_err(|e| e.to_string())
}

/// A tray menu choice.
pub fn on_menu(app: &AppHandle, item: TrayItem) {
    match item {
        TrayItem::Open => open_panel(app),
        TrayItem::Pending => show_popup(app, true),
        TrayItem::Autostart => {
            let handles = app.state::<Desktop>().tray.lock().unwrap().clone();
            // The check item has already toggled itself: it holds what the user wants.
            if let Some(on) = handles.and_then(|t| t.autostart_checked()) {
                if let Err(e) = set_autostart(app, on) {
                    tracing::warn!(error = %e, "could not change Start at login");
                }
            }
        }
        TrayItem::Quit => {
            tracing::info!("Quit chosen in the tray menu");
            app.exit(0)
        }
    }
}

/// Carries out the watcher's actions. Tray and window changes are posted to the main
/// thread without waiting for it: the caller must never block on the main thread, which
/// may itself be waiting for the engine to stop (on Quit).
pub fn apply(app: &AppHandle, actions: Vec<Action>) {
    for action in actions {
        let on_main = |f: fn(&AppHandle)| {
            let handle = app.clone();
            if let Err(e) = app.run_on_main_thread(move || f(&handle)) {
                tracing::debug!(error = %e, "the event loop is gone; tray/window update dropped");
            }
        };
        match action {
            Action::UpdateTray => on_main(refresh_tray),
            Action::ShowPopup => on_main(|app| show_popup(app, false)),
            Action::HidePopup => on_main(windows::hide_popup),
            Action::Notify(note) => {
                let _ = notify::show(&app.state::<Desktop>().home, note);
            }
        }
    }
}

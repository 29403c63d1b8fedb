//! What the shell does across the tray, the windows and the state: carries out the
//! watcher's actions and the tray menu's choices. Imports run one way only: `app` →
//! `actions`/`commands` → `windows`/`tray`; `tray` and `windows` know nothing of the app's
//! state, `Desktop` (the tray gets its menu handler passed in).

use crate::{windows, Desktop};
use tap_desktop_core::notify;
use tap_desktop_core::popup::Rect;
use tap_desktop_core::tray_state::TrayItem;
use tap_desktop_core::watcher::{self, Action};
use tap_desktop_core::windows::{CLIENTS_ROUTE, PANEL, POPUP, SERVERS_ROUTE};
use tauri::{AppHandle, Manager, WebviewWindow};
use tauri_plugin_autostart::ManagerExt;

/// Shows and focuses the panel. Failures shown there count as seen.
pub fn open_panel(app: &AppHandle) {
    open_panel_at(app, None);
}

/// Shows and focuses the panel at `route` (`None`: where it is); see [`open_panel`].
pub fn open_panel_at(app: &AppHandle, route: Option<&'static str>) {
    let desktop = app.state::<Desktop>();
    // Noted before the window is made: its page may report its first render at once.
    if app.get_webview_window(PANEL.label).is_none() {
        desktop.windows.opening(PANEL.label);
    }
    windows::show_panel_at(app, route);
    if desktop.failures_seen() {
        refresh_tray(app);
    }
}

/// Shows the tray popup by the tray icon (or in its corner) and tells the watcher
/// whether it could: a popup that cannot be shown is replaced by notifications.
pub fn show_popup(app: &AppHandle, focus: bool) {
    show_popup_with(app, focus, false);
}

/// [`show_popup`]; `held`: with the held tool definitions' diffs (the tray's line for them).
fn show_popup_with(app: &AppHandle, focus: bool, held: bool) {
    let desktop = app.state::<Desktop>();
    let tray = tray_rect(&desktop);
    let shown = desktop.windows.show_popup(
        || app.get_webview_window(POPUP.label).is_none(),
        |wanted| windows::show_popup(app, focus, held, wanted, tray),
    );
    if let Err(e) = &shown {
        tracing::warn!(error = %e, "could not show the pairing popup; notifying instead");
    }
    apply(app, desktop.popup_shown(shown.is_ok()));
}

/// The popup's page reported its content's height: the window follows.
pub fn fit_popup(app: &AppHandle, window: &WebviewWindow, wanted: f64) -> tauri::Result<()> {
    let desktop = app.state::<Desktop>();
    let tray = tray_rect(&desktop);
    desktop.windows.fit_popup(wanted, |wanted| {
        windows::place_popup(app, window, wanted, tray)
    })
}

/// Where the tray icon is, when the platform says (not on Linux's AppIndicator).
fn tray_rect(desktop: &Desktop) -> Option<Rect> {
    desktop.tray().and_then(|t| t.rect())
}

/// Redraws the icon, tooltip, pending, servers and sign-in items from the watcher's counts.
pub fn refresh_tray(app: &AppHandle) {
    let desktop = app.state::<Desktop>();
    if let Some(t) = desktop.tray() {
        t.show(&desktop.summary(), &desktop.address.to_string());
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
    if let Some(t) = app.state::<Desktop>().tray() {
        t.set_autostart_checked(actual);
    }
    tracing::info!(on = actual, "Start at login");
    result.map_err(|e| e.to_string())
}

/// A tray menu choice.
pub fn on_menu(app: &AppHandle, item: TrayItem) {
    match item {
        TrayItem::Open => open_panel(app),
        TrayItem::Pending | TrayItem::Approvals => show_popup(app, true),
        TrayItem::Held => show_popup_with(app, true, true),
        TrayItem::Servers | TrayItem::SignIn => open_panel_at(app, Some(SERVERS_ROUTE)),
        TrayItem::Connect => open_panel_at(app, Some(CLIENTS_ROUTE)),
        TrayItem::Autostart => {
            let tray = app.state::<Desktop>().tray();
            // The check item has already toggled itself: it holds what the user wants.
            if let Some(on) = tray.and_then(|t| t.autostart_checked()) {
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
            Action::NotifyCall { id, note } => {
                let desktop = app.state::<Desktop>();
                if let Some(gateway) = desktop.gateway() {
                    let answer =
                        move |key: &str| watcher::answer_from_notification(&gateway, &id, key);
                    let actions = watcher::NOTIFICATION_ACTIONS;
                    let _ = notify::show_with_actions(&desktop.home, note, actions, answer);
                }
            }
        }
    }
}

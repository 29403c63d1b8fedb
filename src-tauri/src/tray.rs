//! The tray icon and its menu. On Linux (appindicator) clicks on the icon itself are not
//! delivered, so everything is in the menu, and the popup also opens by itself when a
//! pairing request arrives.

use crate::state::Desktop;
use crate::windows;
use tap_desktop_core::tray_state::{Summary, TrayState};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager};
use tauri_plugin_autostart::ManagerExt;

/// The tray and the menu items that change. (Cheap clones of Tauri handles: callers copy
/// them out of the mutex, so no lock is held while a call waits for the main thread.)
#[derive(Clone)]
pub struct TrayHandles {
    tray: TrayIcon,
    pending: MenuItem<tauri::Wry>,
    autostart: CheckMenuItem<tauri::Wry>,
}

fn icon(state: TrayState) -> Image<'static> {
    match state {
        TrayState::Idle => tauri::include_image!("../icons/tray-idle.png"),
        TrayState::Connected => tauri::include_image!("../icons/tray-connected.png"),
        TrayState::Attention => tauri::include_image!("../icons/tray-attention.png"),
    }
}

/// Builds the tray. Without a tray host it still succeeds (appindicator falls back to a
/// plain status icon); an error here is logged by the caller and the app runs on.
pub fn build(app: &AppHandle, summary: &Summary, address: &str) -> tauri::Result<TrayHandles> {
    let autostart_on = app.autolaunch().is_enabled().unwrap_or(false);
    let open = MenuItem::with_id(app, "open", "Open panel", true, None::<&str>)?;
    let (label, enabled) = summary.pending_item();
    let pending = MenuItem::with_id(app, "pending", label, enabled, None::<&str>)?;
    let autostart = CheckMenuItem::with_id(
        app,
        "autostart",
        "Start at login",
        true,
        autostart_on,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &open,
            &pending,
            &PredefinedMenuItem::separator(app)?,
            &autostart,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let tray = TrayIconBuilder::with_id("main")
        .icon(icon(summary.state()))
        .tooltip(summary.tooltip(address))
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => windows::show_panel(app),
            "pending" => windows::show_popup(app, true),
            "autostart" => {
                let handles = app.state::<Desktop>().tray.lock().unwrap().clone();
                let wanted = handles.and_then(|t| t.autostart.is_checked().ok());
                if let Some(on) = wanted {
                    if let Err(e) = set_autostart(app, on) {
                        tracing::warn!(error = %e, "could not change Start at login");
                    }
                }
            }
            "quit" => {
                tracing::info!("Quit chosen in the tray menu");
                app.exit(0)
            }
            _ => {}
        })
        .build(app)?;
    Ok(TrayHandles {
        tray,
        pending,
        autostart,
    })
}

/// Redraws the icon, tooltip and pending item.
pub fn update(app: &AppHandle) {
    let desktop = app.state::<Desktop>();
    let summary = desktop.watcher.lock().unwrap().summary();
    let address = desktop.address.to_string();
    let handles = desktop.tray.lock().unwrap().clone();
    if let Some(t) = handles {
        let (label, enabled) = summary.pending_item();
        let results = [
            t.tray.set_icon(Some(icon(summary.state()))),
            t.tray.set_tooltip(Some(summary.tooltip(&address))),
            t.pending.set_text(label),
            t.pending.set_enabled(enabled),
        ];
        for r in results {
            if let Err(e) = r {
                tracing::warn!(error = %e, "could not update the tray");
            }
        }
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
        let _ = t.autostart.set_checked(actual);
    }
    tracing::info!(on = actual, "Start at login");
    result.map_err(|e| e.to_string())
}

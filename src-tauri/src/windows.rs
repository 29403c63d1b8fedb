//! The two windows: the panel (`main`, from `tauri.conf.json`, hidden at start) and the
//! pairing popup (`popup`, made on first use: the panel's compact view,
//! `index.html?view=popup`). Closing either hides it; the app lives on in the tray.

use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

/// The panel window's label.
pub const PANEL: &str = "main";
/// The popup window's label.
pub const POPUP: &str = "popup";
const POPUP_SIZE: (f64, f64) = (400.0, 520.0);

/// Shows and focuses the panel window (`actions::open_panel` also marks failures seen).
pub fn show_panel(app: &AppHandle) {
    let Some(w) = app.get_webview_window(PANEL) else {
        tracing::warn!("the panel window is missing");
        return;
    };
    let shown = w
        .show()
        .and_then(|_| w.unminimize())
        .and_then(|_| w.set_focus());
    if let Err(e) = shown {
        tracing::warn!(error = %e, "could not show the panel");
    }
}

/// Shows the popup, creating it the first time. `focus`: the user asked for it (tray
/// menu); a popup that opens by itself for a new request does not steal the keyboard.
pub fn show_popup(app: &AppHandle, focus: bool) {
    let window = match app.get_webview_window(POPUP) {
        Some(w) => Ok(w),
        None => create_popup(app, focus),
    };
    let result = window.and_then(|w| {
        w.show()?;
        w.unminimize()?;
        if focus {
            w.set_focus()?;
        }
        Ok(())
    });
    if let Err(e) = result {
        tracing::warn!(error = %e, "could not show the pairing popup");
    }
}

/// Hides the popup if it exists.
pub fn hide_popup(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(POPUP) {
        if let Err(e) = w.hide() {
            tracing::warn!(error = %e, "could not hide the pairing popup");
        }
    }
}

fn create_popup(app: &AppHandle, focus: bool) -> tauri::Result<WebviewWindow> {
    let mut builder =
        WebviewWindowBuilder::new(app, POPUP, WebviewUrl::App("index.html?view=popup".into()))
            .title("Tap — pairing requests")
            .inner_size(POPUP_SIZE.0, POPUP_SIZE.1)
            .resizable(false)
            .always_on_top(true)
            .skip_taskbar(true)
            .focused(focus)
            .visible(false);
    // Near the top right corner, where tray icons usually are.
    if let Ok(Some(monitor)) = app.primary_monitor() {
        let scale = monitor.scale_factor();
        let size = monitor.size().to_logical::<f64>(scale);
        builder = builder.position((size.width - POPUP_SIZE.0 - 16.0).max(0.0), 40.0);
    }
    builder.build()
}

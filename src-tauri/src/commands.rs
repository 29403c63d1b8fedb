//! What the panel (through `ui/src/transport.ts`) may ask of the shell. Every command
//! answers the window that called it only; the control token crosses the IPC, never a
//! URL. Failures reach the panel as `IpcError` (`{code, message}`).

use crate::actions;
use crate::state::Desktop;
use crate::windows;
use tap_desktop_core::ipc::{Endpoint, IpcError, IpcErrorCode};
use tauri::{AppHandle, State, WebviewWindow};
use tauri_plugin_autostart::ManagerExt;

#[tauri::command]
pub fn control_endpoint(desktop: State<'_, Desktop>) -> Endpoint {
    Endpoint::new(desktop.address, &desktop.control_token)
}

#[tauri::command]
pub fn get_autostart(app: AppHandle) -> Result<bool, IpcError> {
    app.autolaunch()
        .is_enabled()
        .map_err(|e| IpcError::new(IpcErrorCode::AutostartFailed, e))
}

#[tauri::command]
pub fn set_autostart(app: AppHandle, on: bool) -> Result<(), IpcError> {
    actions::set_autostart(&app, on).map_err(|e| IpcError::new(IpcErrorCode::AutostartFailed, e))
}

#[tauri::command]
pub fn secret_storage_notice(desktop: State<'_, Desktop>) -> Option<String> {
    desktop.secret_notice.clone()
}

#[tauri::command]
pub fn open_panel(app: AppHandle) {
    actions::open_panel(&app);
}

/// The calling window goes away: destroyed, not hidden (see `windows`). Tauri carries the
/// destruction out on a later turn of the event loop, after this answer.
#[tauri::command]
pub fn hide_window(window: WebviewWindow) -> Result<(), IpcError> {
    window
        .destroy()
        .map_err(|e| IpcError::new(IpcErrorCode::WindowFailed, e))
}

/// The calling window's page has drawn its first frame: logged with the time since the
/// window was asked for (`scripts/desktop-footprint.sh` reads it).
#[tauri::command]
pub fn page_rendered(window: WebviewWindow, desktop: State<'_, Desktop>) {
    let asked = desktop.opening.lock().unwrap().remove(window.label());
    match asked {
        Some(at) => tracing::info!(
            window = window.label(),
            ms = at.elapsed().as_millis() as u64,
            "page rendered (ms since the window was asked for)"
        ),
        None => tracing::info!(window = window.label(), "page rendered"),
    }
}

/// The popup's page reports its content's height (CSS px); the popup window takes it,
/// within bounds. Other windows keep their size.
#[tauri::command]
pub fn fit_popup(app: AppHandle, window: WebviewWindow, height: f64) -> Result<(), IpcError> {
    if window.label() != windows::POPUP {
        return Ok(());
    }
    actions::fit_popup(&app, &window, height)
        .map_err(|e| IpcError::new(IpcErrorCode::WindowFailed, e))
}

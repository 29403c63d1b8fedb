//! What the panel (through `ui/src/transport.ts`) may ask of the shell. Every command
//! answers the window that called it only; the control token crosses the IPC, never a
//! URL.

use crate::actions;
use crate::state::Desktop;
use serde::Serialize;
use tauri::{AppHandle, State, WebviewWindow};
use tauri_plugin_autostart::ManagerExt;

/// Where the panel connects, and with what.
#[derive(Debug, Serialize)]
pub struct Endpoint {
    /// `ws://127.0.0.1:PORT/control`.
    pub url: String,
    /// The control token.
    pub token: String,
}

#[tauri::command]
pub fn control_endpoint(desktop: State<'_, Desktop>) -> Endpoint {
    Endpoint {
        url: format!("ws://{}/control", desktop.address),
        token: desktop.control_token.clone(),
    }
}

#[tauri::command]
pub fn get_autostart(app: AppHandle) -> Result<bool, String> {
    app.autolaunch().is_enabled().map_err(|e| e.to_string())
}

#[tauri::command]
pub fn set_autostart(app: AppHandle, on: bool) -> Result<(), String> {
    actions::set_autostart(&app, on)
}

#[tauri::command]
pub fn secret_storage_notice(desktop: State<'_, Desktop>) -> Option<String> {
    desktop.secret_notice.clone()
}

#[tauri::command]
pub fn open_panel(app: AppHandle) {
    actions::open_panel(&app);
}

#[tauri::command]
pub fn hide_window(window: WebviewWindow) -> Result<(), String> {
    window.hide().map_err(|e| e.to_string())
}

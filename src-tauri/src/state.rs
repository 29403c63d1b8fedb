//! What the Tauri side shares between the tray, the windows, the commands and the event
//! loop.

use crate::tray::TrayHandles;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tap_desktop_core::engine::Engine;
use tap_desktop_core::watcher::Watcher;

/// Managed by the Tauri app (`app.state::<Desktop>()`).
pub struct Desktop {
    /// `TAP_HOME`.
    pub home: PathBuf,
    /// Where the gateway listens.
    pub address: SocketAddr,
    /// The control token the panel authenticates with (handed over IPC, never in a URL).
    pub control_token: String,
    /// The panel's notice when the token is not in a keyring.
    pub secret_notice: Option<String>,
    /// The desktop's view of the gateway (shared with the task that follows the engine).
    pub watcher: Arc<Mutex<Watcher>>,
    /// The tray's icon and menu items, once built (absent when it could not be built).
    pub tray: Mutex<Option<TrayHandles>>,
    /// The engine, taken out when the app exits to stop it.
    pub engine: Mutex<Option<Engine>>,
    /// When each window being made was asked for, by label, until its page reports its
    /// first render (`commands::page_rendered`).
    pub opening: Mutex<HashMap<String, Instant>>,
    /// The height (CSS px) the current popup's page last asked for (`None` until it asks).
    /// Every placement of the popup reads it under this lock: a placement that read the
    /// window's own size instead could undo a fit whose resize GTK had not yet carried out.
    pub popup_wanted: Mutex<Option<f64>>,
}

//! The tray icon and its menu. On Linux (appindicator) clicks on the icon itself are not
//! delivered, so everything is in the menu, and the popup also opens by itself when a
//! pairing request arrives. What the menu's choices do is the caller's (`actions`).

use tap_desktop_core::popup;
use tap_desktop_core::tray_state::{Summary, TrayItem, TrayItem::*, TrayState};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::AppHandle;

/// The tray and the menu items that change. (Cheap clones of Tauri handles: callers copy
/// them out of the mutex, so no lock is held while a call waits for the main thread.)
#[derive(Clone)]
pub struct TrayHandles {
    tray: TrayIcon,
    pending: MenuItem<tauri::Wry>,
    approvals: MenuItem<tauri::Wry>,
    held: MenuItem<tauri::Wry>,
    servers: MenuItem<tauri::Wry>,
    sign_in: MenuItem<tauri::Wry>,
    autostart: CheckMenuItem<tauri::Wry>,
}

fn icon(state: TrayState) -> Image<'static> {
    match state {
        TrayState::Idle => tauri::include_image!("../icons/tray-idle.png"),
        TrayState::Connected => tauri::include_image!("../icons/tray-connected.png"),
        TrayState::Attention => tauri::include_image!("../icons/tray-attention.png"),
    }
}

/// Builds the tray; `on_menu` gets the menu's choices. Without a tray host it still
/// succeeds (appindicator falls back to a plain status icon); an error here is logged by
/// the caller and the app runs on.
pub fn build(
    app: &AppHandle,
    summary: &Summary,
    address: &str,
    autostart_on: bool,
    on_menu: fn(&AppHandle, TrayItem),
) -> tauri::Result<TrayHandles> {
    let item = |i: TrayItem| {
        let (label, enabled) = i.label(summary);
        MenuItem::with_id(app, i.id(), label, enabled, None::<&str>)
    };
    let (open, pending, quit) = (item(Open)?, item(Pending)?, item(Quit)?);
    let (approvals, held) = (item(Approvals)?, item(Held)?);
    let (servers, sign_in, connect) = (item(Servers)?, item(SignIn)?, item(Connect)?);
    let (id, (label, _)) = (Autostart.id(), Autostart.label(summary));
    let autostart = CheckMenuItem::with_id(app, id, label, true, autostart_on, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &open,
            &approvals,
            &pending,
            &held,
            &servers,
            &sign_in,
            &connect,
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
        .on_menu_event(move |app, event| {
            if let Some(item) = TrayItem::from_id(event.id().as_ref()) {
                on_menu(app, item);
            }
        })
        .build(app)?;
    Ok(TrayHandles {
        tray,
        pending,
        approvals,
        held,
        servers,
        sign_in,
        autostart,
    })
}

impl TrayHandles {
    /// Redraws the icon, tooltip, waiting-calls, pending, servers and sign-in items.
    pub fn show(&self, summary: &Summary, address: &str) {
        let (label, enabled) = summary.pending_item();
        let (calls, calls_enabled) = summary.approvals_item();
        let (held, held_enabled) = summary.held_item();
        let (servers, servers_enabled) = summary.servers_item();
        let (sign_in, sign_in_enabled) = summary.sign_in_item();
        let results = [
            self.tray.set_icon(Some(icon(summary.state()))),
            self.tray.set_tooltip(Some(summary.tooltip(address))),
            self.pending.set_text(label),
            self.pending.set_enabled(enabled),
            self.approvals.set_text(calls),
            self.approvals.set_enabled(calls_enabled),
            self.held.set_text(held),
            self.held.set_enabled(held_enabled),
            self.servers.set_text(servers),
            self.servers.set_enabled(servers_enabled),
            self.sign_in.set_text(sign_in),
            self.sign_in.set_enabled(sign_in_enabled),
        ];
        for r in results {
            if let Err(e) = r {
                tracing::warn!(error = %e, "could not update the tray");
            }
        }
    }

    /// Where the icon is on the screen (physical pixels), when the platform says: Windows
    /// and macOS do; Linux's AppIndicator does not.
    pub fn rect(&self) -> Option<popup::Rect> {
        let r = self.tray.rect().ok().flatten()?;
        // tray-icon reports physical pixels.
        let position = r.position.to_physical::<f64>(1.0);
        let size = r.size.to_physical::<f64>(1.0);
        let (x, y, width, height) = (position.x, position.y, size.width, size.height);
        popup::Rect {
            x,
            y,
            width,
            height,
        }
        .non_empty()
    }

    /// Whether "Start at login" is checked (`None` when the menu cannot say).
    pub fn autostart_checked(&self) -> Option<bool> {
        self.autostart.is_checked().ok()
    }

    /// Checks or unchecks "Start at login".
    pub fn set_autostart_checked(&self, on: bool) {
        let _ = self.autostart.set_checked(on);
    }
}

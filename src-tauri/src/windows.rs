//! The two windows: the panel (`main`) and the pairing popup (`popup`, the panel's compact
//! view, `index.html?view=popup`). Both are made when shown and destroyed when closed or
//! hidden: a webview costs a WebKit web process and a GL context (over 300 MiB in all),
//! which a tray app sitting in the session all day must not keep for a window nobody sees.
//! The app lives on in the tray with no window (`app`'s `ExitRequested`). Where the popup
//! goes and how tall it is are `tap_desktop_core::popup`'s rules; this file measures the
//! monitor and carries them out.

use tap_desktop_core::popup;
use tauri::{
    AppHandle, LogicalSize, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindow,
    WebviewWindowBuilder,
};

/// The panel window's label.
pub const PANEL: &str = "main";
/// The popup window's label.
pub const POPUP: &str = "popup";

/// Shows and focuses the panel window, making it if there is none (`actions::open_panel`
/// also marks failures seen).
pub fn show_panel(app: &AppHandle) {
    let w = match app.get_webview_window(PANEL) {
        Some(w) => w,
        None => match make_panel(app, true) {
            Some(w) => w,
            None => return,
        },
    };
    let shown = w
        .show()
        .and_then(|_| w.unminimize())
        .and_then(|_| w.set_focus());
    if let Err(e) = shown {
        tracing::warn!(error = %e, "could not show the panel");
    }
}

/// Makes the panel window (`visible`: shown at once, else hidden until `show_panel`).
pub fn make_panel<R: Runtime>(app: &AppHandle<R>, visible: bool) -> Option<WebviewWindow<R>> {
    let made = WebviewWindowBuilder::new(app, PANEL, WebviewUrl::App("index.html".into()))
        .title("Tap Gateway")
        .inner_size(1100.0, 760.0)
        .min_inner_size(640.0, 420.0)
        .visible(visible)
        .focused(visible)
        .build();
    match made {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!(error = %e, "could not make the panel window");
            None
        }
    }
}

/// Whether a WebDriver session drives the app (tauri-driver sets this for the app it
/// launches; tauri-runtime-wry reads the same variable to allow automation).
pub fn automated() -> bool {
    std::env::var("TAURI_WEBVIEW_AUTOMATION").as_deref() == Ok("true")
}

/// Shows the popup, making it if there is none, by the tray icon (`tray`, when its position
/// is known) or in the bottom right corner (`popup::popup_position`), `wanted` tall: the
/// height its page last asked for (`None`: the first height). Never the window's own size,
/// which lags behind a resize GTK has not carried out yet. `focus`: the user asked for it
/// (tray menu); a popup that opens by itself for a new request does not steal the keyboard.
/// An error means it could not be shown (the caller then notifies instead).
pub fn show_popup(
    app: &AppHandle,
    focus: bool,
    wanted: Option<f64>,
    tray: Option<popup::Rect>,
) -> tauri::Result<()> {
    let w = match app.get_webview_window(POPUP) {
        Some(w) => w,
        None => create_popup(app, focus)?,
    };
    let height = wanted.unwrap_or(popup::POPUP_FIRST_HEIGHT);
    place_popup(app, &w, height, tray)?;
    w.show()?;
    w.unminimize()?;
    if focus {
        w.set_focus()?;
    }
    Ok(())
}

/// Hides the popup if it exists: destroys it (the next request makes a new one).
pub fn hide_popup(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(POPUP) {
        if let Err(e) = w.destroy() {
            tracing::warn!(error = %e, "could not close the pairing popup");
        }
    }
}

/// The popup's page says how tall its content is (`wanted`, CSS px): the window takes that
/// height within the bounds and stays in its corner (or by the tray icon).
pub fn fit_popup(
    app: &AppHandle,
    w: &WebviewWindow,
    wanted: f64,
    tray: Option<popup::Rect>,
) -> tauri::Result<()> {
    place_popup(app, w, wanted, tray)
}

/// Sizes the popup to `height` (logical, within `popup::popup_height`'s bounds for the
/// screen) and moves it where the placement rule says.
fn place_popup(
    app: &AppHandle,
    w: &WebviewWindow,
    height: f64,
    tray: Option<popup::Rect>,
) -> tauri::Result<()> {
    let (found, screen, scale) = screen_for(app, tray);
    let height = popup::popup_height(height, screen.height / scale);
    // GTK ignores resizing a non-resizable window, so the popup is "resizable" with its
    // minimum and maximum pinned to the size chosen here (the user cannot drag it).
    let size = LogicalSize::new(popup::POPUP_WIDTH, height);
    let least = LogicalSize::new(popup::POPUP_WIDTH, popup::POPUP_MIN_HEIGHT);
    w.set_min_size(Some(least))?;
    w.set_max_size(Some(size))?;
    w.set_size(size)?;
    w.set_min_size(Some(size))?;
    if found {
        let size = (popup::POPUP_WIDTH * scale, height * scale);
        let (x, y) = popup::popup_position(tray, screen, size, scale);
        w.set_position(PhysicalPosition::new(x, y))?;
    }
    Ok(())
}

/// The work area (physical) and scale of the monitor under the tray icon, else the primary
/// one; `false` when no monitor is known (the window manager then places the popup).
fn screen_for(app: &AppHandle, tray: Option<popup::Rect>) -> (bool, popup::Rect, f64) {
    let monitor = match tray {
        Some(r) => app.monitor_from_point(r.x + r.width / 2.0, r.y + r.height / 2.0),
        None => app.primary_monitor(),
    };
    match monitor
        .ok()
        .flatten()
        .or_else(|| app.primary_monitor().ok().flatten())
    {
        Some(m) => {
            let area = m.work_area();
            let screen = popup::Rect {
                x: area.position.x as f64,
                y: area.position.y as f64,
                width: area.size.width as f64,
                height: area.size.height as f64,
            };
            (true, screen, m.scale_factor())
        }
        None => {
            let fallback = popup::Rect {
                x: 0.0,
                y: 0.0,
                width: f64::MAX,
                height: f64::MAX,
            };
            (false, fallback, 1.0)
        }
    }
}

fn create_popup(app: &AppHandle, focus: bool) -> tauri::Result<WebviewWindow> {
    WebviewWindowBuilder::new(app, POPUP, WebviewUrl::App("index.html?view=popup".into()))
        .title("Tap — pairing requests")
        .inner_size(popup::POPUP_WIDTH, popup::POPUP_FIRST_HEIGHT)
        .resizable(true)
        .always_on_top(true)
        .skip_taskbar(true)
        .focused(focus)
        .visible(false)
        .build()
}

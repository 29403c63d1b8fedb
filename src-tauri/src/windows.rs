//! The two windows (`tap_desktop_core::windows`): the panel and the pairing popup. Both are
//! made when shown and destroyed when closed or hidden: a webview costs a WebKit web process
//! and a GL context (over 300 MiB in all), which a tray app sitting in the session all day
//! must not keep for a window nobody sees. The app lives on in the tray with no window
//! (`app`'s `ExitRequested`). Where the popup goes and how tall it is are
//! `tap_desktop_core::popup`'s rules; this file measures the monitor and carries them out.

use tap_desktop_core::popup::{self, Monitor, Rect};
use tap_desktop_core::windows::{WindowSpec, PANEL, POPUP, POPUP_HELD_PAGE, SHOW_HELD_SCRIPT};
use tauri::{
    AppHandle, LogicalSize, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindow,
    WebviewWindowBuilder,
};

/// `spec`'s window showing `page` (its own, or the panel at a route).
fn builder<'a, R: Runtime>(
    app: &'a AppHandle<R>,
    spec: &WindowSpec,
    page: &str,
) -> WebviewWindowBuilder<'a, R, AppHandle<R>> {
    let made = WebviewWindowBuilder::new(app, spec.label, WebviewUrl::App(page.into()))
        .title(spec.title)
        .inner_size(spec.size.0, spec.size.1);
    match spec.min_size {
        Some((width, height)) => made.min_inner_size(width, height),
        None => made,
    }
}

/// Shows and focuses the panel window, making it if there is none, at `route` (a fragment
/// such as `#/servers`; `None`: where it is, or its first page). An open panel goes there
/// without reloading: its pages follow the fragment. (`actions::open_panel_at` also marks
/// failures seen.)
pub fn show_panel_at(app: &AppHandle, route: Option<&'static str>) {
    let open = app.get_webview_window(PANEL.label);
    if let (Some(w), Some(route)) = (&open, route) {
        // `route` is one of the app's constants, never text from elsewhere.
        if let Err(e) = w.eval(format!("location.hash = '{route}'")) {
            tracing::warn!(error = %e, route, "could not move the panel to a page");
        }
    }
    let Some(w) = open.or_else(|| make_panel_at(app, true, route)) else {
        return;
    };
    if let Err(e) = w
        .show()
        .and_then(|_| w.unminimize())
        .and_then(|_| w.set_focus())
    {
        tracing::warn!(error = %e, "could not show the panel");
    }
}

/// Makes the panel window (`visible`: shown at once, else hidden until `show_panel_at`).
pub fn make_panel<R: Runtime>(app: &AppHandle<R>, visible: bool) -> Option<WebviewWindow<R>> {
    make_panel_at(app, visible, None)
}

/// Makes the panel window at `route` (see [`show_panel_at`]).
fn make_panel_at<R: Runtime>(
    app: &AppHandle<R>,
    visible: bool,
    route: Option<&str>,
) -> Option<WebviewWindow<R>> {
    let page = format!("{}{}", PANEL.page, route.unwrap_or(""));
    let made = builder(app, &PANEL, &page)
        .visible(visible)
        .focused(visible);
    made.build()
        .inspect_err(|e| tracing::warn!(error = %e, "could not make the panel window"))
        .ok()
}

/// Shows the popup, making it if there is none, `wanted` tall: the height its page last
/// asked for (`None`: the first height), never the window's own size, which lags behind a
/// resize GTK has not carried out yet. `tray`: the icon's place, when known. `focus`: the
/// user asked for it (tray menu); a popup that opens by itself for a new request does not
/// steal the keyboard. `held`: the tray's held-tools line asked for it, so its page shows
/// the held definitions too (a new window's page from the start, an open one's from now).
/// An error means it could not be shown (the caller then notifies).
pub fn show_popup(
    app: &AppHandle,
    focus: bool,
    held: bool,
    wanted: Option<f64>,
    tray: Option<Rect>,
) -> tauri::Result<()> {
    let page = if held { POPUP_HELD_PAGE } else { POPUP.page };
    let w = match app.get_webview_window(POPUP.label) {
        Some(w) => {
            if held {
                w.eval(SHOW_HELD_SCRIPT)?;
            }
            w
        }
        None => builder(app, &POPUP, page)
            .resizable(true)
            .always_on_top(true)
            .skip_taskbar(true)
            .focused(focus)
            .visible(false)
            .build()?,
    };
    place_popup(app, &w, wanted, tray)?;
    w.show()?;
    w.unminimize()?;
    if focus {
        w.set_focus()?;
    }
    Ok(())
}

/// Hides the popup if it exists: destroys it (the next request makes a new one).
pub fn hide_popup(app: &AppHandle) {
    if let Some(w) = app.get_webview_window(POPUP.label) {
        if let Err(e) = w.destroy() {
            tracing::warn!(error = %e, "could not close the pairing popup");
        }
    }
}

/// Sizes and places the popup as `popup::place_popup` says, on the monitor under the tray
/// icon, else the primary one.
pub fn place_popup(
    app: &AppHandle,
    w: &WebviewWindow,
    wanted: Option<f64>,
    tray: Option<Rect>,
) -> tauri::Result<()> {
    let under_tray = tray.and_then(|r| {
        let (x, y) = r.centre();
        app.monitor_from_point(x, y).ok().flatten()
    });
    let monitor = under_tray.or_else(|| app.primary_monitor().ok().flatten());
    let monitor = monitor.map(|m| {
        let (at, size) = (m.work_area().position, m.work_area().size);
        let (x, y) = (at.x as f64, at.y as f64);
        let (width, height) = (size.width as f64, size.height as f64);
        let work_area = Rect {
            x,
            y,
            width,
            height,
        };
        Monitor {
            work_area,
            scale: m.scale_factor(),
        }
    });
    let placement = popup::place_popup(wanted, tray, monitor);
    let size = LogicalSize::new(placement.size.0, placement.size.1);
    let least = LogicalSize::new(popup::POPUP_WIDTH, popup::POPUP_MIN_HEIGHT);
    // Pinned: see `PopupPlacement::size`.
    w.set_min_size(Some(least))?;
    w.set_max_size(Some(size))?;
    w.set_size(size)?;
    w.set_min_size(Some(size))?;
    if let Some((x, y)) = placement.position {
        w.set_position(PhysicalPosition::new(x, y))?;
    }
    Ok(())
}

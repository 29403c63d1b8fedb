//! The app's two windows, as the shell makes them: the panel (`main`) and the tray popup
//! (`popup`, the panel's compact view: tool calls waiting, held tool definitions, pairing
//! requests). Both are made when shown and destroyed when closed
//! or hidden (see `src-tauri/src/windows.rs`); where the popup goes and how tall it is are
//! [`crate::popup`]'s rules.

use crate::ipc::PopupContent;
use crate::popup;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a window is made with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSpec {
    /// Its Tauri label (the IPC commands answer the window that called by it).
    pub label: &'static str,
    /// Its page, in the app's assets.
    pub page: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its first size, logical pixels (width, height).
    pub size: (f64, f64),
    /// Its least size, logical pixels (the popup's is pinned when it is placed).
    pub min_size: Option<(f64, f64)>,
}

/// The panel window.
pub const PANEL: WindowSpec = WindowSpec {
    label: "main",
    page: "index.html",
    title: "Tap Gateway",
    size: (1100.0, 760.0),
    min_size: Some((640.0, 420.0)),
};

/// The panel's Servers page, where the tray's failing-servers item opens it (the panel's
/// routes are URL fragments, `ui/src/App.tsx`).
pub const SERVERS_ROUTE: &str = "#/servers";

/// The panel's Clients page (the tray's "Connect a client…").
pub const CLIENTS_ROUTE: &str = "#/clients";

/// The tray popup: the panel's page in its compact view. Always on top, not in the
/// taskbar, placed by [`popup::place_popup`]. Made with this title; its page then names
/// what it shows ([`popup_title`]).
pub const POPUP: WindowSpec = WindowSpec {
    label: "popup",
    page: "index.html?view=popup",
    title: "Tap",
    size: (popup::POPUP_WIDTH, popup::POPUP_FIRST_HEIGHT),
    min_size: None,
};

/// The popup's page when the tray's held-tools line opens it: the held definitions' diffs
/// are shown besides whatever else waits (`ui/src/pages/Popup.tsx`).
pub const POPUP_HELD_PAGE: &str = "index.html?view=popup#held";

/// Script that makes an open popup's page show the held definitions (the event
/// `ui/src/pages/Popup.tsx` listens for), when the tray's line is chosen again.
pub const SHOW_HELD_SCRIPT: &str = "window.dispatchEvent(new Event('tap-show-held'))";

/// The popup window's title when it shows `content` first (the window manager's task
/// switchers and the desktop e2e tests find it by it).
pub fn popup_title(content: PopupContent) -> &'static str {
    match content {
        PopupContent::Calls => "Tap — tool calls waiting",
        PopupContent::Held => "Tap — held tool definitions",
        PopupContent::Pairing => "Tap — pairing requests",
    }
}

/// Environment variable tauri-driver sets for the app it launches (tauri-runtime-wry reads
/// the same one to allow automation).
pub const AUTOMATION_ENV: &str = "TAURI_WEBVIEW_AUTOMATION";

/// Whether a WebDriver session drives the app (`env` reads the environment). WebKitWebDriver
/// attaches to the app's first webview, so the panel is then made at start (hidden), or a
/// session could never begin.
pub fn automated(env: impl Fn(&str) -> Option<String>) -> bool {
    env(AUTOMATION_ENV).as_deref() == Some("true")
}

/// What the shell keeps about its windows between calls.
#[derive(Debug, Default)]
pub struct WindowState {
    /// When each window being made was asked for, by label, until its page reports its
    /// first render.
    opening: Mutex<HashMap<String, Instant>>,
    /// The height (CSS px) the current popup's page last asked for (`None` until it asks).
    /// Every placement of the popup reads it under this lock: a placement that read the
    /// window's own size instead could undo a fit whose resize GTK had not yet carried out.
    popup_wanted: Mutex<Option<f64>>,
}

impl WindowState {
    /// The window `label` is being made: its opening time counts from now.
    pub fn opening(&self, label: &str) {
        let mut opening = self.opening.lock().unwrap();
        opening.insert(label.to_string(), Instant::now());
    }

    /// The window `label`'s page drew its first frame: logs `page rendered` with the time
    /// since the window was asked for (`scripts/desktop-footprint.sh` reads it), and
    /// returns that time.
    pub fn page_rendered(&self, label: &str) -> Option<Duration> {
        let asked = self.opening.lock().unwrap().remove(label);
        let took = asked.map(|at| at.elapsed());
        match took {
            Some(took) => tracing::info!(
                window = label,
                ms = took.as_millis() as u64,
                "page rendered (ms since the window was asked for)"
            ),
            None => tracing::info!(window = label, "page rendered"),
        }
        took
    }

    /// Places the popup with the height its page last asked for: `place` gets it (`None`
    /// when the page has not asked yet) and runs under the lock, so placements happen one
    /// after the other, each with the latest height. `is_new`, asked under the lock: no
    /// popup window exists, so `place` makes a new one, with a new page that has asked for
    /// nothing yet (and whose opening time counts from now).
    pub fn show_popup<R>(
        &self,
        is_new: impl FnOnce() -> bool,
        place: impl FnOnce(Option<f64>) -> R,
    ) -> R {
        let mut wanted = self.popup_wanted.lock().unwrap();
        if is_new() {
            *wanted = None;
            self.opening(POPUP.label);
        }
        place(*wanted)
    }

    /// The popup's page asks for `height`: kept for later placements, and `place` runs
    /// with it under the lock.
    pub fn fit_popup<R>(&self, height: f64, place: impl FnOnce(Option<f64>) -> R) -> R {
        let mut wanted = self.popup_wanted.lock().unwrap();
        *wanted = Some(height);
        place(*wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_popup_starts_from_the_first_height_and_later_placements_keep_the_fit() {
        let state = WindowState::default();
        assert_eq!(state.show_popup(|| true, |h| h), None);
        assert_eq!(state.fit_popup(250.0, |h| h), Some(250.0));
        // Shown again while it exists: the page's height, not the first one.
        assert_eq!(state.show_popup(|| false, |h| h), Some(250.0));
        // A new window has a new page, which has asked for nothing yet.
        assert_eq!(state.show_popup(|| true, |h| h), None);
    }

    #[test]
    fn a_page_reports_its_first_render_once_per_opening() {
        let state = WindowState::default();
        assert_eq!(state.page_rendered(PANEL.label), None);
        state.opening(PANEL.label);
        assert!(state.page_rendered(PANEL.label).is_some());
        assert_eq!(state.page_rendered(PANEL.label), None);
        // The popup's opening is noted when it is made.
        state.show_popup(|| true, |_| ());
        assert!(state.page_rendered(POPUP.label).is_some());
        assert_eq!(state.page_rendered(PANEL.label), None);
    }

    #[test]
    fn the_windows_have_their_own_labels_and_pages() {
        assert_ne!(PANEL.label, POPUP.label);
        assert_eq!(PANEL.label, "main");
        assert!(POPUP.page.starts_with(PANEL.page) && POPUP.page.ends_with("?view=popup"));
        let (w, h) = PANEL.size;
        let (min_w, min_h) = PANEL.min_size.unwrap();
        assert!(min_w <= w && min_h <= h);
        assert_eq!(POPUP.size.0, popup::POPUP_WIDTH);
    }

    #[test]
    fn the_popup_is_named_for_what_it_shows() {
        let all = [
            PopupContent::Calls,
            PopupContent::Held,
            PopupContent::Pairing,
        ];
        let titles: std::collections::BTreeSet<_> = all.map(popup_title).into();
        assert_eq!(titles.len(), all.len(), "one title each");
        assert!(titles.iter().all(|t| t.starts_with(POPUP.title)));
        assert_eq!(popup_title(PopupContent::Calls), "Tap — tool calls waiting");
        assert!(POPUP_HELD_PAGE.starts_with(POPUP.page));
    }

    #[test]
    fn only_tauri_driver_makes_it_automated() {
        assert!(!automated(|_| None));
        assert!(!automated(|_| Some("1".into())));
        assert!(automated(|k| (k == AUTOMATION_ENV).then(|| "true".into())));
    }
}

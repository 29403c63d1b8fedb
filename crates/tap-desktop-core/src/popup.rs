//! The pairing popup's rules: when a desktop notification is sent besides it, where it
//! goes on the screen, and how tall it is ([`place_popup`]). Plain functions over numbers,
//! so every rule is unit-tested; `src-tauri/src/windows.rs` measures the monitor and the
//! tray icon and carries the answers out.
//!
//! **When the popup opens by itself it is the notification.** A notification on top of it
//! would only cover it (notification daemons draw at the top right, where the popup used to
//! be, and hid the code for ~10 s). So a pairing request notifies only when the popup
//! cannot be shown (the window could not be created or shown), or when the request is still
//! pending [`NOTIFY_AFTER`] after it arrived (the user was away; a notification may also
//! reach them on a lock screen or phone, and never carries the code).

use std::time::Duration;

/// How long a pairing request may wait in a shown popup before a desktop notification
/// reminds the user of it (once per request). Shorter than the code's 5-minute life, so the
/// reminder comes while the code still works.
pub const NOTIFY_AFTER: Duration = Duration::from_secs(60);

/// Environment variable that shortens [`NOTIFY_AFTER`] (milliseconds), for the desktop
/// end-to-end tests: they check the reminder arrives without waiting a minute, and `0`
/// restores "notify at once" to test the notification paths themselves.
pub const NOTIFY_AFTER_ENV: &str = "TAP_DESKTOP_NOTIFY_AFTER_MS";

/// [`NOTIFY_AFTER`], or what [`NOTIFY_AFTER_ENV`] says (`env` reads the environment).
pub fn notify_after(env: impl Fn(&str) -> Option<String>) -> Duration {
    env(NOTIFY_AFTER_ENV)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(NOTIFY_AFTER)
}

/// The popup's width, in logical pixels (CSS px).
pub const POPUP_WIDTH: f64 = 400.0;
/// The popup's least height: the header, one request and some room ("No pending requests").
pub const POPUP_MIN_HEIGHT: f64 = 200.0;
/// The popup's greatest height: two requests and "Deny all"; more requests scroll inside
/// its list (the header and "Deny all" stay put).
pub const POPUP_MAX_HEIGHT: f64 = 600.0;
/// The height the popup opens with, before its page has said how tall it wants to be.
pub const POPUP_FIRST_HEIGHT: f64 = 320.0;
/// Space between the popup and the screen's edge or the tray icon, in logical pixels.
pub const SCREEN_MARGIN: f64 = 12.0;

/// Whether the popup can be shown at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupShown {
    /// It opens by itself for each new request: it is the notification.
    Yes,
    /// It could not be shown (no window, no display): notifications do its job.
    No,
}

/// Whether a pairing request gets a desktop notification now. `notified`: it already had
/// one (each request notifies at most once); `pending_for`: how long it has waited;
/// `after`: [`NOTIFY_AFTER`] (see [`notify_after`]).
pub fn should_notify(
    popup: PopupShown,
    pending_for: Duration,
    notified: bool,
    after: Duration,
) -> bool {
    !notified && (popup == PopupShown::No || pending_for >= after)
}

/// A rectangle on the screen, in physical pixels (what the OS reports for monitors and the
/// tray icon).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// Its centre point.
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }
    /// Itself when it has an area: a tray icon whose place is unknown reports 0×0.
    pub fn non_empty(self) -> Option<Self> {
        (self.width > 0.0 && self.height > 0.0).then_some(self)
    }
    fn right(&self) -> f64 {
        self.x + self.width
    }
    fn bottom(&self) -> f64 {
        self.y + self.height
    }
}

/// The popup's height for a page that wants `wanted` logical pixels: within
/// [`POPUP_MIN_HEIGHT`]..=[`POPUP_MAX_HEIGHT`], and never taller than the screen's work
/// area (`screen_height`, logical) minus the margins.
pub fn popup_height(wanted: f64, screen_height: f64) -> f64 {
    let wanted = if wanted.is_finite() {
        wanted
    } else {
        POPUP_FIRST_HEIGHT
    };
    let fits = (screen_height - 2.0 * SCREEN_MARGIN).max(POPUP_MIN_HEIGHT);
    wanted
        .clamp(POPUP_MIN_HEIGHT, POPUP_MAX_HEIGHT.min(fits))
        .ceil()
}

/// Where the popup's top left corner goes (physical pixels), for a popup of `size` (width,
/// height, physical) on a screen whose work area is `screen`:
///
/// - **by the tray icon**, when its position is known (`tray`: on Windows and macOS after
///   the first tray event; Linux's AppIndicator reports none): centred on the icon, below
///   it when the icon is in the screen's top half, above it otherwise (as
///   `tauri-plugin-positioner`'s `TrayCenter` / `TrayBottomCenter` do), kept on the screen;
/// - **else in the bottom right corner**: notification daemons draw at the top right by
///   default (dunst, GNOME's and xfce's daemons, macOS), so the popup does not go there.
pub fn popup_position(
    tray: Option<Rect>,
    screen: Rect,
    size: (f64, f64),
    scale: f64,
) -> (f64, f64) {
    let margin = SCREEN_MARGIN * scale;
    let (width, height) = size;
    let (x, y) = match tray {
        Some(icon) => {
            let x = icon.x + icon.width / 2.0 - width / 2.0;
            let in_top_half = icon.y + icon.height / 2.0 < screen.y + screen.height / 2.0;
            let y = if in_top_half {
                icon.bottom() + margin
            } else {
                icon.y - height - margin
            };
            (x, y)
        }
        None => (
            screen.right() - width - margin,
            screen.bottom() - height - margin,
        ),
    };
    // On the screen whatever the icon's position; the top left wins on a tiny screen.
    let x = x
        .min(screen.right() - width - margin)
        .max(screen.x + margin);
    let y = y
        .min(screen.bottom() - height - margin)
        .max(screen.y + margin);
    (x.round(), y.round())
}

/// A monitor as the shell measures it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Monitor {
    /// Its work area (without panels and docks), physical pixels.
    pub work_area: Rect,
    /// Physical pixels per logical pixel.
    pub scale: f64,
}

/// The popup window's size and place, as [`place_popup`] decides them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PopupPlacement {
    /// Width and height, logical pixels. GTK ignores resizing a non-resizable window, so
    /// the popup is "resizable" with its minimum and maximum pinned to this size (the user
    /// cannot drag it).
    pub size: (f64, f64),
    /// Where its top left corner goes, physical pixels; `None` when no monitor is known
    /// (the window manager then places it).
    pub position: Option<(f64, f64)>,
}

/// Sizes and places the popup: `wanted` tall (the height its page last asked for; `None`:
/// [`POPUP_FIRST_HEIGHT`]) within [`popup_height`]'s bounds for `monitor`, and where
/// [`popup_position`] says, by the tray icon (`tray`, when known) or in the corner.
/// `monitor`: the one under the tray icon, else the primary one.
pub fn place_popup(
    wanted: Option<f64>,
    tray: Option<Rect>,
    monitor: Option<Monitor>,
) -> PopupPlacement {
    let wanted = wanted.unwrap_or(POPUP_FIRST_HEIGHT);
    let Some(Monitor { work_area, scale }) = monitor else {
        return PopupPlacement {
            size: (POPUP_WIDTH, popup_height(wanted, f64::MAX)),
            position: None,
        };
    };
    let height = popup_height(wanted, work_area.height / scale);
    let physical = (POPUP_WIDTH * scale, height * scale);
    PopupPlacement {
        size: (POPUP_WIDTH, height),
        position: Some(popup_position(tray, work_area, physical, scale)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect {
        x: 0.0,
        y: 0.0,
        width: 1280.0,
        height: 800.0,
    };

    #[test]
    fn a_shown_popup_is_the_notification_until_the_request_has_waited_a_while() {
        let soon = Duration::from_secs(1);
        let after = NOTIFY_AFTER;
        assert!(!should_notify(PopupShown::Yes, soon, false, after));
        assert!(!should_notify(PopupShown::Yes, after - soon, false, after));
        assert!(should_notify(PopupShown::Yes, after, false, after));
        // Once per request.
        assert!(!should_notify(PopupShown::Yes, after * 2, true, after));
    }

    #[test]
    fn without_a_popup_a_request_notifies_at_once_and_once() {
        let after = NOTIFY_AFTER;
        assert!(should_notify(PopupShown::No, Duration::ZERO, false, after));
        assert!(!should_notify(PopupShown::No, after, true, after));
    }

    #[test]
    fn the_tests_can_shorten_the_delay() {
        assert_eq!(notify_after(|_| None), NOTIFY_AFTER);
        let env = |k: &str| (k == NOTIFY_AFTER_ENV).then(|| "2500".to_string());
        assert_eq!(notify_after(env), Duration::from_millis(2500));
        assert_eq!(notify_after(|_| Some("soon".into())), NOTIFY_AFTER);
        // 0: a shown popup no longer holds the notification back.
        let zero = notify_after(|_| Some("0".into()));
        assert!(should_notify(PopupShown::Yes, Duration::ZERO, false, zero));
    }

    #[test]
    fn the_reminder_comes_while_the_code_still_works() {
        assert!(NOTIFY_AFTER < tap_protocol::limits::PAIRING_CODE_TTL);
    }

    #[test]
    fn the_height_follows_the_page_within_bounds_and_the_screen() {
        assert_eq!(popup_height(310.4, 800.0), 311.0);
        assert_eq!(popup_height(50.0, 800.0), POPUP_MIN_HEIGHT);
        assert_eq!(popup_height(5000.0, 800.0), POPUP_MAX_HEIGHT);
        assert_eq!(popup_height(5000.0, 480.0), 480.0 - 2.0 * SCREEN_MARGIN);
        assert_eq!(popup_height(f64::NAN, 800.0), POPUP_FIRST_HEIGHT);
    }

    #[test]
    fn with_no_tray_position_it_goes_bottom_right_away_from_notifications() {
        let (x, y) = popup_position(None, SCREEN, (400.0, 300.0), 1.0);
        assert_eq!((x, y), (1280.0 - 400.0 - 12.0, 800.0 - 300.0 - 12.0));
        // Notification daemons draw at the top right: the popup is in the bottom half.
        assert!(y > SCREEN.height / 2.0);
        // A work area that excludes a bottom panel moves it up; the scale scales the margin.
        let work = Rect {
            height: 768.0,
            ..SCREEN
        };
        assert_eq!(
            popup_position(None, work, (800.0, 600.0), 2.0),
            (1280.0 - 800.0 - 24.0, 768.0 - 600.0 - 24.0)
        );
    }

    #[test]
    fn a_known_tray_icon_at_the_bottom_gets_the_popup_above_it_centred() {
        let icon = Rect {
            x: 1000.0,
            y: 770.0,
            width: 24.0,
            height: 24.0,
        };
        let (x, y) = popup_position(Some(icon), SCREEN, (400.0, 300.0), 1.0);
        assert_eq!((x, y), (1012.0 - 200.0, 770.0 - 300.0 - 12.0));
    }

    #[test]
    fn a_known_tray_icon_at_the_top_gets_the_popup_below_it_kept_on_screen() {
        let icon = Rect {
            x: 1250.0,
            y: 0.0,
            width: 24.0,
            height: 24.0,
        };
        let (x, y) = popup_position(Some(icon), SCREEN, (400.0, 300.0), 1.0);
        // Centred on the icon would leave the screen: pushed back in, by the margin.
        assert_eq!((x, y), (1280.0 - 400.0 - 12.0, 24.0 + 12.0));
    }

    #[test]
    fn on_a_second_monitor_the_popup_stays_on_that_monitor() {
        let right = Rect {
            x: 1280.0,
            y: 0.0,
            width: 1920.0,
            height: 1080.0,
        };
        let (x, y) = popup_position(None, right, (400.0, 300.0), 1.0);
        assert_eq!((x, y), (1280.0 + 1920.0 - 412.0, 1080.0 - 312.0));
    }

    #[test]
    fn placing_without_a_monitor_sizes_it_and_leaves_the_place_to_the_window_manager() {
        let p = place_popup(None, None, None);
        assert_eq!(p.size, (POPUP_WIDTH, POPUP_FIRST_HEIGHT));
        assert_eq!(p.position, None);
        assert_eq!(
            place_popup(Some(5000.0), None, None).size.1,
            POPUP_MAX_HEIGHT
        );
    }

    #[test]
    fn placing_on_a_scaled_monitor_sizes_in_logical_and_places_in_physical_pixels() {
        let monitor = Monitor {
            work_area: Rect {
                x: 0.0,
                y: 0.0,
                width: 2560.0,
                height: 1600.0,
            },
            scale: 2.0,
        };
        let p = place_popup(Some(310.4), None, Some(monitor));
        assert_eq!(p.size, (400.0, 311.0));
        assert_eq!(
            p.position,
            Some((2560.0 - 800.0 - 24.0, 1600.0 - 622.0 - 24.0))
        );
        // The height is bounded by the monitor's logical height (480 px at scale 2).
        let small = Monitor {
            work_area: Rect {
                height: 960.0,
                ..monitor.work_area
            },
            ..monitor
        };
        let p = place_popup(Some(5000.0), None, Some(small));
        assert_eq!(p.size.1, 480.0 - 2.0 * SCREEN_MARGIN);
        assert_eq!(p.position.unwrap().1, SCREEN_MARGIN * 2.0);
    }

    #[test]
    fn placing_by_a_known_tray_icon_uses_its_monitor() {
        let icon = Rect {
            x: 1000.0,
            y: 770.0,
            width: 24.0,
            height: 24.0,
        };
        assert_eq!(icon.centre(), (1012.0, 782.0));
        let monitor = Monitor {
            work_area: SCREEN,
            scale: 1.0,
        };
        let p = place_popup(None, icon.non_empty(), Some(monitor));
        assert_eq!(
            p.position,
            Some((1012.0 - 200.0, 770.0 - POPUP_FIRST_HEIGHT - 12.0))
        );
        // An icon of no size is no known place.
        let unknown = Rect { width: 0.0, ..icon };
        assert_eq!(unknown.non_empty(), None);
    }
}

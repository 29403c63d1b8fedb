//! The user's settings (`$TAP_HOME/settings.json`), read and changed over the control
//! plane (`settings.get`, `settings.set`).

use serde::{Deserialize, Serialize};

/// The port `tap gateway` and the desktop app listen on when none is given.
pub const DEFAULT_PORT: u16 = 9400;

/// History is kept this many days by default.
pub const DEFAULT_HISTORY_DAYS: u32 = 30;

/// The history database is kept under this many MiB by default (1 GiB).
pub const DEFAULT_HISTORY_MAX_MIB: u32 = 1024;

/// Every setting, with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct Settings {
    /// The port the gateway listens on (127.0.0.1). Applies at the next start.
    pub port: u16,
    /// Whether the desktop app shows notifications (pairing requests, provider failures).
    pub notifications: bool,
    /// History (stream events, traces) older than this many days is removed.
    pub history_days: u32,
    /// When the history database grows beyond this many MiB, the oldest is removed.
    pub history_max_mib: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            port: DEFAULT_PORT,
            notifications: true,
            history_days: DEFAULT_HISTORY_DAYS,
            history_max_mib: DEFAULT_HISTORY_MAX_MIB,
        }
    }
}

/// Params of `settings.set`: the settings to change; absent ones stay as they are.
///
/// The one type in this crate that refuses unknown fields: a misspelt setting must fail
/// (`INVALID_JSON`), not be silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SettingsPatch {
    /// 1–65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Notifications on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<bool>,
    /// 1–3650 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_days: Option<u32>,
    /// 16–1048576 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_max_mib: Option<u32>,
}

/// Result of `settings.get` and `settings.set`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SettingsResult {
    /// The settings as saved.
    pub settings: Settings,
    /// Where they are saved (`$TAP_HOME/settings.json`).
    pub file: String,
    /// The port this gateway listens on now.
    pub running_port: u16,
    /// `true` when `settings.port` differs from `running_port`: the new port applies
    /// when the gateway starts again.
    pub restart_required: bool,
}

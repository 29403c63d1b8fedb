//! The user's settings (`$TAP_HOME/settings.json`), read and changed over the control
//! plane (`settings.get`, `settings.set`).

use serde::{Deserialize, Serialize};

/// The port `tap gateway` and the desktop app listen on when none is given.
pub const DEFAULT_PORT: u16 = 9400;

/// Every setting, with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct Settings {
    /// The port the gateway listens on (127.0.0.1). Applies at the next start.
    pub port: u16,
    /// Whether the desktop app shows notifications (pairing requests, provider failures).
    pub notifications: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            port: DEFAULT_PORT,
            notifications: true,
        }
    }
}

/// Params of `settings.set`: the settings to change; absent ones stay as they are.
///
/// The one type in this crate that refuses unknown fields: a misspelt setting must fail
/// (`INVALID_JSON`), not be silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    /// 1–65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Notifications on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<bool>,
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

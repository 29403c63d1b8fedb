//! The user's settings, `$TAP_HOME/settings.json` (mode 0600, replaced atomically):
//! `{"port": 9400, "notifications": true, "historyDays": 30, "historyMaxMib": 1024}`.
//!
//! The engine only stores them; their users read them at start: `tap gateway` and the
//! desktop app listen on `port` when no address is given, the desktop app shows
//! notifications when `notifications` is on. So a new port applies at the next start. The
//! history limits are the exception: the ledger's retention reads them on every trim, so a
//! change applies within a minute.
//! Changed over the control plane (`settings.get`, `settings.set`, see `api`), or read
//! directly with [`load`].

pub(crate) mod api;

use crate::limits::{HISTORY_DAYS, HISTORY_MAX_MIB};
pub use tap_protocol::settings::{Settings, SettingsPatch, DEFAULT_PORT};

use crate::error::Error;
use std::path::{Path, PathBuf};

/// The file's name in `TAP_HOME`.
pub const FILE_NAME: &str = "settings.json";

/// `$TAP_HOME/settings.json` for the data directory `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// The saved settings in `dir` (`TAP_HOME`); the defaults when there is no file.
/// Unknown keys in the file are ignored (a newer version may have written them); a
/// missing key takes its default. `INTERNAL` when the file cannot be read or is not a
/// settings object, `INVALID_JSON` when a value is out of range.
pub fn load(dir: &Path) -> Result<Settings, Error> {
    let path = path(dir);
    match read(&path)? {
        None => Ok(Settings::default()),
        Some(text) => parse(&path, &text),
    }
}

/// The file's text; `None` when there is no file.
fn read(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::internal(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// The file's `text` as settings, checked.
fn parse(path: &Path, text: &str) -> Result<Settings, Error> {
    let settings: Settings = serde_json::from_str(text).map_err(|e| {
        Error::internal(format!(
            "{} is not valid settings JSON: {e}",
            path.display()
        ))
    })?;
    check(&settings)?;
    Ok(settings)
}

/// Writes `settings` to `dir` (mode 0600, atomically).
pub fn save(dir: &Path, settings: &Settings) -> Result<(), Error> {
    check(settings)?;
    let text = serde_json::to_string_pretty(settings).expect("settings serialize");
    crate::auth::files::write_private(&path(dir), &format!("{text}\n"))
        .map_err(|e| Error::internal(e.to_string()))?;
    Ok(())
}

/// `settings` with `patch` applied, checked.
pub fn apply(settings: Settings, patch: &SettingsPatch) -> Result<Settings, Error> {
    let next = Settings {
        port: patch.port.unwrap_or(settings.port),
        notifications: patch.notifications.unwrap_or(settings.notifications),
        history_days: patch.history_days.unwrap_or(settings.history_days),
        history_max_mib: patch.history_max_mib.unwrap_or(settings.history_max_mib),
    };
    check(&next)?;
    Ok(next)
}

fn check(s: &Settings) -> Result<(), Error> {
    if s.port == 0 {
        // 0 would mean "any free port": nothing could find the gateway at a fixed address.
        return Err(Error::invalid("'port' must be between 1 and 65535"));
    }
    if !(HISTORY_DAYS.contains(&s.history_days)) {
        return Err(Error::invalid(format!(
            "'historyDays' must be between {} and {}",
            HISTORY_DAYS.start(),
            HISTORY_DAYS.end()
        )));
    }
    if !(HISTORY_MAX_MIB.contains(&s.history_max_mib)) {
        return Err(Error::invalid(format!(
            "'historyMaxMib' must be between {} and {}",
            HISTORY_MAX_MIB.start(),
            HISTORY_MAX_MIB.end()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::ErrorCode;

    #[test]
    fn defaults_without_a_file_and_a_round_trip_with_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), Settings::default());
        let s = Settings {
            port: 9555,
            notifications: false,
            history_days: 7,
            history_max_mib: 64,
        };
        save(dir.path(), &s).unwrap();
        assert_eq!(load(dir.path()).unwrap(), s);
    }

    #[test]
    fn unknown_keys_in_the_file_are_ignored_and_missing_ones_default() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), r#"{"port": 9401, "theme": "dark"}"#).unwrap();
        assert_eq!(
            load(dir.path()).unwrap(),
            Settings {
                port: 9401,
                ..Settings::default()
            }
        );
    }

    #[test]
    fn a_malformed_file_or_port_0_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), "{").unwrap();
        let malformed = load(dir.path()).unwrap_err();
        assert_eq!(malformed.code, ErrorCode::Internal);
        assert!(malformed.message.contains("is not valid settings JSON"));
        std::fs::write(path(dir.path()), r#"{"port": 0}"#).unwrap();
        assert_eq!(load(dir.path()).unwrap_err().code, ErrorCode::InvalidJson);
        std::fs::write(path(dir.path()), r#"{"historyDays": 0}"#).unwrap();
        assert_eq!(load(dir.path()).unwrap_err().code, ErrorCode::InvalidJson);
        std::fs::write(path(dir.path()), r#"{"historyMaxMib": 8}"#).unwrap();
        assert_eq!(load(dir.path()).unwrap_err().code, ErrorCode::InvalidJson);
    }
}

//! The user's settings (`$TAP_HOME/settings.json`: `port`, `notifications`), read with the
//! engine's own reader so there is one definition of the file. The panel's Settings page
//! writes it through the engine (`settings.set`); the app reads it again each time it
//! matters, so a change takes effect without a restart (the port: at the next start).

use std::net::SocketAddr;
use std::path::Path;
pub use tap_gateway::settings::Settings;

/// The saved settings; the defaults (with a warning) when the file cannot be used, so a
/// broken file never keeps the app from starting or notifying.
pub fn load(home: &Path) -> Settings {
    tap_gateway::settings::load(home).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "ignoring the saved settings; using the defaults");
        Settings::default()
    })
}

/// Where the app listens: `asked` (`--listen`, `TAP_DESKTOP_LISTEN`), else 127.0.0.1 on the
/// saved port.
pub fn listen_address(asked: Option<SocketAddr>, home: &Path) -> SocketAddr {
    asked.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], load(home).port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_settings_are_read_and_a_broken_file_means_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), Settings::default());
        assert!(load(dir.path()).notifications);
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"port": 9555, "notifications": false}"#,
        )
        .unwrap();
        let s = load(dir.path());
        assert_eq!((s.port, s.notifications), (9555, false));
        std::fs::write(dir.path().join("settings.json"), "not json").unwrap();
        assert_eq!(load(dir.path()), Settings::default());
    }

    #[test]
    fn the_app_listens_where_asked_else_on_the_saved_port() {
        let dir = tempfile::tempdir().unwrap();
        let asked: SocketAddr = "127.0.0.1:9700".parse().unwrap();
        assert_eq!(listen_address(Some(asked), dir.path()), asked);
        std::fs::write(dir.path().join("settings.json"), r#"{"port": 9555}"#).unwrap();
        let saved = listen_address(None, dir.path());
        assert_eq!(saved, "127.0.0.1:9555".parse::<SocketAddr>().unwrap());
    }
}

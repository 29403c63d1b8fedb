use std::path::{Path, PathBuf};

/// What a client needs to reach the running gateway.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// `ws://127.0.0.1:PORT`.
    pub address: String,
    /// The session-host token.
    pub host_token: String,
    /// The control-plane token, when it could be read: from `$TAP_HOME/control-token`, or
    /// from the OS keyring when `gateway.json` says `"controlTokenStore": "keyring"` (the
    /// desktop app keeps it there).
    pub control_token: Option<String>,
    /// Where `gateway.json` says the control token is: `"file"` or `"keyring"`.
    pub control_token_store: String,
    /// Why `control_token` is `None` when the store could not be read (a locked or absent
    /// keyring); `None` when there was simply no token.
    pub control_token_error: Option<String>,
}

/// Why the running gateway could not be found.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// No `gateway.json`: no gateway runs with this `TAP_HOME`.
    #[error("no running gateway found under {0} (start one with `tap gateway`, or set TAP_HOME to the gateway's data directory)")]
    NotRunning(PathBuf),
    /// A file exists but cannot be read or parsed.
    #[error("cannot read {path}: {detail}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

/// The data directory: `$TAP_HOME`, else the platform data directory (`~/.local/share/tap`).
pub fn default_home() -> PathBuf {
    if let Some(h) = std::env::var_os("TAP_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    dirs::data_dir()
        .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("share")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("tap")
}

/// `COPILOT_HOME`, else `~/.copilot`: where spec providers look for the gateway token.
pub fn default_copilot_home() -> Option<PathBuf> {
    std::env::var_os("COPILOT_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".copilot")))
}

impl Discovery {
    /// Reads `gateway.json`, `host-token` and the control token (`control-token`, or the OS
    /// keyring when `gateway.json` says so) under `home`.
    pub fn from_home(home: &Path) -> Result<Self, DiscoveryError> {
        let state_path = home.join("gateway.json");
        let state = match std::fs::read_to_string(&state_path) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(DiscoveryError::NotRunning(home.to_path_buf()))
            }
            Err(e) => {
                return Err(DiscoveryError::Unreadable {
                    path: state_path,
                    detail: e.to_string(),
                })
            }
        };
        let unreadable = |path: &Path, detail: String| DiscoveryError::Unreadable {
            path: path.to_path_buf(),
            detail,
        };
        let state: serde_json::Value =
            serde_json::from_str(&state).map_err(|e| unreadable(&state_path, e.to_string()))?;
        let address = state
            .get("address")
            .and_then(|a| a.as_str())
            .ok_or_else(|| unreadable(&state_path, "no 'address'".into()))?
            .to_string();
        let token_path = home.join("host-token");
        let host_token = std::fs::read_to_string(&token_path)
            .map_err(|e| unreadable(&token_path, e.to_string()))?
            .trim()
            .to_string();
        let control_token_store = state
            .get("controlTokenStore")
            .and_then(|s| s.as_str())
            .unwrap_or(tap_secrets::STORE_FILE)
            .to_string();
        let (control_token, control_token_error) =
            if control_token_store == tap_secrets::STORE_KEYRING {
                match tap_secrets::read_control_token(
                    &tap_secrets::OsKeyring::default(),
                    home,
                    Some(&control_token_store),
                ) {
                    Ok(token) => (token, None),
                    Err(e) => (None, Some(format!("cannot read the OS keyring: {e}"))),
                }
            } else {
                let control_path = home.join("control-token");
                match std::fs::read_to_string(&control_path) {
                    Ok(t) => (Some(t.trim().to_string()), None),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
                    Err(e) => return Err(unreadable(&control_path, e.to_string())),
                }
            };
        Ok(Self {
            address,
            host_token,
            control_token,
            control_token_store,
            control_token_error,
        })
    }

    /// The session-host endpoint.
    pub fn session_url(&self) -> String {
        format!("{}/session", self.address.trim_end_matches('/'))
    }

    /// The control-plane endpoint.
    pub fn control_url(&self) -> String {
        format!("{}/control", self.address.trim_end_matches('/'))
    }
}

//! Where Tap keeps the control token (the key to `/control`: list, approve, deny, revoke).
//!
//! The desktop app puts it in the OS keyring (the Secret Service on Linux) when one is
//! there and works; otherwise the engine writes it to `$TAP_HOME/control-token` (mode 0600)
//! as `tap gateway` always does, and the panel shows a notice. `gateway.json` records
//! which (`"controlTokenStore": "keyring"` or `"file"`), so the `tap` CLI
//! (`tap_client::Discovery`) knows where to read it.
//!
//! The provider and host tokens stay in files: spec providers and session hosts read them
//! from there.
//!
//! Named secrets (`named.rs`: an MCP server's API key referenced as `${secret:NAME}`) are
//! kept the same way: the keyring when it works, else `$TAP_HOME/secrets.json` (0600).
//!
//! No function here logs, and no error message carries a secret.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod named;
mod os_keyring;
mod token;

pub use backend::{MemoryBackend, SecretBackend, SecretError};
pub use named::{
    forget_secret, read_secret, secret_account, secrets_file, store_secret, valid_secret_name,
    SecretPlace, MAX_SECRET_NAME_LEN, SECRETS_FILE,
};
pub use os_keyring::OsKeyring;
pub use token::generate_token;

use std::path::{Path, PathBuf};

/// The keyring "service" every Tap secret is filed under.
pub const KEYRING_SERVICE: &str = "tap-gateway";
/// `controlTokenStore` in `gateway.json` when the token is in the OS keyring.
pub const STORE_KEYRING: &str = "keyring";
/// `controlTokenStore` in `gateway.json` when the token is in `$TAP_HOME/control-token`
/// (also what a `gateway.json` without the field means).
pub const STORE_FILE: &str = "file";
/// The fallback file's name under `$TAP_HOME`.
pub const CONTROL_TOKEN_FILE: &str = "control-token";
/// `TAP_KEYRING=off` (or `0`, `false`, `no`) keeps every secret out of the keyring.
pub const KEYRING_ENV: &str = "TAP_KEYRING";

/// The keyring account of the control token of the gateway using `home`. The path is part
/// of it, so two gateways with different `TAP_HOME`s (tests, two users' setups) never
/// overwrite each other's token.
pub fn control_token_account(home: &Path) -> String {
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
    format!("control-token:{}", home.display())
}

/// `$TAP_HOME/control-token`.
pub fn control_token_file(home: &Path) -> PathBuf {
    home.join(CONTROL_TOKEN_FILE)
}

/// Whether `TAP_KEYRING` asks to keep secrets out of the keyring.
pub fn keyring_disabled_by_env() -> bool {
    std::env::var(KEYRING_ENV)
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "off" | "0" | "false" | "no"
            )
        })
        .unwrap_or(false)
}

/// Where the control token ended up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// In the OS keyring, and read back from it.
    Keyring,
    /// Not in the keyring; the engine writes `$TAP_HOME/control-token` (0600).
    File {
        /// Why the keyring was not used (no secret in it).
        reason: String,
    },
}

impl Placement {
    /// The `controlTokenStore` value for `gateway.json`.
    pub fn store_label(&self) -> &'static str {
        match self {
            Self::Keyring => STORE_KEYRING,
            Self::File { .. } => STORE_FILE,
        }
    }

    /// `None` when the keyring holds the token; otherwise a sentence for the panel's
    /// notice, naming the file and why.
    pub fn notice(&self, home: &Path) -> Option<String> {
        match self {
            Self::Keyring => None,
            Self::File { reason } => Some(format!(
                "No OS keyring is available ({reason}), so the control token is kept in {} (readable only by you, mode 0600).",
                control_token_file(home).display()
            )),
        }
    }
}

/// Puts `token` in the keyring under `home`'s account and reads it back; any failure (no
/// Secret Service, a locked keyring, a keyring that returns something else) gives
/// [`Placement::File`] with the reason. `keyring_allowed` false (see
/// [`keyring_disabled_by_env`]) skips the keyring.
pub fn place_control_token(
    backend: &dyn SecretBackend,
    home: &Path,
    token: &str,
    keyring_allowed: bool,
) -> Placement {
    if !keyring_allowed {
        return Placement::File {
            reason: format!("{KEYRING_ENV}=off"),
        };
    }
    let account = control_token_account(home);
    if let Err(e) = backend.set(&account, token) {
        return Placement::File {
            reason: e.to_string(),
        };
    }
    match backend.get(&account) {
        Ok(Some(back)) if back == token => Placement::Keyring,
        Ok(_) => {
            let _ = backend.delete(&account);
            Placement::File {
                reason: "the keyring did not return the token it was given".into(),
            }
        }
        Err(e) => {
            let _ = backend.delete(&account);
            Placement::File {
                reason: e.to_string(),
            }
        }
    }
}

/// Reads the control token of the gateway using `home`, from where `store` (the
/// `controlTokenStore` of its `gateway.json`; `None` = an older file without it) says.
/// `Ok(None)`: nothing there.
pub fn read_control_token(
    backend: &dyn SecretBackend,
    home: &Path,
    store: Option<&str>,
) -> Result<Option<String>, SecretError> {
    match store {
        Some(STORE_KEYRING) => backend.get(&control_token_account(home)),
        Some(STORE_FILE) | None => {
            let path = control_token_file(home);
            match std::fs::read_to_string(&path) {
                Ok(t) => Ok(Some(t.trim().to_string())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(SecretError::new(format!(
                    "cannot read {}: {e}",
                    path.display()
                ))),
            }
        }
        Some(other) => Err(SecretError::new(format!(
            "unknown controlTokenStore '{other}' (expected '{STORE_KEYRING}' or '{STORE_FILE}')"
        ))),
    }
}

/// Removes the control token of `home` from the keyring (a clean stop); a missing entry is
/// fine.
pub fn forget_control_token(backend: &dyn SecretBackend, home: &Path) -> Result<(), SecretError> {
    backend.delete(&control_token_account(home))
}

#[cfg(test)]
mod tests;

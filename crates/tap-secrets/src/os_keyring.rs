//! The OS keyring through the `keyring` crate (the Secret Service over D-Bus on Linux,
//! Keychain on macOS, Credential Manager on Windows).
//!
//! Every operation runs on a thread of its own, with a deadline: the Linux store talks
//! D-Bus through zbus's blocking API, which must not run on a tokio worker (with zbus's
//! tokio feature it would start a runtime inside one and panic), and a keyring that waits
//! for an unlock prompt must not hang the app or a `tap` command forever.

use crate::backend::{SecretBackend, SecretError};
use crate::KEYRING_SERVICE;
use std::sync::mpsc;
use std::time::Duration;

/// The platform keyring.
#[derive(Debug, Clone)]
pub struct OsKeyring {
    timeout: Duration,
}

impl Default for OsKeyring {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
        }
    }
}

impl OsKeyring {
    /// The platform keyring, giving up on an operation after `timeout`.
    pub fn with_timeout(timeout: Duration) -> Self {
        Self { timeout }
    }

    fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce() -> keyring::Result<T> + Send + 'static,
    ) -> Result<T, SecretError> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("tap-keyring".into())
            .spawn(move || {
                let _ = tx.send(op());
            })
            .map_err(|e| SecretError::new(format!("cannot start the keyring thread: {e}")))?;
        match rx.recv_timeout(self.timeout) {
            Ok(result) => result.map_err(describe),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(SecretError::new(format!(
                "the keyring did not answer within {} s (locked, waiting for a prompt?)",
                self.timeout.as_secs()
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(SecretError::new("the keyring thread failed"))
            }
        }
    }
}

fn entry(account: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(KEYRING_SERVICE, account)
}

/// A keyring error as a sentence. `NoDefaultStore` alone says little, so it carries why
/// the store could not be created (no session bus, no Secret Service, …).
fn describe(e: keyring::Error) -> SecretError {
    match (&e, keyring::Entry::store_status()) {
        (keyring::Error::NoDefaultStore, Err(why)) => {
            SecretError::new(format!("no keyring service: {why}"))
        }
        _ => SecretError::new(e.to_string()),
    }
}

impl SecretBackend for OsKeyring {
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        let (account, secret) = (account.to_string(), secret.to_string());
        self.run(move || entry(&account)?.set_password(&secret))
    }

    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        let account = account.to_string();
        self.run(move || match entry(&account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(e),
        })
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        let account = account.to_string();
        self.run(move || match entry(&account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(e),
        })
    }
}

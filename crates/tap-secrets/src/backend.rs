//! The seam between "where secrets go" and the OS keyring, so the placement rules are
//! tested without a Secret Service.

use std::collections::HashMap;
use std::sync::Mutex;

/// Why a keyring operation failed. The message never contains the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SecretError(String);

impl SecretError {
    /// An error with this description.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// A store of secrets by account name (the OS keyring, or a stand-in).
pub trait SecretBackend: Send + Sync {
    /// Stores `secret` under `account`, replacing what was there.
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError>;
    /// The secret under `account`; `Ok(None)` when there is none.
    fn get(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Removes the secret under `account`; a missing one is not an error.
    fn delete(&self, account: &str) -> Result<(), SecretError>;
}

/// An in-memory store, for tests: it can refuse writes, or hand back something else than
/// it was given (a keyring that misbehaves).
#[derive(Debug, Default)]
pub struct MemoryBackend {
    entries: Mutex<HashMap<String, String>>,
    refuse_writes: Option<String>,
    answer_instead: Option<String>,
}

impl MemoryBackend {
    /// An empty, well-behaved store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose `set` fails with `why` (a locked keyring, say).
    pub fn refusing(why: &str) -> Self {
        Self {
            refuse_writes: Some(why.to_string()),
            ..Self::default()
        }
    }

    /// A store whose `get` answers `other` whatever was stored.
    pub fn answering(other: &str) -> Self {
        Self {
            answer_instead: Some(other.to_string()),
            ..Self::default()
        }
    }

    /// What is stored under `account`, bypassing `answer_instead`.
    pub fn stored(&self, account: &str) -> Option<String> {
        self.entries.lock().unwrap().get(account).cloned()
    }
}

impl SecretBackend for MemoryBackend {
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        if let Some(why) = &self.refuse_writes {
            return Err(SecretError::new(why.clone()));
        }
        self.entries
            .lock()
            .unwrap()
            .insert(account.to_string(), secret.to_string());
        Ok(())
    }

    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        if let Some(other) = &self.answer_instead {
            return Ok(Some(other.clone()));
        }
        Ok(self.stored(account))
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.entries.lock().unwrap().remove(account);
        Ok(())
    }
}

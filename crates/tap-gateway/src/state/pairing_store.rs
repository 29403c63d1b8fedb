//! `$TAP_HOME/paired-providers.json`: the pairings the user chose to remember. It holds
//! the SHA-256 of each token, never the token, and is written with mode 0600.

use crate::auth::files::write_private;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tap_protocol::JsonObject;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::pairing::store";

/// The SHA-256 of a pairing token: all that is kept of it.
pub(crate) type TokenHash = [u8; 32];

/// The file name under the data directory.
pub(crate) const FILE_NAME: &str = "paired-providers.json";
const VERSION: u32 = 1;

/// One remembered pairing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Remembered {
    pub id: String,
    /// Lower-case hex SHA-256 of the token.
    pub token_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub created_at: String,
}

#[derive(Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    providers: Vec<Remembered>,
}

impl Remembered {
    pub fn token_hash(&self) -> Option<TokenHash> {
        let hex = self.token_sha256.as_bytes();
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in hex.chunks(2).enumerate() {
            let s = std::str::from_utf8(pair).ok()?;
            out[i] = u8::from_str_radix(s, 16).ok()?;
        }
        Some(out)
    }
}

/// The file, and a lock that serializes writers.
pub(crate) struct Store {
    pub(crate) path: PathBuf,
    pub(crate) writing: Mutex<()>,
}

impl Store {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join(FILE_NAME),
            writing: Mutex::new(()),
        }
    }

    /// The remembered pairings. A missing file is an empty list; an unreadable one is
    /// logged and treated as empty (the pairings are lost, never half-trusted).
    pub fn load(&self) -> Vec<Remembered> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                tracing::warn!(target: LOG_TARGET, path = %self.path.display(), error = %e, "cannot read remembered pairings");
                return Vec::new();
            }
        };
        match serde_json::from_str::<StoreFile>(&text) {
            Ok(f) if f.version == VERSION => f.providers,
            Ok(f) => {
                tracing::warn!(target: LOG_TARGET, path = %self.path.display(), version = f.version, "unknown version of the remembered pairings file; ignored");
                Vec::new()
            }
            Err(e) => {
                tracing::warn!(target: LOG_TARGET, path = %self.path.display(), error = %e, "malformed remembered pairings file; ignored");
                Vec::new()
            }
        }
    }

    pub(crate) fn write(&self, records: Vec<Remembered>) -> Result<(), Error> {
        if records.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::internal(e.to_string())),
            };
        }
        let file = StoreFile {
            version: VERSION,
            providers: records,
        };
        let text = serde_json::to_string_pretty(&file).expect("serializable");
        write_private(&self.path, &format!("{text}\n")).map_err(|e| Error::internal(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(hash: &str) -> Remembered {
        Remembered {
            id: "pr-1".into(),
            token_sha256: hash.into(),
            name: None,
            origin: None,
            remote: None,
            metadata: None,
            session: None,
            created_at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn token_hashes_round_trip_through_hex() {
        let hash = super::super::pairing_registry::hash_token("ext-abc");
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(record(&hex).token_hash(), Some(hash));
        assert_eq!(record(&hex[..62]).token_hash(), None);
        assert_eq!(record(&format!("{}zz", &hex[..62])).token_hash(), None);
    }

    #[test]
    fn a_missing_or_malformed_file_is_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        assert!(store.load().is_empty());
        std::fs::write(dir.path().join(FILE_NAME), "{not json").unwrap();
        assert!(store.load().is_empty());
        store.write(vec![record(&"ab".repeat(32))]).unwrap();
        assert_eq!(store.load(), vec![record(&"ab".repeat(32))]);
        store.write(Vec::new()).unwrap();
        assert!(!dir.path().join(FILE_NAME).exists());
    }
}

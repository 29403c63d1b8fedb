//! Per-client tokens for the MCP HTTP endpoint (`docs/clients.md`, "Client tokens"): a
//! token made for one client (`tap tokens create cursor --profile review`), kept across
//! restarts (the host token changes at every start, so an HTTP client configured with it
//! breaks at the next one), listed, and revoked on its own.
//!
//! `$TAP_HOME/client-tokens.json` (0600) holds each token's SHA-256, never the token: the
//! token is shown once, when it is made. A request's token is hashed and compared with
//! each stored hash in constant time. A token made with a profile holds its client to it:
//! the sessions it opens have that profile whatever the request asks.

use super::files::write_private;
use super::tokens;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use subtle::ConstantTimeEq;

/// The file's name in `TAP_HOME`.
pub const FILE_NAME: &str = "client-tokens.json";

/// What a client token's value starts with.
pub const PREFIX: &str = "mtk-";

/// One token as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its id (`tap tokens revoke ID`); not secret.
    pub id: String,
    /// The client it was made for (a name for people).
    pub client: String,
    /// The profile it holds its client to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// RFC 3339 time it was made.
    pub created: String,
    /// SHA-256 of the token, hex.
    pub hash: String,
}

#[derive(Default, Serialize, Deserialize)]
struct Doc {
    #[serde(default)]
    tokens: Vec<Entry>,
}

/// The gateway's client tokens: read at start, written on every change.
pub(crate) struct ClientTokens {
    path: PathBuf,
    entries: RwLock<Vec<Entry>>,
}

impl ClientTokens {
    /// Reads `data_dir`'s file. A missing file is no tokens; an unreadable one is no
    /// tokens and a warning (no client token works until it is fixed: fail closed).
    pub fn load(data_dir: &Path) -> (Self, Option<String>) {
        let path = data_dir.join(FILE_NAME);
        let (entries, warning) = match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str::<Doc>(&text) {
                Ok(doc) => (doc.tokens, None),
                Err(e) => (
                    Vec::new(),
                    Some(format!(
                        "{} is not valid ({e}); no client token works until it is fixed or removed",
                        path.display()
                    )),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
            Err(e) => (
                Vec::new(),
                Some(format!("cannot read {}: {e}", path.display())),
            ),
        };
        let store = ClientTokens {
            path,
            entries: RwLock::new(entries),
        };
        (store, warning)
    }

    /// The entry whose token `presented` is, if any.
    pub fn check(&self, presented: &str) -> Option<Entry> {
        if !presented.starts_with(PREFIX) {
            return None;
        }
        let hash = hash(presented);
        let entries = self.entries.read().unwrap();
        // Every entry is compared, whatever matched: the time taken says nothing about
        // which one, or how much of it.
        let mut found = None;
        for e in entries.iter() {
            if bool::from(e.hash.as_bytes().ct_eq(hash.as_bytes())) {
                found = Some(e.clone());
            }
        }
        found
    }

    /// Every token, newest last.
    pub fn list(&self) -> Vec<Entry> {
        self.entries.read().unwrap().clone()
    }

    /// Makes a token for `client`; returns its entry and the token (shown once).
    pub fn create(
        &self,
        client: &str,
        profile: Option<&str>,
        max: usize,
    ) -> Result<(Entry, String), String> {
        let token = tokens::generate(PREFIX);
        let mut entries = self.entries.write().unwrap();
        if entries.len() >= max {
            return Err(format!(
                "{max} client tokens exist already; revoke one first (`tap tokens list`)"
            ));
        }
        let entry = Entry {
            id: crate::ids::short("tok"),
            client: client.to_string(),
            profile: profile.map(str::to_string),
            created: crate::time::rfc3339(std::time::SystemTime::now()),
            hash: hash(&token),
        };
        let mut next = entries.clone();
        next.push(entry.clone());
        self.save(&next)?;
        *entries = next;
        Ok((entry, token))
    }

    /// Revokes the token `id`: it stops working at once.
    pub fn revoke(&self, id: &str) -> Result<Entry, String> {
        let mut entries = self.entries.write().unwrap();
        let Some(at) = entries.iter().position(|e| e.id == id) else {
            return Err(format!("no client token '{id}'"));
        };
        let mut next = entries.clone();
        let gone = next.remove(at);
        self.save(&next)?;
        *entries = next;
        Ok(gone)
    }

    fn save(&self, entries: &[Entry]) -> Result<(), String> {
        let doc = Doc {
            tokens: entries.to_vec(),
        };
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        write_private(&self.path, &text).map_err(|e| e.to_string())
    }
}

fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_works_until_revoked_and_is_never_stored() {
        let dir = tempfile::tempdir().unwrap();
        let (store, warning) = ClientTokens::load(dir.path());
        assert!(warning.is_none());
        let (entry, token) = store.create("cursor", Some("review"), 8).unwrap();
        assert!(token.starts_with(PREFIX));
        assert_eq!(
            store.check(&token).unwrap().profile.as_deref(),
            Some("review")
        );
        assert!(store.check("mtk-wrong").is_none());
        assert!(store.check(&token[..token.len() - 1]).is_none());
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(!text.contains(&token), "only its hash is kept");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(FILE_NAME))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        // A new gateway reads it back; revoking stops it at once.
        let (again, _) = ClientTokens::load(dir.path());
        assert_eq!(again.check(&token).unwrap().id, entry.id);
        again.revoke(&entry.id).unwrap();
        assert!(again.check(&token).is_none());
        assert!(again.revoke(&entry.id).is_err());
        let (_, t2) = again.create("a", None, 1).unwrap();
        assert!(again.check(&t2).is_some());
        assert!(again
            .create("b", None, 1)
            .unwrap_err()
            .contains("revoke one first"));

        std::fs::write(dir.path().join(FILE_NAME), "{ broken").unwrap();
        let (broken, warning) = ClientTokens::load(dir.path());
        assert!(warning.unwrap().contains("no client token works"));
        assert!(broken.check(&t2).is_none(), "fail closed");
    }
}

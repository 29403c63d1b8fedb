//! Where a remote server's OAuth tokens live: one named secret per server URL (the OS
//! keyring, else `$TAP_HOME/secrets.json` at 0600, through `tap-secrets`), holding rmcp's
//! `StoredCredentials` as JSON. Never in `mcp.json`, a log line, a span or the panel.
//!
//! rmcp reads the credentials before every request it sends, so the vault keeps them in
//! memory once read and writes through on every change; the keyring is asked once per URL
//! per gateway run. Keyed by URL, not by server name: every session's copy of a project
//! server, and a user server with the same URL, share one sign-in. A per-URL lock makes
//! two runs that both see an expiring token refresh it once.

use crate::limits::SECRETS_KEYRING_TIMEOUT;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The tokens of every remote server of one gateway.
pub(crate) struct Vault {
    home: PathBuf,
    keyring: bool,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// The keyring could not be read once already (said once).
    warned: std::sync::atomic::AtomicBool,
}

/// One URL's credentials as last read or written; `None` inside: read, and there were none.
#[derive(Default)]
struct Slot {
    cached: Mutex<Option<Option<StoredCredentials>>>,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

/// What the panel and `tap mcp list` may know about a stored sign-in (no token).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub scopes: Vec<String>,
    /// Seconds since the epoch the access token expires, when the server said.
    pub expires_at: Option<u64>,
    pub issuer: Option<String>,
}

impl Vault {
    pub fn new(home: PathBuf, keyring: bool) -> Arc<Self> {
        Arc::new(Vault {
            home,
            keyring,
            slots: Mutex::new(HashMap::new()),
            warned: Default::default(),
        })
    }

    /// The store rmcp reads and writes for the server at `url`.
    pub fn store(self: &Arc<Self>, url: &str) -> UrlStore {
        UrlStore {
            vault: self.clone(),
            name: secret_name(url),
        }
    }

    /// A summary of what is stored for `url`, from memory only (`None`: nothing, or not
    /// read yet: a run reads it when it starts).
    pub fn summary(&self, url: &str) -> Option<Summary> {
        let slot = self.slot(&secret_name(url));
        let cached = slot.cached.lock().unwrap();
        let creds = cached.as_ref()?.as_ref()?;
        let token = creds.token_response.as_ref()?;
        use oauth2::TokenResponse;
        let expires_at = match (token.expires_in(), creds.token_received_at) {
            (Some(ttl), Some(at)) => Some(at + ttl.as_secs()),
            _ => None,
        };
        Some(Summary {
            scopes: creds.granted_scopes.clone(),
            expires_at,
            issuer: creds.issuer.clone(),
        })
    }

    /// Whether credentials were stored for `url` (a token, or a registration left by a
    /// refused refresh), from memory only: "signed in before" for the user's message.
    pub fn known(&self, url: &str) -> bool {
        let slot = self.slot(&secret_name(url));
        let cached = slot.cached.lock().unwrap();
        matches!(&*cached, Some(Some(_)))
    }

    fn slot(&self, name: &str) -> Arc<Slot> {
        self.slots
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_default()
            .clone()
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&tap_secrets::OsKeyring, &std::path::Path, bool) -> Result<T, String>
            + Send
            + 'static,
    ) -> Result<T, AuthError> {
        let (home, keyring) = (self.home.clone(), self.keyring);
        // The keyring's calls block: not on a runtime worker.
        tokio::task::spawn_blocking(move || {
            let backend = tap_secrets::OsKeyring::with_timeout(SECRETS_KEYRING_TIMEOUT);
            f(&backend, &home, keyring)
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(AuthError::CredentialStoreError)
    }
}

/// The secret holding the tokens for `url`: `oauth.` and the first 16 bytes of its
/// SHA-256 in hex (a URL holds characters a secret's name may not).
pub(crate) fn secret_name(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let mut name = String::from("oauth.");
    for b in &digest[..16] {
        name.push_str(&format!("{b:02x}"));
    }
    name
}

/// rmcp's view of one URL's credentials in the vault.
#[derive(Clone)]
pub(crate) struct UrlStore {
    vault: Arc<Vault>,
    name: String,
}

impl UrlStore {
    /// Whether credentials with a token are stored (reads the keyring the first time).
    pub async fn has_token(&self) -> Result<bool, AuthError> {
        Ok(self
            .load()
            .await?
            .is_some_and(|c| c.token_response.is_some()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for UrlStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let slot = self.vault.slot(&self.name);
        if let Some(cached) = slot.cached.lock().unwrap().clone() {
            return Ok(cached);
        }
        let name = self.name.clone();
        let read = self
            .vault
            .blocking(move |backend, home, keyring| {
                tap_secrets::read_secret(backend, home, &name, keyring).map_err(|e| e.to_string())
            })
            .await;
        // Not in the file and no keyring to ask (none on this machine, or it would not
        // open): nothing can be read, so there is no sign-in to use. The server asks for
        // one if it needs it, and a new sign-in is kept where it can be (the file, if the
        // keyring still fails).
        let text = match read {
            Ok(text) => text,
            Err(e) => {
                // Once per run: a machine without a keyring would say it for every server.
                if !self
                    .vault
                    .warned
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
                {
                    tracing::warn!(target: "tap_gateway::mcp_servers", error = %e, "remote servers' stored sign-ins cannot be read from the keyring; they are treated as signed out");
                }
                None
            }
        };
        // A value that is not credentials (edited by hand, an older shape) is no sign-in:
        // the user signs in again rather than the server failing for good.
        let creds = text.and_then(|t| serde_json::from_str::<StoredCredentials>(&t).ok());
        *slot.cached.lock().unwrap() = Some(creds.clone());
        Ok(creds)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_string(&credentials)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        let name = self.name.clone();
        self.vault
            .blocking(move |backend, home, keyring| {
                tap_secrets::store_secret(backend, home, &name, &text, keyring)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .await?;
        *self.vault.slot(&self.name).cached.lock().unwrap() = Some(Some(credentials));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let name = self.name.clone();
        *self.vault.slot(&self.name).cached.lock().unwrap() = Some(None);
        self.vault
            .blocking(move |backend, home, keyring| {
                tap_secrets::forget_secret(backend, home, &name, keyring).map_err(|e| e.to_string())
            })
            .await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // The refresh token is dead: keep the client id (a new sign-in reuses a
        // registration), drop the tokens so the server shows "needs sign-in".
        let kept = StoredCredentials::new(credentials.client_id.clone(), None, Vec::new(), None)
            .with_issuer(credentials.issuer.clone());
        self.save(kept).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self.vault.slot(&self.name).refresh.clone();
        Ok(Some(CredentialRefreshGuard::new(lock.lock_owned().await)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(token: &str) -> StoredCredentials {
        let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({"access_token": token, "token_type": "Bearer", "expires_in": 60, "refresh_token": "r"}),
        )
        .unwrap();
        StoredCredentials::new(
            "client".into(),
            Some(token),
            vec!["read".into()],
            Some(1000),
        )
    }

    #[tokio::test]
    async fn tokens_are_kept_per_url_in_the_0600_file_and_survive_a_new_vault() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::new(dir.path().to_path_buf(), false);
        let a = vault.store("https://a.example/mcp");
        let b = vault.store("https://b.example/mcp");
        assert!(!a.has_token().await.unwrap());
        a.save(credentials("tok-a")).await.unwrap();
        assert!(a.has_token().await.unwrap());
        assert!(!b.has_token().await.unwrap());
        let summary = vault.summary("https://a.example/mcp").unwrap();
        assert_eq!(summary.expires_at, Some(1060));
        assert_eq!(summary.scopes, ["read"]);

        // A new gateway reads them back from the file, which only the user can read.
        let again = Vault::new(dir.path().to_path_buf(), false);
        assert!(
            again.summary("https://a.example/mcp").is_none(),
            "not read yet"
        );
        let loaded = again.store("https://a.example/mcp").load().await.unwrap();
        assert_eq!(loaded.unwrap().client_id, "client");
        let file = tap_secrets::secrets_file(dir.path());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );

        // A rejected refresh token leaves the client id and no token.
        let loaded = again
            .store("https://a.example/mcp")
            .load()
            .await
            .unwrap()
            .unwrap();
        again
            .store("https://a.example/mcp")
            .on_refresh_token_rejected(&loaded)
            .await
            .unwrap();
        assert!(!again
            .store("https://a.example/mcp")
            .has_token()
            .await
            .unwrap());
        again.store("https://a.example/mcp").clear().await.unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("tok-a"), "{text}");
    }

    #[test]
    fn secret_names_are_valid_and_differ_per_url() {
        let a = secret_name("https://a.example/mcp");
        assert!(tap_secrets::valid_secret_name(&a), "{a}");
        assert_ne!(a, secret_name("https://a.example/mcp/"));
    }
}

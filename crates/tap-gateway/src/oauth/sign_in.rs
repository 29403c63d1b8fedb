//! Signing in: the authorization code flow with PKCE, started by `mcpServers.signIn` and
//! finished when the user's browser comes back to the gateway's own
//! `http://127.0.0.1:<port>/oauth/callback`.
//!
//! rmcp does the protocol (discovery from the server's challenge, registration, the
//! authorization URL with `state`, S256 and `resource`, the code exchange). The gateway
//! keeps each started sign-in under its `state`, for [`SIGN_IN_WINDOW`] at most: a
//! callback whose `state` is unknown, expired or already used is refused, so a page the
//! user visits cannot finish (or replay) a sign-in, and a code issued for another server
//! fails its exchange at this server's token endpoint. Starting again for the same
//! server replaces the earlier one.

use super::client_spec::ClientSpec;
use super::vault::UrlStore;
use crate::limits::{MAX_PENDING_SIGN_INS, OAUTH_HTTP_TIMEOUT, SIGN_IN_WINDOW};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, OAuthState};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;
use tokio::time::Instant;

/// The path the authorization server sends the browser back to.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// What the user's browser brought back.
#[derive(Debug, Clone, Default)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    /// RFC 9207's `iss`, checked against the authorization server's when present.
    pub iss: Option<String>,
    /// The authorization server's refusal (`access_denied`, …).
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Callback {
    /// From the callback's query string (`code=…&state=…`). A parameter given twice is
    /// taken the first time.
    pub fn from_query(query: &str) -> Self {
        let mut cb = Callback::default();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match k.as_ref() {
                "code" => &mut cb.code,
                "state" => &mut cb.state,
                "iss" => &mut cb.iss,
                "error" => &mut cb.error,
                "error_description" => &mut cb.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        cb
    }
}

/// Sign-ins waiting for the browser, by `state`.
pub(crate) struct SignIns<K> {
    pending: Mutex<HashMap<String, Pending<K>>>,
}

struct Pending<K> {
    owner: K,
    flow: OAuthState,
    until: Instant,
}

/// What a started sign-in needs.
pub(crate) struct Start<'a> {
    /// The server's URL (the protected resource).
    pub url: &'a str,
    /// Its `"oauth"` entry, the client secret already put in.
    pub client: &'a ClientSpec,
    /// The server's last `WWW-Authenticate`, where discovery starts.
    pub challenge: Option<&'a str>,
    /// `http://127.0.0.1:<port>/oauth/callback`.
    pub redirect_uri: String,
    /// Where the tokens go.
    pub store: UrlStore,
}

impl<K: Clone + PartialEq + Send> SignIns<K> {
    pub fn new() -> Self {
        SignIns {
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `owner` has a sign-in waiting for the browser.
    pub fn is_pending(&self, owner: &K) -> bool {
        let now = Instant::now();
        let pending = self.pending.lock().unwrap();
        pending.values().any(|p| &p.owner == owner && p.until > now)
    }

    /// Forgets `owner`'s waiting sign-in (signed out, removed).
    pub fn cancel(&self, owner: &K) {
        self.pending
            .lock()
            .unwrap()
            .retain(|_, p| &p.owner != owner);
    }

    /// Discovers, registers and builds the authorization URL for `owner`. Returns the URL
    /// and when the sign-in expires.
    pub async fn start(&self, owner: K, start: Start<'_>) -> Result<(String, SystemTime), String> {
        let flow = tokio::time::timeout(OAUTH_HTTP_TIMEOUT, authorization(start))
            .await
            .map_err(|_| {
                format!(
                    "its authorization server did not answer within {} s",
                    OAUTH_HTTP_TIMEOUT.as_secs()
                )
            })??;
        let url = flow
            .get_authorization_url()
            .await
            .map_err(|e| e.to_string())?;
        let state = url::Url::parse(&url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or("the authorization URL has no 'state'")?;
        let now = Instant::now();
        let mut pending = self.pending.lock().unwrap();
        pending.retain(|_, p| p.owner != owner && p.until > now);
        if pending.len() >= MAX_PENDING_SIGN_INS {
            return Err(format!(
                "{MAX_PENDING_SIGN_INS} sign-ins are already waiting for a browser; finish or let one expire ({} min)",
                SIGN_IN_WINDOW.as_secs() / 60
            ));
        }
        pending.insert(
            state,
            Pending {
                owner,
                flow,
                until: now + SIGN_IN_WINDOW,
            },
        );
        Ok((url, SystemTime::now() + SIGN_IN_WINDOW))
    }

    /// Finishes the sign-in the callback belongs to: exchanges the code and stores the
    /// tokens. `Ok`: whose it was. `Err((owner, why))`: refused; `owner` when it was a
    /// known sign-in (it is over either way: a `state` is good once).
    pub async fn finish(&self, callback: &Callback) -> Result<K, (Option<K>, String)> {
        let Some(state) = callback.state.as_deref() else {
            return Err((None, "the answer has no 'state'".into()));
        };
        let found = self.pending.lock().unwrap().remove(state);
        let Some(mut pending) = found else {
            return Err((
                None,
                "no sign-in is waiting for this answer: it is unknown, was used already, or the gateway restarted since".into(),
            ));
        };
        let owner = pending.owner.clone();
        if pending.until <= Instant::now() {
            return Err((
                Some(owner),
                format!(
                    "the sign-in expired: it has to be finished within {} minutes",
                    SIGN_IN_WINDOW.as_secs() / 60
                ),
            ));
        }
        if let Some(error) = &callback.error {
            let detail = callback.error_description.as_deref().unwrap_or("");
            return Err((
                Some(owner),
                format!("the authorization server refused: {error} {detail}")
                    .trim_end()
                    .to_string(),
            ));
        }
        let Some(code) = callback.code.as_deref() else {
            return Err((Some(owner), "the answer has no 'code'".into()));
        };
        let exchanged = tokio::time::timeout(
            OAUTH_HTTP_TIMEOUT,
            pending
                .flow
                .handle_callback_with_issuer(code, state, callback.iss.as_deref()),
        )
        .await;
        match exchanged {
            Ok(Ok(())) => Ok(owner),
            Ok(Err(e)) => Err((
                Some(owner),
                format!("the authorization server did not give a token: {e}"),
            )),
            Err(_) => Err((
                Some(owner),
                format!(
                    "its token endpoint did not answer within {} s",
                    OAUTH_HTTP_TIMEOUT.as_secs()
                ),
            )),
        }
    }
}

async fn authorization(start: Start<'_>) -> Result<OAuthState, String> {
    let mut manager = AuthorizationManager::new_allowing_private_addresses(start.url)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(start.store);
    let mut request = AuthorizationRequest::new(start.redirect_uri).with_client_name("Tap Gateway");
    if !start.client.scopes.is_empty() {
        request = request.with_scopes(start.client.scopes.iter().cloned());
    } else {
        request = request.with_initial_scope_selection();
    }
    if let Some(id) = &start.client.client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(secret) = &start.client.client_secret {
        request = request.with_client_secret(secret);
    }
    if let Some(url) = &start.client.client_metadata_url {
        request = request.with_client_metadata_url(url);
    }
    if let Some(challenge) = start.challenge {
        request = request.with_challenge(challenge);
    }
    let mut flow = OAuthState::Unauthorized(manager);
    flow.start_authorization(request)
        .await
        .map_err(|e| describe(&e))?;
    Ok(flow)
}

/// rmcp's error, in words for the user.
pub(crate) fn describe(e: &rmcp::transport::auth::AuthError) -> String {
    use rmcp::transport::auth::AuthError;
    match e {
        AuthError::NoAuthorizationSupport => {
            "the server does not say where to sign in (no OAuth metadata was found)".into()
        }
        other => other.to_string(),
    }
}

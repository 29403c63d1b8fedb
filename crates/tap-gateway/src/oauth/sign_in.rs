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
pub(crate) struct SignIns<K, F = OAuthState> {
    pending: Mutex<HashMap<String, Pending<K, F>>>,
    /// Owners whose callback came and whose code is being exchanged: still pending, so
    /// nobody sees "no sign-in, no token" between the two.
    finishing: Mutex<Vec<K>>,
}

struct Pending<K, F> {
    owner: K,
    flow: F,
    until: Instant,
}

/// A started authorization that a callback's code finishes: rmcp's `OAuthState` (which
/// checks `state` against its PKCE verifier, exchanges the code and stores the tokens).
pub(crate) trait Flow: Send {
    fn finish<'a>(
        &'a mut self,
        code: &'a str,
        state: &'a str,
        iss: Option<&'a str>,
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>>;
}

impl Flow for OAuthState {
    fn finish<'a>(
        &'a mut self,
        code: &'a str,
        state: &'a str,
        iss: Option<&'a str>,
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.handle_callback_with_issuer(code, state, iss)
                .await
                .map_err(|e| e.to_string())
        })
    }
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

impl<K: Clone + PartialEq + Send> SignIns<K, OAuthState> {
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
        let until = self.wait_for_browser(owner, state, flow)?;
        Ok((url, until))
    }
}

impl<K: Clone + PartialEq + Send, F: Flow> SignIns<K, F> {
    pub fn new() -> Self {
        SignIns {
            pending: Mutex::new(HashMap::new()),
            finishing: Mutex::new(Vec::new()),
        }
    }

    /// Whether `owner` has a sign-in waiting for the browser.
    pub fn is_pending(&self, owner: &K) -> bool {
        let now = Instant::now();
        let pending = self.pending.lock().unwrap();
        pending.values().any(|p| &p.owner == owner && p.until > now)
            || self.finishing.lock().unwrap().contains(owner)
    }

    /// `owner`'s finished sign-in is no longer pending (see [`SignIns::finish`]).
    pub fn done(&self, owner: &K) {
        let mut finishing = self.finishing.lock().unwrap();
        if let Some(at) = finishing.iter().position(|o| o == owner) {
            finishing.remove(at);
        }
    }

    /// Forgets `owner`'s waiting sign-in (signed out, removed).
    pub fn cancel(&self, owner: &K) {
        self.pending
            .lock()
            .unwrap()
            .retain(|_, p| &p.owner != owner);
    }

    /// Keeps `flow` (whose authorization URL carries `state`) until its callback comes or
    /// [`SIGN_IN_WINDOW`] passes; replaces `owner`'s earlier one. Returns when it expires.
    pub fn wait_for_browser(&self, owner: K, state: String, flow: F) -> Result<SystemTime, String> {
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
        Ok(SystemTime::now() + SIGN_IN_WINDOW)
    }

    /// Finishes the sign-in the callback belongs to: exchanges the code and stores the
    /// tokens. `Ok`: whose it was. `Err((owner, why))`: refused; `owner` when it was a
    /// known sign-in (it is over either way: a `state` is good once). A known owner stays
    /// pending until [`SignIns::done`], once the caller has said how it ended.
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
        self.finishing.lock().unwrap().push(owner.clone());
        let exchanged = tokio::time::timeout(
            OAUTH_HTTP_TIMEOUT,
            pending.flow.finish(code, state, callback.iss.as_deref()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow that accepts one code and records what it was given.
    struct Recorded {
        good_code: &'static str,
        seen: std::sync::Arc<Mutex<Vec<String>>>,
    }

    impl Flow for Recorded {
        fn finish<'a>(
            &'a mut self,
            code: &'a str,
            state: &'a str,
            _iss: Option<&'a str>,
        ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
            self.seen.lock().unwrap().push(format!("{state}:{code}"));
            let ok = code == self.good_code;
            Box::pin(async move {
                if ok {
                    Ok(())
                } else {
                    Err("invalid_grant".into())
                }
            })
        }
    }

    fn flow(seen: &std::sync::Arc<Mutex<Vec<String>>>) -> Recorded {
        Recorded {
            good_code: "good",
            seen: seen.clone(),
        }
    }

    fn callback(query: &str) -> Callback {
        Callback::from_query(query)
    }

    #[tokio::test(start_paused = true)]
    async fn a_state_is_good_once_for_its_window_and_its_owner_only() {
        let seen = Default::default();
        let table: SignIns<&str, Recorded> = SignIns::new();
        table
            .wait_for_browser("a", "s1".into(), flow(&seen))
            .unwrap();
        assert!(table.is_pending(&"a") && !table.is_pending(&"b"));

        // Forged: no such state; no flow is asked.
        let (owner, why) = table
            .finish(&callback("state=forged&code=good"))
            .await
            .unwrap_err();
        assert_eq!(owner, None);
        assert!(why.contains("no sign-in is waiting"), "{why}");
        assert!(seen.lock().unwrap().is_empty());

        // The right state; then the same answer again is refused (single use).
        assert_eq!(table.finish(&callback("code=good&state=s1")).await, Ok("a"));
        assert!(table.is_pending(&"a"), "pending until the caller says done");
        table.done(&"a");
        assert!(!table.is_pending(&"a"));
        let (owner, _) = table
            .finish(&callback("code=good&state=s1"))
            .await
            .unwrap_err();
        assert_eq!(owner, None);

        // A code the server refuses (e.g. issued for another server) ends that sign-in.
        table
            .wait_for_browser("a", "s2".into(), flow(&seen))
            .unwrap();
        let (owner, why) = table
            .finish(&callback("code=other&state=s2"))
            .await
            .unwrap_err();
        assert_eq!((owner, why.contains("invalid_grant")), (Some("a"), true));
        table.done(&"a");

        // The authorization server's refusal is said, and the flow is not asked.
        table
            .wait_for_browser("a", "s3".into(), flow(&seen))
            .unwrap();
        let (_, why) = table
            .finish(&callback(
                "state=s3&error=access_denied&error_description=no%20thanks",
            ))
            .await
            .unwrap_err();
        assert!(why.contains("access_denied no thanks"), "{why}");

        // Past the window it is refused, even with the right state and code.
        table
            .wait_for_browser("a", "s4".into(), flow(&seen))
            .unwrap();
        tokio::time::advance(SIGN_IN_WINDOW + std::time::Duration::from_secs(1)).await;
        assert!(!table.is_pending(&"a"));
        let (owner, why) = table
            .finish(&callback("code=good&state=s4"))
            .await
            .unwrap_err();
        assert_eq!(owner, Some("a"));
        assert!(why.contains("expired"), "{why}");
    }

    #[tokio::test(start_paused = true)]
    async fn starting_again_replaces_and_the_table_is_bounded() {
        let seen = Default::default();
        let table: SignIns<String, Recorded> = SignIns::new();
        table
            .wait_for_browser("a".into(), "old".into(), flow(&seen))
            .unwrap();
        table
            .wait_for_browser("a".into(), "new".into(), flow(&seen))
            .unwrap();
        let (owner, _) = table
            .finish(&callback("code=good&state=old"))
            .await
            .unwrap_err();
        assert_eq!(owner, None, "the first one was replaced");
        for i in 1..MAX_PENDING_SIGN_INS {
            table
                .wait_for_browser(format!("s{i}"), format!("st{i}"), flow(&seen))
                .unwrap();
        }
        let why = table
            .wait_for_browser("one-too-many".into(), "x".into(), flow(&seen))
            .unwrap_err();
        assert!(why.contains("already waiting"), "{why}");
        // Expired ones make room.
        tokio::time::advance(SIGN_IN_WINDOW).await;
        table
            .wait_for_browser("later".into(), "y".into(), flow(&seen))
            .unwrap();
        table.cancel(&"later".to_string());
        assert!(!table.is_pending(&"later".to_string()));
    }
}

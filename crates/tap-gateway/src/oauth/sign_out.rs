//! Signing out: the stored tokens are revoked at the authorization server's
//! `revocation_endpoint` (RFC 7009: the refresh token, which ends the grant and its access
//! tokens with it; the access token when there is no refresh token), then forgotten. A server that
//! offers no revocation, or cannot be reached, still has its tokens forgotten: the user
//! asked for them to be gone from this machine, and is told what was not revoked.

use super::vault::UrlStore;
use crate::limits::OAUTH_HTTP_TIMEOUT;
use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationManager, CredentialStore};

/// How the sign-out went, beyond "the tokens are forgotten".
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Revoked {
    /// No token was stored.
    NothingStored,
    /// The authorization server revoked them.
    Yes,
    /// Not revoked (the reason); forgotten anyway.
    No(String),
}

/// Revokes (when it can) and forgets the tokens stored for the server at `url`.
/// `client_secret`: the server's pre-registered secret, put in, for the revocation request.
pub(crate) async fn sign_out(
    url: &str,
    store: &UrlStore,
    client_secret: Option<&str>,
) -> Result<Revoked, String> {
    let stored = store.load().await.map_err(|e| e.to_string())?;
    let outcome = match stored
        .as_ref()
        .and_then(|c| c.token_response.as_ref().map(|t| (c, t)))
    {
        None => Revoked::NothingStored,
        Some((creds, token)) => {
            let revoking = revoke(url, &creds.client_id, client_secret, token);
            match tokio::time::timeout(OAUTH_HTTP_TIMEOUT, revoking).await {
                Ok(Ok(())) => Revoked::Yes,
                Ok(Err(why)) => Revoked::No(why),
                Err(_) => Revoked::No(format!(
                    "the authorization server did not answer within {} s",
                    OAUTH_HTTP_TIMEOUT.as_secs()
                )),
            }
        }
    };
    store.clear().await.map_err(|e| e.to_string())?;
    Ok(outcome)
}

async fn revoke(
    url: &str,
    client_id: &str,
    client_secret: Option<&str>,
    token: &rmcp::transport::auth::OAuthTokenResponse,
) -> Result<(), String> {
    let manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .map_err(|e| e.to_string())?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| e.to_string())?
        .metadata;
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
    else {
        return Err("its authorization server offers no revocation".into());
    };
    // RFC 7009 §2.1, written out: the `oauth2` crate refuses any endpoint that is not
    // https, and a loopback authorization server (a local or development one) is http.
    let (value, hint) = match token.refresh_token() {
        Some(r) => (r.secret().clone(), "refresh_token"),
        None => (token.access_token().secret().clone(), "access_token"),
    };
    let mut form = vec![("token", value), ("token_type_hint", hint.to_string())];
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = http.post(endpoint);
    match client_secret {
        // A confidential client authenticates (client_secret_basic, RFC 6749's default).
        Some(secret) => request = request.basic_auth(client_id, Some(secret)),
        None => form.push(("client_id", client_id.to_string())),
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let response = request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    match response.status() {
        // 200 also when the token was already invalid (RFC 7009 §2.2).
        s if s.is_success() => Ok(()),
        s => Err(format!("the authorization server refused to revoke ({s})")),
    }
}

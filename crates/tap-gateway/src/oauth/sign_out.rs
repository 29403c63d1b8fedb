//! Signing out: the stored tokens are revoked at the authorization server's
//! `revocation_endpoint` (RFC 7009, through the `oauth2` crate; the refresh token first,
//! which on most servers ends the access token with it), then forgotten. A server that
//! offers no revocation, or cannot be reached, still has its tokens forgotten: the user
//! asked for them to be gone from this machine, and is told what was not revoked.

use super::vault::UrlStore;
use crate::limits::OAUTH_HTTP_TIMEOUT;
use oauth2::{
    AccessToken, ClientId, ClientSecret, HttpRequest, HttpResponse, RefreshToken, RevocationUrl,
    StandardRevocableToken, TokenResponse,
};
use rmcp::transport::auth::{AuthorizationManager, CredentialStore};
use std::future::Future;
use std::pin::Pin;

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
    let endpoint = RevocationUrl::new(endpoint.to_string()).map_err(|e| e.to_string())?;
    let mut client = oauth2::basic::BasicClient::new(ClientId::new(client_id.to_string()))
        .set_revocation_url(endpoint);
    if let Some(secret) = client_secret {
        client = client.set_client_secret(ClientSecret::new(secret.to_string()));
    }
    let http = Http(
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?,
    );
    let revocable = match token.refresh_token() {
        Some(r) => StandardRevocableToken::RefreshToken(RefreshToken::new(r.secret().clone())),
        None => StandardRevocableToken::AccessToken(AccessToken::new(
            token.access_token().secret().clone(),
        )),
    };
    client
        .revoke_token(revocable)
        .map_err(|e| e.to_string())?
        .request_async(&http)
        .await
        .map_err(|e| format!("the authorization server refused to revoke: {e}"))
}

/// `oauth2`'s HTTP client interface over the reqwest the rest of the gateway uses.
struct Http(reqwest::Client);

impl<'c> oauth2::AsyncHttpClient<'c> for Http {
    type Error = oauth2::HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request).map_err(Box::new)?;
            let response = self.0.execute(request).await.map_err(Box::new)?;
            let mut out = HttpResponse::new(Vec::new());
            *out.status_mut() = response.status();
            *out.headers_mut() = response.headers().clone();
            *out.body_mut() = response.bytes().await.map_err(Box::new)?.to_vec();
            Ok(out)
        })
    }
}

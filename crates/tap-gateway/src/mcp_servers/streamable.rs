//! A Streamable HTTP server's transport: rmcp's client over reqwest, inside rmcp's
//! `AuthClient`. With a stored sign-in (`oauth/vault.rs`) every request carries its access
//! token, refreshed before it expires and once more when the server answers `401`; without
//! one, requests go out as configured (static headers, `${secret:…}` put in) and a `401`
//! becomes "needs sign-in" (`oauth/challenge.rs`), never a restart loop.
//!
//! Resumption (`Last-Event-ID`, the server's `retry`) and the session's re-initialization
//! are rmcp's; the conformance suite's `sse-retry` scenario checks them.

use super::config::ClientSpec;
use super::server::Server;
use crate::limits::{MCP_HTTP_MAX_REDIRECTS, OAUTH_HTTP_TIMEOUT};
use crate::state::Core;
use axum::http::HeaderMap;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use std::collections::HashMap;

pub(super) type Transport = StreamableHttpClientTransport<AuthClient<reqwest::Client>>;

/// The transport to the server at `url`, with its sign-in when one is stored.
pub(super) async fn transport(
    core: &Core,
    server: &Server,
    url: &str,
    headers: HeaderMap,
    oauth: Option<&ClientSpec>,
) -> Result<Transport, String> {
    let store = server.auth.vault.store(url);
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .map_err(|e| format!("its URL cannot be used: {e}"))?;
    manager.set_credential_store(store.clone());
    let signed_in = store
        .has_token()
        .await
        .map_err(|e| format!("its stored sign-in could not be read: {e}"))?;
    if signed_in {
        // Refreshing needs the token endpoint: discovery again, bounded.
        match tokio::time::timeout(OAUTH_HTTP_TIMEOUT, manager.initialize_from_store()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                return Err(format!(
                    "its authorization server could not be reached: {e}"
                ))
            }
            Err(_) => {
                return Err(format!(
                    "its authorization server did not answer within {} s",
                    OAUTH_HTTP_TIMEOUT.as_secs()
                ))
            }
        }
        // A pre-registered confidential client authenticates its refreshes.
        if let Some(ClientSpec {
            client_id: Some(id),
            client_secret: Some(_),
            ..
        }) = oauth
        {
            let secret = server.auth.client_secret(core, oauth).await?;
            let mut config = OAuthClientConfig::new(id.clone(), server.auth.redirect_uri());
            if let Some(secret) = secret {
                config = config.with_client_secret(secret);
            }
            manager
                .configure_client(config)
                .map_err(|e| format!("its client could not be configured: {e}"))?;
        }
    }
    let custom: HashMap<_, _> = headers
        .into_iter()
        .filter_map(|(k, v)| Some((k?, v)))
        .collect();
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    // Connections are kept and reused: a new TCP connection (and TLS handshake) per call
    // cost a remote server's every call a round trip and the gateway 150 µs of CPU
    // (docs/performance-log.md, runs 39 and 40). rmcp's own client turns pooling off
    // against delayed-ACK stalls on a connection whose last answer was not read to its
    // end; rmcp reads every JSON answer and SSE stream through.
    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    Ok(StreamableHttpClientTransport::with_client(
        AuthClient::new(http, manager),
        config,
    ))
}

/// Follows redirects on the first request's origin only: a token must never be sent to
/// another host because the server said so.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() > MCP_HTTP_MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if same {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

//! Sign-in for the hub's remote servers: one vault and one table of started sign-ins per
//! gateway (`oauth/`), what `mcpServers.list` says about a server's sign-in, and the three
//! things the user does: sign in, come back from the browser, sign out.
//!
//! A sign-in belongs to the server's URL, so every session that sees the server (and every
//! session's copy of a project server) is served by one sign-in; finishing it restarts the
//! server, which then reads the new tokens.

use super::config::{ClientSpec, Transport};
use super::server::Server;
use crate::error::Error;
use crate::oauth::sign_in::{SignIns, Start};
use crate::oauth::sign_out::{self, Revoked};
use crate::oauth::vault::Vault;
use crate::oauth::{Callback, CALLBACK_PATH};
use crate::state::Core;
use std::sync::Arc;
use tap_protocol::mcp_servers::{McpServerRef, McpSignIn, McpSignInStart};
use tap_protocol::ErrorCode;

/// Whose sign-in: a user server by name, a project server by name and session.
pub(crate) type Owner = McpServerRef;

/// The gateway's sign-ins.
pub(crate) struct RemoteAuth {
    pub vault: Arc<Vault>,
    pub sign_ins: SignIns<Owner>,
    /// `http://127.0.0.1:<port>/oauth/callback`.
    redirect_uri: String,
}

impl RemoteAuth {
    pub fn new(core: &Core) -> Arc<Self> {
        Arc::new(RemoteAuth {
            vault: Vault::new(core.config.data_dir.clone(), core.config.secrets_keyring),
            sign_ins: SignIns::new(),
            redirect_uri: format!("http://{}{CALLBACK_PATH}", core.address),
        })
    }

    pub fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    /// The `"oauth"` entry's client secret with its `${secret:…}` put in.
    pub async fn client_secret(
        &self,
        core: &Core,
        oauth: Option<&ClientSpec>,
    ) -> Result<Option<String>, String> {
        let Some(value) = oauth.and_then(|o| o.client_secret.clone()) else {
            return Ok(None);
        };
        let (home, keyring) = (&core.config.data_dir, core.config.secrets_keyring);
        let pairs = [("clientSecret".to_string(), value)];
        let resolved = super::secrets::resolve(home, keyring, "oauth", &pairs).await?;
        Ok(resolved.into_iter().next().map(|(_, v)| v))
    }
}

/// The server's owner key.
pub(crate) fn owner(server: &Server) -> Owner {
    McpServerRef {
        name: server.spec.name.clone(),
        session_id: server.session_id.clone(),
    }
}

/// What `mcpServers.list` says about `server`'s sign-in: `None` for a server that never
/// asked for one and has none stored.
pub(crate) fn summary(server: &Server) -> Option<McpSignIn> {
    let Transport::Remote {
        url, sse: false, ..
    } = &server.spec.transport
    else {
        return None;
    };
    let stored = server.auth.vault.summary(url);
    let pending = server.auth.sign_ins.is_pending(&owner(server));
    let reason = server.status.lock().unwrap().sign_in_reason.clone();
    if stored.is_none() && !pending && reason.is_none() {
        return None;
    }
    Some(McpSignIn {
        signed_in: stored.is_some(),
        pending,
        scopes: stored
            .as_ref()
            .map(|s| s.scopes.clone())
            .unwrap_or_default(),
        expires_at: stored.as_ref().and_then(|s| s.expires_at).map(|secs| {
            crate::time::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        }),
        issuer: stored.and_then(|s| s.issuer),
        reason,
    })
}

fn remote(server: &Server) -> Result<(&str, Option<&ClientSpec>), Error> {
    match &server.spec.transport {
        Transport::Remote {
            sse: false,
            url,
            oauth,
            ..
        } => Ok((url, oauth.as_ref())),
        Transport::Remote { sse: true, .. } => Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "MCP server '{}' uses the legacy HTTP+SSE transport, which has no OAuth sign-in; give it a static key with -H 'Authorization: @secret'",
                server.spec.name
            ),
        )),
        Transport::Stdio { .. } => Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "MCP server '{}' is a local (stdio) server; only remote servers are signed in to",
                server.spec.name
            ),
        )),
    }
}

/// Starts a sign-in: the page to open in the user's browser.
pub(crate) async fn sign_in(core: &Core, server: &Arc<Server>) -> Result<McpSignInStart, Error> {
    let (url, oauth) = remote(server)?;
    let auth = &server.auth;
    let secret = auth
        .client_secret(core, oauth)
        .await
        .map_err(|why| Error::new(ErrorCode::NotFound, why))?;
    let client = ClientSpec {
        client_secret: secret,
        ..oauth.cloned().unwrap_or_default()
    };
    let challenge = server
        .status
        .lock()
        .unwrap()
        .challenge
        .as_ref()
        .map(|c| c.header.clone());
    let start = Start {
        url,
        client: &client,
        challenge: challenge.as_deref(),
        redirect_uri: auth.redirect_uri(),
        store: auth.vault.store(url),
    };
    let started = auth.sign_ins.start(owner(server), start).await;
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    let (url, until) = started.map_err(|why| {
        Error::new(
            ErrorCode::Other("SIGN_IN_FAILED".into()),
            format!("cannot sign in to MCP server '{}': {why}", server.spec.name),
        )
    })?;
    tracing::info!(target: super::connect::LOG_TARGET, server = %server.spec.name, "sign-in started; waiting for the browser");
    Ok(McpSignInStart {
        url,
        expires_at: crate::time::rfc3339(until),
    })
}

/// Ends the sign-in the browser came back for. `Ok`: the server's name (it restarts with
/// its new tokens). `Err`: why it was refused, for the page the browser shows.
pub(crate) async fn finish(
    core: &Core,
    auth: &RemoteAuth,
    find: impl Fn(&Owner) -> Option<Arc<Server>>,
    callback: &Callback,
) -> Result<String, String> {
    let outcome = auth.sign_ins.finish(callback).await;
    let result = match outcome {
        Ok(owner) => {
            if let Some(server) = find(&owner) {
                server.update(|s| {
                    s.sign_in_reason = None;
                    s.challenge = None;
                });
                server.restart.notify_one();
                tracing::info!(target: super::connect::LOG_TARGET, server = %owner.name, "signed in");
            }
            auth.sign_ins.done(&owner);
            Ok(owner.name)
        }
        Err((owner, why)) => {
            if let Some(server) = owner.as_ref().and_then(&find) {
                server
                    .update(|s| s.sign_in_reason = Some(format!("the last sign-in failed: {why}")));
            }
            if let Some(owner) = &owner {
                auth.sign_ins.done(owner);
            }
            tracing::warn!(target: super::connect::LOG_TARGET, server = owner.as_ref().map(|o| o.name.as_str()), error = %why, "a sign-in callback was refused");
            Err(why)
        }
    };
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    result
}

/// Revokes and forgets the server's tokens; it restarts and waits for a new sign-in.
pub(crate) async fn sign_out(core: &Core, server: &Arc<Server>) -> Result<(), Error> {
    let (url, oauth) = remote(server)?;
    let auth = &server.auth;
    auth.sign_ins.cancel(&owner(server));
    let secret = auth.client_secret(core, oauth).await.ok().flatten();
    let revoked = sign_out::sign_out(url, &auth.vault.store(url), secret.as_deref())
        .await
        .map_err(|why| {
            Error::new(
                ErrorCode::Internal,
                format!(
                    "cannot forget the sign-in of MCP server '{}': {why}",
                    server.spec.name
                ),
            )
        })?;
    let name = &server.spec.name;
    match &revoked {
        Revoked::Yes => {
            tracing::info!(target: super::connect::LOG_TARGET, server = %name, "signed out; its tokens were revoked")
        }
        Revoked::NothingStored => {
            tracing::info!(target: super::connect::LOG_TARGET, server = %name, "signed out; no token was stored")
        }
        Revoked::No(why) => {
            tracing::warn!(target: super::connect::LOG_TARGET, server = %name, why = %why, "signed out; its tokens were forgotten but not revoked")
        }
    }
    let reason = match revoked {
        Revoked::No(why) => format!("signed out; its tokens were forgotten but not revoked: {why}"),
        _ => "signed out".to_string(),
    };
    server.update(|s| s.sign_in_reason = Some(reason));
    server.restart.notify_one();
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    Ok(())
}

//! Binding a connection: open the socket, authenticate, pick the session (waiting for one),
//! and `hello` until the gateway answers `hello.ack`. After a drop, the previous binding is
//! asked back with its reconnect token; the gateway's answer says whether it came back.

use crate::discovery::Endpoint;
use crate::state::Shared;
use crate::types::{Error, SessionChoice};
use futures_util::{SinkExt, StreamExt};
use std::path::PathBuf;
use tap_protocol::provider::{Auth, GatewayMessage, Hello, HelloAck, ProviderMessage, SessionInfo};
use tap_protocol::ErrorCode;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The binding a reconnect asks back.
#[derive(Clone)]
pub(crate) struct Previous {
    pub session_id: String,
    pub provider_id: String,
    /// `None` once the window passed (or the session ended): bind afresh.
    pub token: Option<String>,
}

/// A bound connection and what its `hello.ack` said.
pub(crate) struct Bound {
    pub ws: Ws,
    pub provider_id: String,
    pub session_id: String,
    pub reconnect_token: Option<String>,
    pub persist_dir: Option<PathBuf>,
    /// The gateway gave the previous binding back: the same provider id.
    pub restored: bool,
}

fn unreachable(url: &str, why: impl std::fmt::Display) -> Error {
    Error::Unreachable {
        url: url.to_string(),
        why: why.to_string(),
    }
}

fn closed(url: &str) -> Error {
    unreachable(url, "the gateway closed the connection")
}

pub(crate) async fn send(
    ws: &mut Ws,
    msg: &ProviderMessage,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    let text = serde_json::to_string(msg).expect("protocol messages serialize");
    ws.send(Message::text(text)).await
}

/// The next gateway message; `None` when the socket ended.
pub(crate) async fn recv(ws: &mut Ws) -> Option<GatewayMessage> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => {
                match tap_protocol::decode::<GatewayMessage>(t.as_bytes(), GatewayMessage::TYPES) {
                    Ok(m) => return Some(m),
                    // A message this SDK does not know: a newer gateway; skip it.
                    Err(e) => tracing::debug!(error = %e.message(), "gateway message skipped"),
                }
            }
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

pub(crate) fn choose(choice: &SessionChoice, sessions: &[SessionInfo]) -> Option<String> {
    match choice {
        SessionChoice::All => Some("all".into()),
        SessionChoice::Foreground => sessions
            .iter()
            .find(|s| s.foreground == Some(true))
            .or(sessions.first().filter(|_| sessions.len() == 1))
            .map(|s| s.id.clone()),
        SessionChoice::Named(name) => sessions
            .iter()
            .find(|s| &s.id == name || s.label.as_deref() == Some(name))
            .map(|s| s.id.clone()),
        SessionChoice::Chooser(f) => f(sessions),
    }
}

fn hello(shared: &Shared, session: String, reconnect_token: Option<String>) -> ProviderMessage {
    let c = &shared.config;
    let d = shared.decl();
    ProviderMessage::Hello(Box::new(Hello {
        name: c.name.clone(),
        protocol_version: 2,
        session: Some(session),
        instance: c.instance.clone(),
        reconnect_token,
        startup_context: c.startup_context.clone(),
        metadata: c.metadata.clone(),
        tools: Some(d.tools.iter().map(|t| t.def.clone()).collect()),
        hooks: d.hooks(),
        subscribe: (!c.subscribe.is_empty()).then(|| c.subscribe.clone()),
        context: d.context.clone(),
        concurrency: c.concurrency.clone(),
    }))
}

/// Connects, authenticates, picks the session (waiting for one) and binds. With
/// `previous`, asks for that binding back while its session is still listed; if the gateway
/// refuses that `hello`, binds afresh on the same socket at once.
pub(crate) async fn bind(
    shared: &Shared,
    ep: &Endpoint,
    mut previous: Option<Previous>,
) -> Result<Bound, Error> {
    let url = ep.url.as_str();
    // Nagle off: a push and its barrier, a progress and its result are small frames sent
    // back to back, and Nagle would hold the second until the first is acknowledged (up to
    // the peer's delayed-ACK time, 40 ms on Linux).
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
        .await
        .map_err(|e| unreachable(url, e))?;
    let auth = ProviderMessage::Auth(Auth {
        token: Some(ep.token.clone()),
        ..Default::default()
    });
    send(&mut ws, &auth)
        .await
        .map_err(|e| unreachable(url, e))?;
    let mut sessions = loop {
        match recv(&mut ws).await {
            Some(GatewayMessage::Sessions(s)) => break s.active,
            Some(GatewayMessage::Error(e)) => return Err(refused(e.code, e.message)),
            Some(_) => continue,
            None => return Err(closed(url)),
        }
    };
    let previous_id = previous.as_ref().map(|p| p.provider_id.clone());
    loop {
        // The token restores a binding to its own session only: one that ended is gone.
        let restore = previous.take().and_then(|p| {
            let listed = p.session_id == "all" || sessions.iter().any(|s| s.id == p.session_id);
            Some((p.session_id, p.token.filter(|_| listed)?))
        });
        let (session, token) = match restore {
            Some((session, token)) => (session, Some(token)),
            None => (
                wait_for_session(shared, &mut ws, url, &mut sessions).await?,
                None,
            ),
        };
        let with_token = token.is_some();
        send(&mut ws, &hello(shared, session.clone(), token))
            .await
            .map_err(|e| unreachable(url, e))?;
        loop {
            match recv(&mut ws).await {
                Some(GatewayMessage::HelloAck(ack)) => {
                    return Ok(bound(ws, ack, session, previous_id.as_deref()))
                }
                Some(GatewayMessage::SessionsUpdated(s)) => sessions = s.active,
                // The token was refused (its session ended meanwhile, …): a fresh `hello`
                // now, rather than the same refusal until the window closes.
                Some(GatewayMessage::Error(e)) if with_token => {
                    tracing::debug!(code = %e.code, message = %e.message, "reconnect refused; binding afresh");
                    sessions.retain(|s| Some(&s.id) != e.session_id.as_ref());
                    break;
                }
                Some(GatewayMessage::Error(e)) => return Err(refused(e.code, e.message)),
                Some(_) => continue,
                None => return Err(closed(url)),
            }
        }
    }
}

fn bound(ws: Ws, ack: HelloAck, asked: String, previous_id: Option<&str>) -> Bound {
    Bound {
        ws,
        restored: previous_id == Some(ack.provider_id.as_str()),
        session_id: ack.session_id.unwrap_or(asked),
        provider_id: ack.provider_id,
        reconnect_token: ack.reconnect_token,
        persist_dir: ack.persist_dir.map(PathBuf::from),
    }
}

/// The session the configured choice picks, waiting for `sessions.updated` until one fits.
async fn wait_for_session(
    shared: &Shared,
    ws: &mut Ws,
    url: &str,
    sessions: &mut Vec<SessionInfo>,
) -> Result<String, Error> {
    loop {
        if let Some(id) = choose(&shared.config.session, sessions) {
            return Ok(id);
        }
        match recv(ws).await {
            Some(GatewayMessage::SessionsUpdated(s)) => *sessions = s.active,
            Some(_) => continue,
            None => return Err(closed(url)),
        }
    }
}

pub(crate) fn refused(code: ErrorCode, message: String) -> Error {
    Error::Refused { code, message }
}

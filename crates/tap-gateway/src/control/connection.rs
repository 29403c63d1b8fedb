//! One control connection: `auth` first, then requests answered in order and engine
//! events forwarded with a per-connection `seq`.
//!
//! The task owns the socket and its event receiver, and writes directly: a client that
//! stops reading stalls only itself, its receiver falls behind the broadcast buffer, and
//! it is told to `resync` once it reads again.

use super::dispatch;
use super::follow::Follows;
use crate::auth::tokens;
use crate::diagnostics::Limit;
use crate::events::GatewayEvent;
use crate::gateway::Gateway;
use crate::socket::upgrade::WsStream;
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use tap_protocol::control::{
    AuthParams, ControlCall, ControlError, ControlEvent, ControlRequest, EventFrame, ServerFrame,
};
use tap_protocol::limits::AUTH_TIMEOUT;
use tap_protocol::ErrorCode;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::broadcast::Receiver;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Bytes, Message};

/// A frame the client does not take within this long means it stopped reading: the
/// connection is dropped rather than held open forever.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) async fn serve(gw: Gateway, mut ws: WsStream, remote: SocketAddr) {
    let stopping = gw.core().stopping.clone();
    let auth_id = tokio::select! {
        _ = stopping.cancelled() => {
            close(&mut ws, CloseCode::Away).await;
            return;
        }
        id = authenticate(&gw, &mut ws, remote) => id,
    };
    let Some(auth_id) = auth_id else { return };
    ws.get_mut().lift_budget();
    tracing::info!(%remote, "control client authenticated");
    let mut conn = Conn {
        events: gw.subscribe(),
        gw,
        ws,
        seq: 0,
        follows: Follows::default(),
    };
    // Subscribed before the snapshot is taken, so no change after it can be missed.
    if conn
        .answer(auth_id, ControlCall::Snapshot(Default::default()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let step = tokio::select! {
            biased;
            _ = stopping.cancelled() => {
                close(&mut conn.ws, CloseCode::Away).await;
                break;
            }
            event = conn.events.recv() => match event {
                Ok(e) => match to_control(e, &conn.follows) {
                    Some(e) => conn.send_event(e).await,
                    None => Ok(()),
                },
                Err(RecvError::Lagged(missed)) => {
                    tracing::info!(%remote, missed, "control client fell behind; sending resync");
                    conn.gw.core().diagnostics.limit_hit(Limit::ControlLag);
                    conn.send_event(ControlEvent::Resync { reason: "lagged".into() }).await
                }
                // The sender lives as long as the gateway.
                Err(RecvError::Closed) => break,
            },
            frame = next_frame(&mut conn.ws) => match frame {
                Some(bytes) => conn.on_frame(&bytes).await,
                None => break,
            },
            // After the client's requests: a flood of followed events must not keep an
            // `unfollow` waiting.
            event = conn.follows.next() => conn.send_event(event).await,
        };
        if step.is_err() {
            break;
        }
    }
    tracing::debug!(%remote, "control client disconnected");
}

/// Waits for the first request, which must be `auth` with the control token. On success
/// returns its id; on failure the client gets `AUTH_FAILED` and the socket is closed.
async fn authenticate(gw: &Gateway, ws: &mut WsStream, remote: SocketAddr) -> Option<String> {
    let frame = match tokio::time::timeout(AUTH_TIMEOUT, next_frame(ws)).await {
        Ok(Some(frame)) => frame,
        // Closed, broken, or past the pre-auth byte budget.
        Ok(None) => return None,
        Err(_) => {
            gw.core().diagnostics.limit_hit(Limit::AuthTimeout);
            refuse(ws, None, "No 'auth' within 10 seconds").await;
            return None;
        }
    };
    let (id, why) = match ControlRequest::decode(&frame) {
        Ok(ControlRequest {
            id,
            call: ControlCall::Auth(AuthParams { token }),
        }) => {
            if tokens::matches(&token, gw.control_token()) {
                return Some(id);
            }
            (Some(id), "Wrong control token".to_string())
        }
        Ok(req) => (
            Some(req.id),
            format!(
                "The first request must be 'auth', not '{}'",
                req.call.method()
            ),
        ),
        Err(e) => (
            e.id,
            format!("The first request must be 'auth' ({})", e.error.message),
        ),
    };
    tracing::info!(%remote, why, "control client refused");
    refuse(ws, id, why).await;
    None
}

/// `AUTH_FAILED`, then close.
async fn refuse(ws: &mut WsStream, id: Option<String>, why: impl Into<String>) {
    let frame = ServerFrame::error(id, ControlError::new(ErrorCode::AuthFailed, why));
    let _ = tokio::time::timeout(WRITE_TIMEOUT, ws.send(Message::text(frame.to_text()))).await;
    close(ws, CloseCode::Policy).await;
}

/// Best effort, bounded: the peer may be the reason we are closing.
async fn close(ws: &mut WsStream, code: CloseCode) {
    let frame = CloseFrame {
        code,
        reason: "".into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(Some(frame))).await;
}

/// The next data frame; `None` once the socket is closed or broken. Control frames
/// (ping, pong) are answered by tungstenite and skipped. Cancel-safe.
async fn next_frame(ws: &mut WsStream) -> Option<Bytes> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return Some(t.into()),
            Ok(Message::Binary(b)) => return Some(b),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// The control event for an engine event; `None` for one this connection does not follow.
fn to_control(event: GatewayEvent, follows: &Follows) -> Option<ControlEvent> {
    Some(match event {
        GatewayEvent::PairingChanged(pairing) => ControlEvent::PairingChanged { pairing },
        GatewayEvent::PairingRemoved { id, reason } => ControlEvent::PairingRemoved { id, reason },
        GatewayEvent::StatusChanged => ControlEvent::StatusChanged,
        GatewayEvent::DiagnosticsChanged if follows.diagnostics => ControlEvent::DiagnosticsChanged,
        GatewayEvent::DiagnosticsChanged => return None,
        GatewayEvent::SettingsChanged(settings) => ControlEvent::SettingsChanged { settings },
    })
}

/// The socket is gone (or too slow); end the connection.
struct Gone;

struct Conn {
    gw: Gateway,
    ws: WsStream,
    events: Receiver<GatewayEvent>,
    /// The seq of the last event sent; 0 before the first.
    seq: u64,
    /// The opt-in topics (`*.follow`) and their receivers.
    follows: Follows,
}

impl Conn {
    async fn on_frame(&mut self, frame: &[u8]) -> Result<(), Gone> {
        match ControlRequest::decode(frame) {
            Ok(req) => self.answer(req.id, req.call).await,
            Err(e) => self.send(ServerFrame::error(e.id, e.error)).await,
        }
    }

    async fn answer(&mut self, id: String, call: ControlCall) -> Result<(), Gone> {
        if matches!(call, ControlCall::Snapshot(_)) {
            self.discard_queued_events();
        }
        let frame = match dispatch::call(&self.gw, call, self.seq, &mut self.follows) {
            Ok(result) => ServerFrame::result(id, result),
            Err(e) => ServerFrame::error(Some(id), e),
        };
        self.send(frame).await
    }

    /// Before a snapshot: events already queued describe changes the snapshot is about to
    /// include (engine parts emit after the change is visible), so they are dropped
    /// unnumbered, and every event after the snapshot is newer than it. This also clears
    /// a lag: a client that got `resync` and asked for a snapshot starts over clean.
    fn discard_queued_events(&mut self) {
        while let Ok(_) | Err(TryRecvError::Lagged(_)) = self.events.try_recv() {}
    }

    async fn send_event(&mut self, event: ControlEvent) -> Result<(), Gone> {
        self.seq += 1;
        let seq = self.seq;
        self.send(ServerFrame::Event(EventFrame { seq, event }))
            .await
    }

    async fn send(&mut self, frame: ServerFrame) -> Result<(), Gone> {
        let msg = Message::text(frame.to_text());
        match tokio::time::timeout(WRITE_TIMEOUT, self.ws.send(msg)).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(Gone),
        }
    }
}

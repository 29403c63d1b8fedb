//! One control connection, as a handler on the one connection loop: `auth` first, then
//! requests answered in order and engine events forwarded with a per-connection `seq`.
//!
//! Engine events are pulled only while nothing is queued for the client, and a batch the
//! client does not take within `CONTROL_WRITE_TIMEOUT` ends the connection: a client that
//! stops reading stalls only itself, its receiver falls behind the broadcast buffer, and it
//! is told to `resync` once it reads again.

use super::dispatch::Methods;
use super::follow::Follows;
use super::playground::{Frame, Playground};
use crate::accept::Kind;
use crate::auth::tokens;
use crate::diagnostics::Limit;
use crate::events::GatewayEvent;
use crate::gateway::Gateway;
use crate::socket::conn::auth_timeout_message;
use crate::socket::conn::{Handler, Step};
use crate::socket::outbound::OutSender;
use crate::socket::upgrade::WsStream;
use std::net::SocketAddr;
use tap_protocol::control::{
    AuthParams, ControlCall, ControlError, ControlEvent, ControlRequest, EventFrame, ServerFrame,
};
use tap_protocol::ErrorCode;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::broadcast::Receiver;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

/// Serves one control socket until it closes. Not an `async fn`, so that the socket and
/// the connection are not kept twice (see `socket::conn::run`).
pub(super) fn serve(
    gw: Gateway,
    ws: WsStream,
    remote: SocketAddr,
) -> impl std::future::Future<Output = ()> + Send {
    let core = gw.core().clone();
    let kill = core.stopping.child_token();
    let (out, rx) = core.outbound_queue(Kind::Control, kill.clone());
    let conn = ControlConn::new(gw, remote, out);
    let socket = core.socket(ws, Kind::Control, remote, rx, kill);
    futures_util::FutureExt::map(
        crate::socket::conn::run(socket, conn),
        move |()| tracing::debug!(%remote, "control client disconnected"),
    )
}

pub(crate) struct ControlConn {
    gw: Gateway,
    remote: SocketAddr,
    out: OutSender,
    /// Engine events; subscribed once authenticated.
    events: Option<Receiver<GatewayEvent>>,
    /// The seq of the last event sent; 0 before the first.
    seq: u64,
    /// The opt-in topics (`*.follow`) and their receivers.
    follows: Follows,
    /// Sessions held and calls in flight in the tool playground; dropped with the
    /// connection, which releases the sessions and cancels the calls.
    playground: Playground,
}

impl Handler for ControlConn {
    fn on_frame(&mut self, frame: &[u8]) -> Step {
        if self.events.is_none() {
            return self.authenticate(frame);
        }
        match ControlRequest::decode(frame) {
            Ok(req) => self.answer(req.id, req.call),
            Err(e) => self.send(ServerFrame::error(e.id, e.error)),
        }
        Step::Continue
    }

    fn on_auth_deadline(&mut self) {
        self.gw.core().diagnostics.limit_hit(Limit::AuthTimeout);
        self.refuse(None, auth_timeout_message());
    }

    async fn background(&mut self) -> Step {
        let Some(events) = self.events.as_mut() else {
            return std::future::pending().await;
        };
        let event = tokio::select! {
            biased;
            event = events.recv() => match event {
                Ok(e) => match to_control(e, &self.follows) {
                    Some(e) => e,
                    None => return Step::Continue,
                },
                Err(RecvError::Lagged(missed)) => {
                    tracing::info!(remote = %self.remote, missed, "control client fell behind; sending resync");
                    self.gw.core().diagnostics.limit_hit(Limit::ControlLag);
                    ControlEvent::Resync { reason: "lagged".into() }
                }
                // The sender lives as long as the gateway.
                Err(RecvError::Closed) => return Step::Close(CloseCode::Away, "gateway stopping"),
            },
            // A playground call's progress and answer: the user waits for these.
            frame = self.playground.next() => match frame {
                Frame::Event(e) => e,
                Frame::Response(r) => {
                    self.send(r);
                    return Step::Continue;
                }
            },
            // After the engine's own events: a flood of followed events must not hold back
            // a pairing request.
            event = self.follows.next() => event,
        };
        self.send_event(event);
        Step::Continue
    }
}

impl ControlConn {
    /// A connection that has not authenticated yet, writing into `out` (the socket's
    /// queue; `crate::fuzzing` reads it directly).
    pub(crate) fn new(gw: Gateway, remote: SocketAddr, out: OutSender) -> Self {
        Self {
            gw,
            remote,
            out,
            events: None,
            seq: 0,
            follows: Follows::default(),
            playground: Playground::default(),
        }
    }

    /// The first request must be `auth` with the control token: answered with a snapshot,
    /// after which events flow. Anything else gets `AUTH_FAILED` and the socket closes.
    fn authenticate(&mut self, frame: &[u8]) -> Step {
        let (id, why) = match ControlRequest::decode(frame) {
            Ok(ControlRequest {
                id,
                call: ControlCall::Auth(AuthParams { token }),
            }) => {
                if tokens::matches(&token, self.gw.control_token()) {
                    tracing::info!(remote = %self.remote, "control client authenticated");
                    // Subscribed before the snapshot is taken, so no change after it can
                    // be missed.
                    self.events = Some(self.gw.subscribe());
                    self.answer(id, ControlCall::Snapshot(Default::default()));
                    return Step::Authed;
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
        tracing::info!(remote = %self.remote, why, "control client refused");
        self.refuse(id, why);
        Step::Close(CloseCode::Policy, "authentication failed")
    }

    /// `AUTH_FAILED`; the connection closes after it.
    fn refuse(&self, id: Option<String>, why: impl Into<String>) {
        self.send(ServerFrame::error(
            id,
            ControlError::new(ErrorCode::AuthFailed, why),
        ));
    }

    fn answer(&mut self, id: String, call: ControlCall) {
        if matches!(call, ControlCall::Snapshot(_)) {
            self.discard_queued_events();
        }
        let mut methods = Methods {
            gw: &self.gw,
            request_id: &id,
            seq: self.seq,
            follows: &mut self.follows,
            playground: &mut self.playground,
        };
        let frame = match call.dispatch(&mut methods) {
            Ok(Some(result)) => ServerFrame::result(id, result),
            // An `@later` method: its task answers through the playground's channel.
            Ok(None) => return,
            Err(e) => ServerFrame::error(Some(id), e),
        };
        self.send(frame);
    }

    /// Before a snapshot: events already queued describe changes the snapshot is about to
    /// include (engine parts emit after the change is visible), so they are dropped
    /// unnumbered, and every event after the snapshot is newer than it. This also clears
    /// a lag: a client that got `resync` and asked for a snapshot starts over clean.
    fn discard_queued_events(&mut self) {
        if let Some(events) = self.events.as_mut() {
            while let Ok(_) | Err(TryRecvError::Lagged(_)) = events.try_recv() {}
        }
    }

    fn send_event(&mut self, event: ControlEvent) {
        self.seq += 1;
        let seq = self.seq;
        self.send(ServerFrame::Event(EventFrame { seq, event }));
    }

    fn send(&self, frame: ServerFrame) {
        let _ = self.out.send(Message::text(frame.to_text()));
    }
}

/// The control event for an engine event; `None` for one this connection does not follow.
fn to_control(event: GatewayEvent, follows: &Follows) -> Option<ControlEvent> {
    Some(match event {
        GatewayEvent::PairingChanged(pairing) => ControlEvent::PairingChanged { pairing: *pairing },
        GatewayEvent::PairingRemoved { id, reason } => ControlEvent::PairingRemoved { id, reason },
        GatewayEvent::StatusChanged => ControlEvent::StatusChanged,
        GatewayEvent::DiagnosticsChanged if follows.diagnostics => ControlEvent::DiagnosticsChanged,
        GatewayEvent::DiagnosticsChanged => return None,
        GatewayEvent::SettingsChanged(settings) => ControlEvent::SettingsChanged { settings },
        GatewayEvent::PolicyChanged => ControlEvent::PolicyChanged,
        GatewayEvent::ApprovalWaiting(call) => ControlEvent::ApprovalWaiting { call },
        GatewayEvent::ApprovalResolved { id, outcome } => {
            ControlEvent::ApprovalResolved { id, outcome }
        }
    })
}

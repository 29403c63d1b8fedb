//! One provider connection: AwaitAuth (→ AwaitPairing) → AwaitHello → Bound (→ Unbound)
//! → Disconnected, as a handler on the one connection loop (`socket::conn`).
//!
//! Everything else in the gateway talks to the provider through its [`ProviderLink`]
//! queue, so frames leave in the order they were produced and a slow or hostile provider
//! only ever stalls its own task. Handlers never await: each frame is decoded, checked and
//! applied under the state lock, and answers go into the queue.
//!
//! - `auth`, `pairing`: AwaitAuth and AwaitPairing (token auth, `mode: "pair"`).
//! - `hello`: bind and rebind (validate → claim the identity → register → announce);
//!   `all_binding`: the `"all"` binding and `session.ready`.
//! - `push`, `streams`: pushes into the session's streams, `stream.query`.
//! - `updates`: `tools.update`, `hooks.update`, `context.update`, `filter.set` and acks.
//! - `malformed`: results and broken frames (the malformed-result rule); `file_result`.
//! - `teardown`: what a disconnect undoes.

mod all_binding;
mod auth;
mod file_result;
mod hello;
pub(crate) mod local;
mod pairing;
mod push;
mod results;
mod streams;
mod teardown;
mod updates;

use crate::accept::Kind;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::socket::conn::{Handler, Step};
use crate::socket::outbound::OutReceiver;
use crate::socket::upgrade::WsStream;
use crate::state::call_table::CallTable;
use crate::state::link::ProviderLink;
use crate::state::provider_entry::{Phase, Trust};
use crate::state::{Core, State};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use tap_protocol::limits::{MAX_MESSAGE_BYTES, MAX_TOOL_RESULT_BYTES};
use tap_protocol::provider::{ErrorMessage, GatewayMessage, ProviderMessage};
use tap_protocol::{decode, ErrorCode};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection";
// Tokio's clock, like every other timer here, so the rebind window follows a paused test clock.
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The provider said `goodbye` (or withdrew its pairing request).
pub(super) const GOODBYE: Step = Step::Close(CloseCode::Normal, "goodbye");

/// Serves one provider socket until it closes.
///
/// Not an `async fn`, so that the socket and the connection are not kept twice for as long
/// as it lives (see `socket::conn::run`).
pub(crate) fn serve(
    core: Arc<Core>,
    ws: WsStream,
    remote: SocketAddr,
    origin: Option<String>,
) -> impl std::future::Future<Output = ()> + Send {
    let (conn, rx) = ProviderConn::new(core.clone(), remote, origin);
    let socket = core.socket(ws, Kind::Provider, remote, rx, conn.link.kill.clone());
    crate::socket::conn::run(socket, conn)
}

/// One provider connection's state (the socket task's, or an in-process provider's).
pub(crate) struct ProviderConn {
    pub(super) core: Arc<Core>,
    pub(super) remote: SocketAddr,
    /// The upgrade request's `Origin` header (browser providers).
    pub(super) origin: Option<String>,
    pub(crate) link: ProviderLink,
    /// Set once authenticated.
    pub(crate) id: Option<String>,
    /// AwaitPairing: the id of this connection's pending pairing request.
    pub(super) pairing: Option<String>,
    /// AwaitPairing: the request's `pairing.request` span, ended by its outcome.
    pub(super) pairing_span: Option<crate::trace::OpenSpan>,
    /// When recent `hello`s arrived, for the rebind limit.
    pub(super) hellos: VecDeque<Instant>,
    /// Ledger records the queue had no room for; the loop waits for them
    /// ([`Step::Backpressure`]) before reading on.
    pub(super) ledger_backlog: Vec<crate::ledger::Full>,
}

impl Handler for ProviderConn {
    fn on_frame(&mut self, bytes: &[u8]) -> Step {
        ProviderConn::on_frame(self, bytes)
    }

    fn on_auth_deadline(&mut self) {
        self.auth_deadline();
    }

    fn relieve(&mut self) -> impl std::future::Future<Output = ()> + Send {
        self.relieve_ledger()
    }

    fn closing(&mut self) {
        self.disconnect();
    }
}

impl ProviderConn {
    /// A connection that has not authenticated yet, and the receiving end of its bounded
    /// outbound queue (an overflow cancels its kill token: the provider is disconnected).
    pub(crate) fn new(
        core: Arc<Core>,
        remote: SocketAddr,
        origin: Option<String>,
    ) -> (Self, OutReceiver) {
        let kill = core.stopping.child_token();
        let (out, rx) = core.outbound_queue(Kind::Provider, kill.clone());
        let link = ProviderLink {
            out,
            calls: Arc::new(CallTable::default()),
            gates: Arc::default(),
            kill,
            activity: Arc::default(),
        };
        let conn = Self {
            core,
            remote,
            origin,
            link,
            id: None,
            pairing: None,
            pairing_span: None,
            hellos: VecDeque::new(),
            ledger_backlog: Vec::new(),
        };
        (conn, rx)
    }
}

impl ProviderConn {
    pub(super) fn send(&self, msg: &GatewayMessage) {
        // Every error this connection sends passes here: the diagnostics count it.
        if let GatewayMessage::Error(e) = msg {
            self.core.diagnostics.note_provider_error(e);
        }
        self.link.send(msg);
    }

    /// Sends `error`, filling in `providerId` and `sessionId` where they apply.
    pub(super) fn error(
        &self,
        code: ErrorCode,
        message: impl Into<String>,
        reply_to: Option<&str>,
    ) {
        self.error_req(code, message, reply_to, None);
    }

    /// Sends `error` about `session` (one the provider asked for, not necessarily the one
    /// it is bound to), in reply to `reply_to`.
    pub(super) fn error_about(
        &self,
        session: &str,
        code: ErrorCode,
        message: impl Into<String>,
        reply_to: &str,
    ) {
        let mut e = ErrorMessage::new(code, message);
        e.reply_to = Some(reply_to.to_string());
        e.provider_id = self.id.clone();
        e.session_id = Some(session.to_string());
        self.send(&GatewayMessage::Error(e));
    }

    pub(super) fn error_req(
        &self,
        code: ErrorCode,
        message: impl Into<String>,
        reply_to: Option<&str>,
        request_id: Option<String>,
    ) {
        let mut e = ErrorMessage::new(code, message);
        e.reply_to = reply_to.map(str::to_string);
        e.request_id = request_id;
        e.provider_id = self.id.clone();
        e.session_id = self.bound_session();
        self.send(&GatewayMessage::Error(e));
    }

    pub(super) fn fatal(&self, code: ErrorCode, message: &str, reply_to: Option<&str>) -> Step {
        tracing::info!(target: LOG_TARGET, remote = %self.remote, provider = ?self.id, %code, message, "closing provider connection");
        let close = match code {
            ErrorCode::UnsupportedVersion => {
                Step::Close(CloseCode::Protocol, "unsupported protocol version")
            }
            _ => Step::Close(CloseCode::Policy, "authentication failed"),
        };
        self.error(code, message, reply_to);
        close
    }

    pub(super) fn with_entry<R>(&self, f: impl FnOnce(&mut State, &str) -> R) -> Option<R> {
        let id = self.id.as_deref()?;
        let mut state = self.core.state();
        // The entry must still be this connection's: a reconnect may have moved its id
        // to a newer connection (see `identity::claim`).
        state
            .providers
            .get(id)
            .is_some_and(|e| Arc::ptr_eq(&e.link.calls, &self.link.calls))
            .then(|| f(&mut state, id))
    }

    pub(super) fn trust(&self) -> Option<Trust> {
        self.with_entry(|s, id| s.providers[id].trust)
    }

    fn bound_session(&self) -> Option<String> {
        self.with_entry(|s, id| s.providers[id].session.clone())
            .flatten()
    }

    /// One incoming frame, from the socket or the in-process transport.
    pub(crate) fn on_frame(&mut self, bytes: &[u8]) -> Step {
        if self.id.is_none() {
            return self.on_unauthenticated(bytes);
        }
        self.link.activity.touch();
        if bytes.len() > MAX_TOOL_RESULT_BYTES {
            return self.oversized(bytes);
        }
        match decode::<ProviderMessage>(bytes, ProviderMessage::TYPES) {
            Ok(msg) => {
                if bytes.len() > MAX_MESSAGE_BYTES && !matches!(msg, ProviderMessage::ToolResult(_))
                {
                    self.core.diagnostics.limit_hit(Limit::PayloadSize);
                    self.error(
                        ErrorCode::PayloadTooLarge,
                        format!(
                            "'{}' is {} bytes; messages other than tool.result are limited to {MAX_MESSAGE_BYTES}",
                            msg.type_name(),
                            bytes.len()
                        ),
                        Some(msg.type_name()),
                    );
                    return Step::Continue;
                }
                self.dispatch(msg)
            }
            Err(e) => self.on_bad_frame(bytes, e),
        }
    }

    /// Waits until the ledger took every record it had no room for.
    pub(crate) async fn relieve_ledger(&mut self) {
        for full in std::mem::take(&mut self.ledger_backlog) {
            self.core.ledger.wait(full).await;
        }
    }

    fn dispatch(&mut self, msg: ProviderMessage) -> Step {
        match msg {
            ProviderMessage::Hello(h) => return self.on_hello(*h),
            ProviderMessage::Goodbye(g) => {
                tracing::info!(target: LOG_TARGET, provider = ?self.id, reason = ?g.reason, "provider said goodbye");
                return GOODBYE;
            }
            // Answers are correlated by their globally unique id, whatever the state: a
            // result arriving after its session ended (or after a rebind) is a late
            // result, and late results are ignored, not errors.
            ProviderMessage::ToolResult(r) => self.on_tool_result(r),
            ProviderMessage::ToolProgress(p) => {
                self.link.calls.progress(&p.id, p.message);
            }
            // Correlated by the check's unique callId on this connection; an unknown or
            // timed-out one is a late answer and ignored.
            ProviderMessage::GateResult(r) => {
                let call_id = r.call_id.clone();
                if !self.link.gates.complete(r) {
                    tracing::debug!(target: LOG_TARGET, provider = ?self.id, %call_id, "late or unknown gate.result ignored");
                }
            }
            // Correlated by the request's unique callId; only the provider it was sent to
            // may answer. Unknown or timed-out ones are late answers and ignored.
            ProviderMessage::TransformResult(r) => {
                let done =
                    self.with_entry(|s, id| s.transforms.complete(id, &r.call_id, r.content));
                if done != Some(true) {
                    tracing::debug!(target: LOG_TARGET, provider = ?self.id, id = %r.call_id, "late or unknown transform.result ignored");
                }
            }
            ProviderMessage::Auth(_) | ProviderMessage::AuthConfirm(_) => {
                self.error(
                    ErrorCode::Unauthorized,
                    "Already authenticated",
                    Some(msg.type_name()),
                );
            }
            other => self.dispatch_bound(other),
        }
        if self.ledger_backlog.is_empty() {
            Step::Continue
        } else {
            Step::Backpressure
        }
    }

    /// Messages that need a bound session.
    fn dispatch_bound(&mut self, msg: ProviderMessage) {
        let phase = self
            .with_entry(|s, id| s.providers[id].phase)
            .unwrap_or(Phase::Unbound);
        if phase != Phase::Bound {
            // Updates echo their requestId, so a provider waiting for the ack gets its answer.
            let request_id = match &msg {
                ProviderMessage::ToolsUpdate(u) => u.request_id.clone(),
                ProviderMessage::HooksUpdate(u) => u.request_id.clone(),
                ProviderMessage::ContextUpdate(u) => u.request_id.clone(),
                ProviderMessage::FilterSet(f) => f.request_id.clone(),
                _ => None,
            };
            self.error_req(
                ErrorCode::InvalidSession,
                format!(
                    "Not bound to a session: send 'hello' before '{}'",
                    msg.type_name()
                ),
                Some(msg.type_name()),
                request_id,
            );
            return;
        }
        match msg {
            ProviderMessage::Push(p) => self.on_push(p),
            ProviderMessage::ToolsUpdate(u) => self.on_tools_update(u),
            ProviderMessage::StreamQuery(q) => self.on_stream_query(q),
            ProviderMessage::ShutdownReady(r) => {
                let released = self.with_entry(|s, id| {
                    let ok = s.providers[id].is_bound_to(&r.session_id);
                    if ok {
                        crate::state::session::release_shutdown(s, id, &r.session_id);
                    }
                    ok
                });
                if released != Some(true) {
                    self.error(
                        ErrorCode::InvalidSession,
                        format!("Not bound to session '{}'", r.session_id),
                        Some("shutdown.ready"),
                    );
                }
            }
            ProviderMessage::SessionReady(r) => self.on_session_ready(r),
            ProviderMessage::HooksUpdate(u) => {
                let refused = match self.trust() {
                    Some(Trust::External) => crate::pairing::external_trust::hooks_update_allowed(&u).err(),
                    _ => None,
                };
                match refused {
                    Some(Error { code, message, .. }) => {
                        self.error_req(code, message, Some("hooks.update"), u.request_id)
                    }
                    None => self.on_hooks_update(u),
                }
            }
            ProviderMessage::ContextUpdate(u) if self.trust() == Some(Trust::External) => self
                .error_req(
                    ErrorCode::Unauthorized,
                    "'context.update' needs project trust; paired (external) providers may not set context",
                    Some("context.update"),
                    u.request_id,
                ),
            ProviderMessage::ContextUpdate(u) => self.on_context_update(u),
            ProviderMessage::FilterSet(f) => self.on_filter_set(f),
            ProviderMessage::Hello(_)
            | ProviderMessage::Goodbye(_)
            | ProviderMessage::ToolResult(_)
            | ProviderMessage::ToolProgress(_)
            | ProviderMessage::GateResult(_)
            | ProviderMessage::TransformResult(_)
            | ProviderMessage::Auth(_)
            | ProviderMessage::AuthConfirm(_) => unreachable!("handled by dispatch"),
        }
    }
}

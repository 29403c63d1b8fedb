//! One provider connection: AwaitAuth (→ AwaitPairing) → AwaitHello → Bound (→ Unbound)
//! → Disconnected.
//!
//! The task owns the socket. Everything else in the gateway talks to the provider through
//! its [`ProviderLink`] queue, so frames leave in the order they were produced and a slow
//! or hostile provider only ever stalls its own task.

mod all_binding;
mod file_result;
mod updates;

use crate::auth::tokens;
use crate::diagnostics::Limit;
use crate::events::GatewayEvent;
use crate::providers::entry::{Phase, ProviderEntry, Trust};
use crate::providers::link::ProviderLink;
use crate::providers::registry::{detach, unbind_provider};
use crate::providers::validate::{self, Invalid};
use crate::sessions::tool_map::Claimant;
use crate::socket::frame::frame;
use crate::socket::upgrade::WsStream;
use crate::state::{Core, State};
use crate::streams::store::Stored;
use crate::tools::request::CallError;
use crate::tools::table::CallTable;
use all_binding::{targets, Absent};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tap_protocol::host::{Delivery, HostEvent, SessionContext};
use tap_protocol::limits::{
    AUTH_TIMEOUT, MAX_MESSAGE_BYTES, MAX_PAIRING_ATTEMPTS_PER_MINUTE, MAX_REBINDS_PER_MINUTE,
    MAX_STREAMS_PER_PROVIDER, MAX_STREAM_QUERY_LAST, MAX_TOOL_RESULT_BYTES, PAIRING_CODE_TTL,
};
use tap_protocol::pairing::PairingEntry;
use tap_protocol::provider::{
    Auth, AuthConfirm, AuthPairing, ErrorMessage, GatewayMessage, Hello, HelloAck, LifecycleState,
    ProviderMessage, Push, PushLevel, SessionLifecycle, Sessions, StreamHistory, StreamQuery,
    ToolResult,
};
use tap_protocol::{decode, DecodeError, ErrorCode, PROTOCOL_VERSION};
use tokio::sync::mpsc;
// Tokio's clock, like every other timer here, so the rebind window follows a paused test clock.
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// What the read loop does after a frame.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// Auth succeeded: lift the pre-auth byte budget.
    Authed,
    /// A pairing request is pending until this instant: it replaces the auth timeout.
    Pairing(Instant),
    /// Close after writing what is queued (fatal error, goodbye, malformed-result rule).
    Close,
}

/// Frames written per flush when the queue is busy; bounds latency of a big backlog.
const WRITE_BATCH: usize = 64;

pub(crate) async fn serve(
    core: Arc<Core>,
    mut ws: WsStream,
    remote: SocketAddr,
    origin: Option<String>,
) {
    let (out, mut rx) = mpsc::unbounded_channel();
    let link = ProviderLink {
        out,
        calls: Arc::new(CallTable::default()),
        gates: Arc::default(),
        kill: core.stopping.child_token(),
        activity: Arc::default(),
    };
    let mut conn = Conn {
        core,
        remote,
        origin,
        link,
        id: None,
        pairing: None,
        hellos: VecDeque::new(),
    };
    let auth_deadline = tokio::time::sleep(AUTH_TIMEOUT);
    tokio::pin!(auth_deadline);
    let close = loop {
        tokio::select! {
            biased;
            Some(msg) = rx.recv() => {
                if write_batch(&mut ws, msg, &mut rx).await.is_err() {
                    break None;
                }
            }
            _ = conn.link.kill.cancelled() => break Some(CloseCode::Away),
            // The auth timeout, or while a pairing request is pending, its expiry.
            _ = &mut auth_deadline, if conn.id.is_none() => {
                conn.on_auth_deadline();
                break Some(CloseCode::Policy);
            }
            incoming = ws.next() => {
                let bytes = match incoming {
                    Some(Ok(Message::Text(t))) => t.into(),
                    Some(Ok(Message::Binary(b))) => b,
                    Some(Ok(Message::Close(_))) | None => break None,
                    Some(Ok(_)) => continue,
                    Some(Err(tokio_tungstenite::tungstenite::Error::Capacity(e))) => {
                        tracing::info!(%remote, error = %e, "provider frame above the hard cap; closing");
                        conn.core.diagnostics.limit_hit(Limit::FrameCap);
                        break Some(CloseCode::Size);
                    }
                    Some(Err(e)) => {
                        tracing::debug!(%remote, error = %e, "provider socket error");
                        break None;
                    }
                };
                match conn.on_frame(&bytes) {
                    Flow::Continue => {}
                    Flow::Authed => ws.get_mut().lift_budget(),
                    Flow::Pairing(until) => auth_deadline.as_mut().reset(until),
                    Flow::Close => break Some(CloseCode::Normal),
                }
            }
        }
    };
    conn.disconnect();
    if let Some(code) = close {
        // Best effort, bounded: the peer may be the reason we are closing.
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Ok(msg) = rx.try_recv() {
                ws.feed(msg).await?;
            }
            ws.close(Some(CloseFrame {
                code,
                reason: "".into(),
            }))
            .await
        })
        .await;
    }
}

async fn write_batch(
    ws: &mut WsStream,
    first: Message,
    rx: &mut mpsc::UnboundedReceiver<Message>,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    ws.feed(first).await?;
    for _ in 1..WRITE_BATCH {
        match rx.try_recv() {
            Ok(m) => ws.feed(m).await?,
            Err(_) => break,
        }
    }
    ws.flush().await
}

/// One provider connection's state (the socket task's, or a [`super::LocalProvider`]'s).
pub(crate) struct Conn {
    pub(super) core: Arc<Core>,
    pub(super) remote: SocketAddr,
    /// The upgrade request's `Origin` header (browser providers).
    pub(super) origin: Option<String>,
    pub(super) link: ProviderLink,
    /// Set once authenticated.
    pub(super) id: Option<String>,
    /// AwaitPairing: the id of this connection's pending pairing request.
    pub(super) pairing: Option<String>,
    /// When recent `hello`s arrived, for the rebind limit.
    pub(super) hellos: VecDeque<Instant>,
}

/// Cheap look at an unparseable or oversized frame: enough to correlate it with a call.
#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<serde_json::Value>,
}

impl Conn {
    pub(super) fn send(&self, msg: &GatewayMessage) {
        // Every error this connection sends passes here: the diagnostics count it.
        if let GatewayMessage::Error(e) = msg {
            self.core.diagnostics.note_provider_error(e);
        }
        let _ = self.link.out.send(frame(msg));
    }

    /// Sends `error`, filling in `providerId` and `sessionId` where they apply.
    fn error(&self, code: ErrorCode, message: impl Into<String>, reply_to: Option<&str>) {
        self.error_req(code, message, reply_to, None);
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

    fn fatal(&self, code: ErrorCode, message: &str, reply_to: Option<&str>) -> Flow {
        tracing::info!(remote = %self.remote, provider = ?self.id, %code, message, "closing provider connection");
        self.error(code, message, reply_to);
        Flow::Close
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

    fn trust(&self) -> Option<Trust> {
        self.with_entry(|s, id| s.providers[id].trust)
    }

    fn bound_session(&self) -> Option<String> {
        self.with_entry(|s, id| s.providers[id].session.clone())
            .flatten()
    }

    pub(super) fn on_frame(&mut self, bytes: &[u8]) -> Flow {
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
                    return Flow::Continue;
                }
                self.dispatch(msg)
            }
            Err(e) => self.on_bad_frame(bytes, e),
        }
    }

    fn on_unauthenticated(&mut self, bytes: &[u8]) -> Flow {
        match decode::<ProviderMessage>(bytes, ProviderMessage::TYPES) {
            Ok(msg) if self.pairing.is_some() => self.on_pairing_message(msg),
            Ok(ProviderMessage::Auth(auth)) => self.on_auth(auth),
            Ok(other) => self.fatal(
                ErrorCode::AuthFailed,
                &format!(
                    "The first message must be 'auth', got '{}'",
                    other.type_name()
                ),
                Some(other.type_name()),
            ),
            Err(e) => {
                // Non-fatal, as the spec's table says; the byte budget and the auth
                // timeout bound how long an unauthenticated peer can keep this up.
                self.error(e.code(), e.message(), e.type_name());
                Flow::Continue
            }
        }
    }

    fn on_auth(&mut self, auth: Auth) -> Flow {
        if auth.mode.as_deref() == Some("pair") {
            return self.on_pair(auth);
        }
        let Some(token) = auth.token else {
            return self.fatal(
                ErrorCode::AuthFailed,
                "'auth' needs a 'token'",
                Some("auth"),
            );
        };
        let mut state = self.core.state();
        // The pairing lookup and the registration happen under one lock, so a concurrent
        // revoke either sees this connection or has already killed the token.
        let mut scope = None;
        let (trust, paired) = if tokens::matches(&token, &self.core.secrets.gateway_token) {
            (Trust::Project, None)
        } else if let Some((session, name)) =
            crate::providers::project::start::authenticate(&state, &token)
        {
            // A project provider's own token (tap.config.json): scoped to its session.
            tracing::info!(remote = %self.remote, %session, provider = %name, "project provider token");
            scope = Some(session);
            (Trust::Project, None)
        } else if let Some(entry) = state.pairing.authenticate(&token) {
            (Trust::External, Some(entry))
        } else {
            drop(state);
            return self.fatal(ErrorCode::AuthFailed, "Invalid token", Some("auth"));
        };
        let id = self.admit(
            &mut state,
            trust,
            paired.as_ref().map(|e| e.id.clone()),
            None,
            scope,
        );
        drop(state);
        self.id = Some(id.clone());
        tracing::info!(remote = %self.remote, provider = %id, trust = trust.as_str(), "provider authenticated");
        if let Some(entry) = paired {
            self.core.events.emit(GatewayEvent::PairingChanged(entry));
        }
        Flow::Authed
    }

    /// Registers the authenticated connection and sends `sessions`, under the lock so no
    /// `sessions.updated` can overtake it.
    pub(super) fn admit(
        &self,
        state: &mut State,
        trust: Trust,
        pairing: Option<String>,
        token: Option<String>,
        scope: Option<String>,
    ) -> String {
        let id = crate::ids::short("p");
        let active = crate::providers::project::start::visible_sessions(
            state,
            pairing.as_deref(),
            scope.as_deref(),
        );
        state.providers.insert(
            id.clone(),
            ProviderEntry {
                id: id.clone(),
                name: None,
                instance: None,
                metadata: None,
                trust,
                phase: Phase::AwaitHello,
                session: None,
                tools: Arc::new(Vec::new()),
                hooks: Arc::default(),
                subscribe: Vec::new(),
                link: self.link.clone(),
                remote: self.remote,
                connected_at: SystemTime::now(),
                pairing,
                scope,
                all: None,
                updates: Default::default(),
            },
        );
        self.send(&GatewayMessage::Sessions(Sessions { token, active }));
        id
    }

    /// `auth {mode: "pair"}`: a pending request with a fresh code the user reads from the
    /// gateway's surfaces. The provider only gets a prompt; the code never goes over
    /// this socket.
    fn on_pair(&mut self, auth: Auth) -> Flow {
        let name = auth
            .name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        if name.as_ref().is_some_and(|n| {
            n.chars().count() > crate::pairing::provider::MAX_NAME_CHARS
                || n.chars().any(char::is_control)
        }) {
            self.error(
                ErrorCode::InvalidJson,
                format!(
                    "'name' must be at most {} characters, without control characters",
                    crate::pairing::provider::MAX_NAME_CHARS
                ),
                Some("auth"),
            );
            return Flow::Continue;
        }
        let request = crate::pairing::registry::Request {
            origin: self.origin.clone(),
            remote: self.remote.to_string(),
            name,
            metadata: auth.metadata,
            link: self.link.clone(),
        };
        let until = Instant::now() + PAIRING_CODE_TTL;
        let mut state = self.core.state();
        let entry = match state.pairing.request(request, PAIRING_CODE_TTL) {
            Ok(entry) => entry,
            Err(message) => {
                drop(state);
                tracing::warn!(remote = %self.remote, "pairing request refused: too many pending");
                self.core.diagnostics.limit_hit(Limit::PendingPairings);
                self.error(ErrorCode::RateLimited, message, Some("auth"));
                return Flow::Close;
            }
        };
        // Under the lock: a deny's `error` cannot overtake the prompt.
        self.send(&GatewayMessage::AuthPairing(AuthPairing {
            prompt: crate::pairing::provider::PROMPT.into(),
        }));
        drop(state);
        // Never log the code.
        tracing::info!(remote = %self.remote, pairing = %entry.id, origin = ?entry.origin, name = ?entry.name, "pairing requested");
        self.pairing = Some(entry.id.clone());
        self.core.events.emit(GatewayEvent::PairingChanged(entry));
        Flow::Pairing(until)
    }

    /// AwaitPairing: `auth.confirm` is what the state expects; `goodbye` withdraws the
    /// request and closes. Any other known message gets `UNAUTHORIZED` and the request
    /// stays pending (the user may still be reading the code).
    fn on_pairing_message(&mut self, msg: ProviderMessage) -> Flow {
        match msg {
            ProviderMessage::AuthConfirm(c) => self.on_confirm(c),
            ProviderMessage::Goodbye(_) => Flow::Close,
            other => {
                self.error(
                    ErrorCode::Unauthorized,
                    format!(
                        "Pairing is pending: only 'auth.confirm' is accepted until the code is confirmed, not '{}'",
                        other.type_name()
                    ),
                    Some(other.type_name()),
                );
                Flow::Continue
            }
        }
    }

    /// `auth.confirm {code}`. Attempts count against one gateway-wide limit, so opening
    /// more connections does not buy more guesses. A wrong code ends the request.
    fn on_confirm(&mut self, c: AuthConfirm) -> Flow {
        let pid = self.pairing.clone().expect("only called in AwaitPairing");
        let mut state = self.core.state();
        if !state.pairing.get(&pid).is_some_and(|p| p.is_pending()) {
            drop(state);
            self.pairing = None;
            return self.fatal(
                ErrorCode::AuthFailed,
                "This pairing request no longer exists",
                Some("auth.confirm"),
            );
        }
        if let Err(wait) = state.pairing.attempt(Instant::now()) {
            drop(state);
            tracing::warn!(remote = %self.remote, pairing = %pid, "pairing attempt rate-limited");
            self.core.diagnostics.limit_hit(Limit::PairingAttempts);
            self.error(
                ErrorCode::RateLimited,
                format!(
                    "More than {MAX_PAIRING_ATTEMPTS_PER_MINUTE} pairing attempts a minute on this gateway; retry in {} s",
                    wait.as_secs().max(1)
                ),
                Some("auth.confirm"),
            );
            return Flow::Continue;
        }
        if !state
            .pairing
            .get(&pid)
            .is_some_and(|p| p.code_matches(&c.code))
        {
            state.pairing.remove(&pid);
            drop(state);
            self.pairing = None;
            tracing::warn!(remote = %self.remote, pairing = %pid, "wrong pairing code");
            self.core.events.emit(GatewayEvent::PairingRemoved {
                id: pid,
                reason: "failed".into(),
            });
            return self.fatal(
                ErrorCode::AuthFailed,
                "Wrong pairing code",
                Some("auth.confirm"),
            );
        }
        let token = tokens::generate("ext-");
        // Unless the user chose a session, the provider is limited to the one in the
        // foreground now.
        let foreground = crate::pairing::scope::foreground(&state);
        if let Some(p) = state.pairing.get_mut(&pid) {
            if p.session.is_none() {
                p.session = foreground;
            }
        }
        let entry = state
            .pairing
            .pair(&pid, crate::pairing::registry::hash_token(&token))
            .expect("checked pending above");
        let id = self.admit(
            &mut state,
            Trust::External,
            Some(pid.clone()),
            Some(token),
            None,
        );
        drop(state);
        self.id = Some(id.clone());
        self.pairing = None;
        crate::pairing::api::save(&self.core);
        tracing::info!(remote = %self.remote, provider = %id, pairing = %pid, "pairing confirmed");
        self.core.events.emit(GatewayEvent::PairingChanged(entry));
        Flow::Authed
    }

    /// The auth timeout fired, or, in AwaitPairing, the pairing code expired.
    fn on_auth_deadline(&mut self) {
        let Some(pid) = self.pairing.take() else {
            self.core.diagnostics.limit_hit(Limit::AuthTimeout);
            self.fatal(ErrorCode::AuthFailed, "No 'auth' within 10 seconds", None);
            return;
        };
        if self.core.state().pairing.remove_pending(&pid) {
            tracing::info!(remote = %self.remote, pairing = %pid, "pairing code expired");
            self.core.events.emit(GatewayEvent::PairingRemoved {
                id: pid,
                reason: "expired".into(),
            });
        }
        self.fatal(
            ErrorCode::AuthFailed,
            "Pairing code expired; request pairing again",
            None,
        );
    }

    fn dispatch(&mut self, msg: ProviderMessage) -> Flow {
        match msg {
            ProviderMessage::Hello(h) => return self.on_hello(*h),
            ProviderMessage::Goodbye(g) => {
                tracing::info!(provider = ?self.id, reason = ?g.reason, "provider said goodbye");
                return Flow::Close;
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
                    tracing::debug!(provider = ?self.id, %call_id, "late or unknown gate.result ignored");
                }
            }
            // Correlated by the request's unique callId; only the provider it was sent to
            // may answer. Unknown or timed-out ones are late answers and ignored.
            ProviderMessage::TransformResult(r) => {
                let done =
                    self.with_entry(|s, id| s.transforms.complete(id, &r.call_id, r.content));
                if done != Some(true) {
                    tracing::debug!(provider = ?self.id, id = %r.call_id, "late or unknown transform.result ignored");
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
        Flow::Continue
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
                        crate::sessions::ending::release_shutdown(s, id, &r.session_id);
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
                    Some(Trust::External) => crate::pairing::provider::hooks_update_allowed(&u).err(),
                    _ => None,
                };
                match refused {
                    Some((code, message)) => {
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

impl Conn {
    fn on_hello(&mut self, mut h: Hello) -> Flow {
        let now = Instant::now();
        while self
            .hellos
            .front()
            .is_some_and(|t| now.duration_since(*t) > Duration::from_secs(60))
        {
            self.hellos.pop_front();
        }
        // The first hello binds; the next ones are rebinds, at most 10 a minute.
        if self.hellos.len() > MAX_REBINDS_PER_MINUTE as usize {
            self.core.diagnostics.limit_hit(Limit::RebindRate);
            self.error(
                ErrorCode::RateLimited,
                format!("More than {MAX_REBINDS_PER_MINUTE} rebinds in a minute; retry later"),
                Some("hello"),
            );
            return Flow::Continue;
        }
        self.hellos.push_back(now);

        if h.protocol_version != PROTOCOL_VERSION {
            return self.fatal(
                ErrorCode::UnsupportedVersion,
                &format!(
                    "This gateway speaks protocolVersion {PROTOCOL_VERSION}; got {}",
                    h.protocol_version
                ),
                Some("hello"),
            );
        }
        // A repeat hello first removes the old binding (spec: "Rebinding"), so a failed
        // rebind leaves the provider unbound rather than half in two sessions.
        self.unbind("rebind");

        let scope = self
            .with_entry(|s, id| s.providers[id].scope.clone())
            .flatten();
        if h.session.is_none() {
            // A reconnect may leave the session out: the remembered one is restored.
            h.session = self.core.state().identity.remembered_session(&h);
        }
        if h.session.is_none() {
            // A project provider's session is known: the gateway stamps it (spec: "Internal
            // (spawned by gateway from project config) … gateway stamps it").
            h.session = scope.clone();
        }
        let Some(session_id) = h.session.clone() else {
            self.error(
                ErrorCode::InvalidSession,
                "'session' is required: pick an id from the 'sessions' message",
                Some("hello"),
            );
            return Flow::Continue;
        };
        // Capability matrix: "Bind to any session / all" is internal only.
        let all = session_id == crate::providers::binding::ALL;
        if all && self.trust() != Some(Trust::Internal) {
            self.error(
                ErrorCode::Unauthorized,
                "Binding to \"all\" needs internal trust; pick one session",
                Some("hello"),
            );
            return Flow::Continue;
        }
        if let Some(scope) = scope.as_ref().filter(|s| **s != session_id) {
            let mut e = ErrorMessage::new(
                ErrorCode::InvalidSession,
                format!("This provider's token is for session '{scope}' (its tap.config.json); it may bind only there"),
            );
            e.reply_to = Some("hello".into());
            e.provider_id = self.id.clone();
            e.session_id = Some(session_id);
            self.send(&GatewayMessage::Error(e));
            return Flow::Continue;
        }
        if let Err(why) = self.check_hello(&h) {
            if why.0 == ErrorCode::PayloadTooLarge {
                self.core.diagnostics.limit_hit(Limit::ToolCount);
            }
            self.error(why.0, why.1, Some("hello"));
            return Flow::Continue;
        }
        let pairing = self
            .with_entry(|s, id| s.providers[id].pairing.clone())
            .flatten();
        if pairing.is_some() {
            if let Err(why) = crate::pairing::provider::external_capabilities(&h) {
                self.error(why.0, why.1, Some("hello"));
                return Flow::Continue;
            }
        }
        if let Some(t) = h.hooks.as_ref().and_then(|k| k.transforms.as_ref()) {
            if let Err(why) = crate::transforms::registry::validate(t) {
                self.error(why.0, why.1, Some("hello"));
                return Flow::Continue;
            }
        }
        // After the trust check, so a paired provider hears UNAUTHORIZED, not a regex error.
        let hooks = match crate::hooks::rules::compile(
            h.hooks
                .as_ref()
                .and_then(|k| k.on_pre_tool_use.as_deref())
                .unwrap_or_default(),
        ) {
            Ok(rules) => rules,
            Err(why) => {
                if why.0 == ErrorCode::PayloadTooLarge {
                    self.core.diagnostics.limit_hit(Limit::RuleCount);
                }
                self.error(why.0, why.1, Some("hello"));
                return Flow::Continue;
            }
        };
        let tools = Arc::new(h.tools.take().unwrap_or_default());
        let persist_dir = self.trust().and_then(|t| {
            crate::providers::identity::persist_dir(&self.core.config.data_dir, t, &h.name)
        });
        if all {
            return self.bind_all(h, tools, hooks, persist_dir);
        }
        let mut rekeyed: Option<String> = None;
        let outcome = self.with_entry(|state, id| -> Result<Option<PairingEntry>, Invalid> {
            if let Some(pid) = &pairing {
                crate::pairing::provider::check_hello(state, pid, &session_id, &h.name)?;
            }
            rekeyed = crate::providers::reconnect::claim(state, id, &h)?;
            let id = rekeyed.as_deref().unwrap_or(id);
            let session = state.live_session(&session_id)?;
            session.check_conflicts(&tools, &Claimant::of_hello(id, &h), &state.providers)?;
            let entry = state.providers.get_mut(id).expect("checked by with_entry");
            entry.name = Some(h.name.clone());
            entry.instance = h.instance.clone();
            entry.metadata = h.metadata.clone();
            entry.phase = Phase::Bound;
            entry.session = Some(session_id.clone());
            entry.tools = tools.clone();
            entry.hooks = hooks.clone();
            entry.subscribe = h.subscribe.clone().unwrap_or_default();
            // Revisions count per binding: a (re)bind starts again.
            entry.updates.clear();
            let State {
                sessions,
                providers,
                ..
            } = state;
            let session = sessions.get_mut(&session_id).expect("checked above");
            session.bound.push(id.to_string());
            session.rebuild_tools(providers);
            let host = session.host.clone();
            state.transforms.set_from_hello(
                id,
                &session_id,
                h.hooks.as_ref().and_then(|k| k.transforms.as_ref()),
                h.context.clone(),
            );
            // Under the lock, so the ack precedes anything the binding causes.
            self.send(&GatewayMessage::HelloAck(HelloAck {
                protocol_version: PROTOCOL_VERSION,
                provider_id: id.to_string(),
                session_id: Some(session_id.clone()),
                reconnect_token: Some(crate::providers::reconnect::issue(
                    state,
                    id,
                    &h,
                    &session_id,
                )),
                persist_dir: persist_dir.clone(),
            }));
            state.limits.set(id, &h.name, h.concurrency.clone());
            self.send(&GatewayMessage::SessionLifecycle(SessionLifecycle {
                session_id: session_id.clone(),
                state: LifecycleState::Started,
                deadline: None,
            }));
            // `startup_context` reaches the session's host once per bind.
            if let Some(text) = h.startup_context.clone().filter(|t| !t.is_empty()) {
                if let Some(host) = state.hosts.get_mut(&host) {
                    host.send(&HostEvent::SessionContext(SessionContext {
                        session_id: session_id.clone(),
                        provider: h.name.clone(),
                        startup_context: text,
                    }));
                }
            }
            Ok(pairing
                .as_deref()
                .and_then(|pid| crate::pairing::provider::bound(state, pid, &session_id, &h.name)))
        });
        if let Some(new_id) = rekeyed {
            tracing::info!(provider = %new_id, name = %h.name, "provider reconnected; identity taken over");
            self.id = Some(new_id);
        }
        match outcome {
            Some(Ok(changed)) => {
                if let Some(id) = &self.id {
                    self.core.stream_controls.forget(id);
                }
                if let Some(entry) = changed {
                    crate::pairing::api::save(&self.core);
                    self.core.events.emit(GatewayEvent::PairingChanged(entry));
                }
                self.core
                    .events
                    .emit(crate::events::GatewayEvent::StatusChanged);
                tracing::info!(provider = ?self.id, name = %h.name, session = %session_id, tools = tools.len(), "provider bound");
            }
            Some(Err((code, message))) => {
                let mut e = ErrorMessage::new(code, message);
                e.reply_to = Some("hello".into());
                e.provider_id = self.id.clone();
                e.session_id = Some(session_id);
                self.send(&GatewayMessage::Error(e));
            }
            None => {}
        }
        Flow::Continue
    }

    fn check_hello(&self, h: &Hello) -> Result<(), Invalid> {
        if h.name.trim().is_empty() {
            return Err((ErrorCode::InvalidJson, "'name' must not be empty".into()));
        }
        validate::tools(h.tools.as_deref().unwrap_or_default())?;
        validate::instance(h.instance.as_deref())?;
        validate::shared_tools(
            h.instance.as_deref(),
            h.tools.as_deref().unwrap_or_default(),
        )?;
        crate::tools::limits::validate(h.concurrency.as_ref())?;
        Ok(())
    }

    /// Leaves the bound session, if any: tools removed, calls in it cancelled.
    fn unbind(&self, reason: &str) {
        self.with_entry(|state, id| unbind_provider(state, id, reason));
    }

    fn on_tool_result(&self, r: ToolResult) {
        let outcome = if r.error.is_some() || r.error_code.is_some() {
            let code = r.error_code.unwrap_or(ErrorCode::Internal);
            let message = r.error.unwrap_or_else(|| code.to_string());
            let mut e = CallError::new(code, message);
            // The call path may then try another instance (multi-instance providers).
            e.retryable = r.retryable == Some(true);
            Err(e)
        } else if let Some(file) = r.file {
            return self.on_file_result(r.id, file);
        } else {
            Ok(r.data.unwrap_or(serde_json::Value::Null))
        };
        if !self.link.calls.complete(&r.id, outcome) {
            tracing::debug!(provider = ?self.id, id = %r.id, "late or unknown tool.result ignored");
        }
    }

    fn on_push(&self, p: Push) {
        if let Err((code, message)) = validate::push(&p) {
            self.error(code, message, Some("push"));
            return;
        }
        // An "all" provider names the session, or broadcasts to every one it is in.
        let absent = if p.broadcast {
            Absent::Every
        } else {
            Absent::Refuse
        };
        let Some(resolved) = self.with_entry(|s, id| {
            targets(s, id, p.session_id.as_deref(), absent)
                .map(|t| (t, s.providers[id].name.clone().unwrap_or_default()))
        }) else {
            return;
        };
        let (sessions, provider) = match resolved {
            Ok(r) => r,
            Err((code, message)) => return self.error(code, message, Some("push")),
        };
        // Only a broadcast's extra sessions get copies; the usual single session (and a
        // broadcast's last) takes the push itself, so its text and metadata move.
        let mut sessions = sessions;
        let Some(last) = sessions.pop() else { return };
        for session in sessions {
            self.push_to(session, &provider, p.clone());
        }
        self.push_to(last, &provider, p);
    }

    /// One push into one session: the stream's filter and the budgets decide its level,
    /// then it is stored and (`surface` / `inject`) delivered to the session's host.
    fn push_to(&self, session: String, provider: &str, p: Push) {
        let stream = p.stream.unwrap_or_else(|| provider.to_string());
        let text = p
            .event
            .filter(|e| !e.is_empty())
            .or_else(|| p.prompt.clone())
            .unwrap_or_default();
        let pid = self.id.clone().unwrap_or_default();
        let streams = &self.core.streams;
        let level = match self
            .core
            .stream_controls
            .admit(&pid, &session, &stream, &text, p.level)
        {
            Ok(Some(level)) => level,
            Ok(None) => return, // dropped by the stream's filter
            Err(message) => {
                self.core.diagnostics.limit_hit(Limit::PushBudget);
                return self.error(ErrorCode::RateLimited, message, Some("push"));
            }
        };
        let at = SystemTime::now();
        let delivery = (level != PushLevel::Keep).then(|| {
            HostEvent::Delivery(Delivery {
                session_id: session.clone(),
                level,
                stream: stream.clone(),
                provider: provider.to_string(),
                event: text.clone(),
                prompt: p.prompt,
                metadata: p.metadata.clone(),
                ts: crate::time::rfc3339(at),
            })
        });
        let stored = Stored {
            at,
            event: text,
            level,
            metadata: p.metadata,
        };
        if streams.append(&session, provider, &stream, stored).is_err() {
            self.core.diagnostics.limit_hit(Limit::StreamCount);
            self.error(
                ErrorCode::PayloadTooLarge,
                format!(
                    "A provider may use at most {MAX_STREAMS_PER_PROVIDER} streams per session; '{stream}' would be one more"
                ),
                Some("push"),
            );
            return;
        }
        if let Some(delivery) = delivery {
            let mut state = self.core.state();
            let host = state.sessions.get(&session).map(|s| s.host.clone());
            if let Some(h) = host.and_then(|h| state.hosts.get_mut(&h)) {
                h.send(&delivery);
            }
        }
    }

    fn on_stream_query(&self, q: StreamQuery) {
        let Some(resolved) = self.with_entry(|s, id| {
            let e = &s.providers[id];
            targets(s, id, q.session_id.as_deref(), Absent::Refuse)
                .map(|t| (t, e.name.clone().unwrap_or_default(), e.trust))
        }) else {
            return;
        };
        let (session, provider, trust) = match resolved {
            Ok((t, name, trust)) => (t.into_iter().next().unwrap_or_default(), name, trust),
            Err((code, message)) => return self.error(code, message, Some("stream.query")),
        };
        let last = q.last.unwrap_or(MAX_STREAM_QUERY_LAST);
        if last > MAX_STREAM_QUERY_LAST {
            self.core.diagnostics.limit_hit(Limit::StreamQueryLast);
            self.error(
                ErrorCode::PayloadTooLarge,
                format!("'last' may be at most {MAX_STREAM_QUERY_LAST}"),
                Some("stream.query"),
            );
            return;
        }
        let streams = &self.core.streams;
        let mut result = std::collections::BTreeMap::new();
        let keys: Vec<String> = match q.streams {
            Some(keys) => keys,
            None => streams
                .history(&session, None, 0)
                .into_keys()
                .filter(|k| k.ends_with(&format!("@{provider}")))
                .collect(),
        };
        for key in keys {
            let (stream, owner) = match key.split_once('@') {
                Some((s, p)) => (s.to_string(), p.to_string()),
                None => (key.clone(), provider.clone()),
            };
            // Cross-provider reads need internal trust (capability matrix).
            if owner != provider && trust != Trust::Internal {
                self.error(
                    ErrorCode::Unauthorized,
                    format!("Reading '{key}' needs internal trust: providers may read only their own streams"),
                    Some("stream.query"),
                );
                return;
            }
            let entries = streams
                .history(&session, Some(&format!("{stream}@{owner}")), last)
                .into_values()
                .next()
                .unwrap_or_default();
            result.insert(key, entries);
        }
        self.send(&GatewayMessage::StreamHistory(StreamHistory {
            query_id: q.query_id,
            streams: result,
        }));
    }

    /// Bad frames from an authenticated provider. Most get an error and nothing more; the
    /// ones that might have been a `tool.result` fall under the spec's malformed-result
    /// rule so no call can stay pending forever.
    fn on_bad_frame(&self, bytes: &[u8], e: DecodeError) -> Flow {
        match &e {
            DecodeError::UnknownType(_) => {
                self.error(e.code(), e.message(), e.type_name());
                Flow::Continue
            }
            DecodeError::InvalidMessage { type_name, .. } if type_name != "tool.result" => {
                self.error(e.code(), e.message(), e.type_name());
                Flow::Continue
            }
            DecodeError::InvalidMessage { .. } => {
                let id = peek(bytes)
                    .and_then(|p| p.id)
                    .and_then(|v| v.as_str().map(str::to_string));
                self.malformed_result(id, e.code(), e.message())
            }
            DecodeError::InvalidJson(_) => self.malformed_result(None, e.code(), e.message()),
        }
    }

    fn oversized(&self, bytes: &[u8]) -> Flow {
        self.core.diagnostics.limit_hit(Limit::PayloadSize);
        let message = format!(
            "Message is {} bytes; tool.result is limited to {MAX_TOOL_RESULT_BYTES} and other messages to {MAX_MESSAGE_BYTES}",
            bytes.len()
        );
        match peek(bytes) {
            Some(Peek {
                kind: Some(kind),
                id,
            }) if kind == "tool.result" => {
                let id = id.and_then(|v| v.as_str().map(str::to_string));
                self.malformed_result(id, ErrorCode::PayloadTooLarge, message)
            }
            Some(Peek {
                kind: Some(kind), ..
            }) => {
                self.error(ErrorCode::PayloadTooLarge, message, Some(&kind));
                Flow::Continue
            }
            _ => self.malformed_result(None, ErrorCode::PayloadTooLarge, message),
        }
    }

    /// The spec's rule for a broken frame that may have been a result: if it names a
    /// pending call, that call fails; otherwise with one call pending that call fails, and
    /// with several the provider is disconnected and all of them fail `DISCONNECTED`.
    fn malformed_result(&self, id: Option<String>, code: ErrorCode, message: String) -> Flow {
        self.error(code.clone(), message.clone(), Some("tool.result"));
        let fail = |id: &str| {
            self.link
                .calls
                .complete(id, Err(CallError::new(code.clone(), message.clone())))
        };
        if let Some(id) = id {
            if fail(&id) {
                return Flow::Continue;
            }
        }
        let pending = self.link.calls.ids();
        match pending.len() {
            0 => Flow::Continue,
            1 => {
                fail(&pending[0]);
                Flow::Continue
            }
            n => {
                tracing::warn!(provider = ?self.id, pending = n, "malformed message with several calls pending; disconnecting provider");
                Flow::Close
            }
        }
    }

    /// The connection is over: the provider leaves the registry, its tools leave its
    /// session, and every call still pending fails with `DISCONNECTED`.
    pub(super) fn disconnect(&self) {
        // A provider that leaves before confirming takes its pairing request with it.
        if let Some(pid) = &self.pairing {
            if self.core.state().pairing.remove_pending(pid) {
                tracing::info!(remote = %self.remote, pairing = %pid, "provider left before confirming its pairing");
                self.core.events.emit(GatewayEvent::PairingRemoved {
                    id: pid.clone(),
                    reason: "failed".into(),
                });
            }
        }
        let name = self.with_entry(|state, id| {
            let entry = state.providers.remove(id).expect("checked by with_entry");
            state.transforms.forget(id);
            self.core.stream_controls.forget(id);
            state.identity.disconnected(id);
            state.limits.forget(id);
            for sid in entry.bound_sessions() {
                detach(state, id, &sid);
            }
            if let Some(changed) = entry
                .pairing
                .as_deref()
                .and_then(|pid| state.pairing.disconnected(pid))
            {
                self.core.events.emit(GatewayEvent::PairingChanged(changed));
            }
            entry.name
        });
        let who = name.flatten().unwrap_or_else(|| "provider".into());
        self.link
            .calls
            .close(&format!("Provider '{who}' disconnected before answering"));
        // Pending gate checks fail closed.
        self.link.gates.close();
        if self.id.is_some() {
            self.core
                .events
                .emit(crate::events::GatewayEvent::StatusChanged);
            tracing::info!(provider = ?self.id, remote = %self.remote, "provider disconnected");
        }
    }
}

fn peek(bytes: &[u8]) -> Option<Peek> {
    serde_json::from_slice(bytes).ok()
}

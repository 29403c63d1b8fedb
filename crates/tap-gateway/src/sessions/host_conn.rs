//! One session-host connection (`/session`). Answers go through the host's [`HostEntry`],
//! never straight to the socket, so they are buffered while a dropped host may still
//! resume, and ordered with deliveries and tool-set updates.

use super::hosts::HostEntry;
use super::lifecycle;
use crate::auth::tokens;
use crate::hooks::decide::Decision;
use crate::socket::frame::frame;
use crate::socket::upgrade::WsStream;
use crate::state::Core;
use crate::tools::request::CallRequest;
use futures_util::{SinkExt, StreamExt};
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use tap_protocol::host::{
    HostAuth, HostAuthOk, HostError, HostEvent, HostRequest, HostToolProgress, HostToolResult,
    StatusReply, StreamsHistoryReply, ToolInvoke,
};
use tap_protocol::limits::{AUTH_TIMEOUT, STREAM_RETENTION};
use tap_protocol::{decode, ErrorCode, HOST_PROTOCOL_VERSION};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

pub(crate) async fn serve(core: Arc<Core>, mut ws: WsStream, remote: SocketAddr) {
    let (out, mut rx) = mpsc::unbounded_channel::<Message>();
    let mut conn = HostConn {
        core,
        out,
        attached: None,
        kill: CancellationToken::new(),
    };
    let stopping = conn.core.stopping.clone();
    let auth_deadline = tokio::time::sleep(AUTH_TIMEOUT);
    tokio::pin!(auth_deadline);
    loop {
        tokio::select! {
            biased;
            Some(msg) = rx.recv() => {
                if ws.feed(msg).await.is_err() { break; }
                while let Ok(m) = rx.try_recv() {
                    if ws.feed(m).await.is_err() { break; }
                }
                if ws.flush().await.is_err() { break; }
            }
            _ = conn.kill.cancelled() => break,
            _ = stopping.cancelled() => {
                // Flush what is queued (session.ended, final results) before closing.
                while let Ok(m) = rx.try_recv() {
                    if ws.feed(m).await.is_err() { break; }
                }
                let _ = ws.close(None).await;
                break;
            }
            _ = &mut auth_deadline, if conn.attached.is_none() => {
                conn.core.diagnostics.limit_hit(crate::diagnostics::Limit::AuthTimeout);
                conn.reply_direct(ErrorCode::AuthFailed, "No 'auth' within 10 seconds", None);
                while let Ok(m) = rx.try_recv() { let _ = ws.feed(m).await; }
                let _ = ws.close(None).await;
                break;
            }
            incoming = ws.next() => {
                let bytes = match incoming {
                    Some(Ok(Message::Text(t))) => t.into(),
                    Some(Ok(Message::Binary(b))) => b,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                let was_authed = conn.attached.is_some();
                let keep = conn.on_frame(&bytes);
                if !was_authed && conn.attached.is_some() {
                    ws.get_mut().lift_budget();
                }
                if !keep {
                    while let Ok(m) = rx.try_recv() { let _ = ws.feed(m).await; }
                    let _ = ws.close(None).await;
                    break;
                }
            }
        }
    }
    // Frames queued but never written go back in front of the outbox, so a host that
    // resumes still gets them.
    let mut unsent = Vec::new();
    while let Ok(m) = rx.try_recv() {
        unsent.push(m);
    }
    conn.detach(remote, unsent);
}

struct HostConn {
    core: Arc<Core>,
    out: mpsc::UnboundedSender<Message>,
    /// (host id, epoch) once authenticated.
    attached: Option<(String, u64)>,
    kill: CancellationToken,
}

impl HostConn {
    /// Errors before authentication go straight to the socket: there is no host yet.
    fn reply_direct(&self, code: ErrorCode, message: &str, reply_to: Option<&str>) {
        let e = HostEvent::Error(HostError {
            code,
            message: message.to_string(),
            reply_to: reply_to.map(str::to_string),
            request_id: None,
        });
        let _ = self.out.send(frame(&e));
    }

    fn host_id(&self) -> &str {
        &self.attached.as_ref().expect("authenticated").0
    }

    fn to_host(&self, event: &HostEvent) {
        send_to_host(&self.core, self.host_id(), event);
    }

    fn error(
        &self,
        code: ErrorCode,
        message: impl Into<String>,
        reply_to: &str,
        request_id: Option<&str>,
    ) {
        self.to_host(&HostEvent::Error(HostError {
            code,
            message: message.into(),
            reply_to: Some(reply_to.to_string()),
            request_id: request_id.map(str::to_string),
        }));
    }

    /// Returns false when the connection must close.
    fn on_frame(&mut self, bytes: &[u8]) -> bool {
        let msg = match decode::<HostRequest>(bytes, HostRequest::TYPES) {
            Ok(m) => m,
            Err(e) => {
                let request_id = serde_json::from_slice::<serde_json::Value>(bytes)
                    .ok()
                    .and_then(|v| {
                        let id = v.get("requestId").or_else(|| v.get("callId"))?;
                        id.as_str().map(str::to_string)
                    });
                let e = HostEvent::Error(HostError {
                    code: e.code(),
                    message: e.message(),
                    reply_to: e.type_name().map(str::to_string),
                    request_id,
                });
                match &self.attached {
                    Some((id, _)) => send_to_host(&self.core, id, &e),
                    None => {
                        let _ = self.out.send(frame(&e));
                    }
                }
                return true;
            }
        };
        if self.attached.is_none() {
            return match msg {
                HostRequest::Auth(a) => self.on_auth(a),
                other => {
                    self.reply_direct(
                        ErrorCode::AuthFailed,
                        &format!(
                            "The first message must be 'auth', got '{}'",
                            other.type_name()
                        ),
                        Some(other.type_name()),
                    );
                    false
                }
            };
        }
        let correlation = msg.correlation_id().map(str::to_string);
        let kind = msg.type_name();
        let result = self.dispatch(msg);
        if let Err((code, message)) = result {
            self.error(code, message, kind, correlation.as_deref());
        }
        true
    }

    fn on_auth(&mut self, a: HostAuth) -> bool {
        if a.protocol_version != HOST_PROTOCOL_VERSION {
            self.reply_direct(
                ErrorCode::UnsupportedVersion,
                &format!(
                    "This gateway speaks session-host protocolVersion {HOST_PROTOCOL_VERSION}; got {}",
                    a.protocol_version
                ),
                Some("auth"),
            );
            return false;
        }
        if !tokens::matches(&a.token, &self.core.secrets.host_token) {
            self.reply_direct(ErrorCode::AuthFailed, "Invalid host token", Some("auth"));
            return false;
        }
        let mut state = self.core.state();
        let resumed = a.resume_token.as_deref().and_then(|t| {
            state
                .hosts
                .values()
                .find(|h| tokens::matches(t, &h.resume_token))
                .map(|h| h.id.clone())
        });
        let (id, epoch, resumed_sessions) = match resumed {
            Some(id) => {
                let host = state.hosts.get_mut(&id).expect("found above");
                // A resume takes the host over from any connection still holding it.
                host.kill.cancel();
                host.kill = self.kill.clone();
                host.epoch += 1;
                host.out = Some(self.out.clone());
                let ok = HostEvent::AuthOk(HostAuthOk {
                    protocol_version: HOST_PROTOCOL_VERSION,
                    host_id: id.clone(),
                    resume_token: host.resume_token.clone(),
                    resumed: host.sessions.iter().cloned().collect(),
                });
                let _ = self.out.send(frame(&ok));
                if host.dropped > 0 {
                    tracing::warn!(host = %id, dropped = host.dropped, "host outbox overflowed while detached");
                }
                for (m, _) in host.outbox.drain(..) {
                    let _ = self.out.send(m);
                }
                let sessions: Vec<String> = host.sessions.iter().cloned().collect();
                (id, host.epoch, sessions)
            }
            None => {
                let id = crate::ids::short("h");
                let host = HostEntry {
                    id: id.clone(),
                    name: a.host_name.clone().unwrap_or_else(|| "host".into()),
                    resume_token: tokens::generate("hrt-"),
                    out: Some(self.out.clone()),
                    kill: self.kill.clone(),
                    epoch: 1,
                    outbox: VecDeque::new(),
                    dropped: 0,
                    sessions: HashSet::new(),
                    invocations: HashMap::new(),
                };
                let ok = HostEvent::AuthOk(HostAuthOk {
                    protocol_version: HOST_PROTOCOL_VERSION,
                    host_id: id.clone(),
                    resume_token: host.resume_token.clone(),
                    resumed: Vec::new(),
                });
                let _ = self.out.send(frame(&ok));
                state.hosts.insert(id.clone(), host);
                (id, 1, Vec::new())
            }
        };
        drop(state);
        tracing::debug!(host = %id, name = ?a.host_name, resumed = ?resumed_sessions, "session host connected");
        self.attached = Some((id, epoch));
        true
    }

    fn dispatch(&mut self, msg: HostRequest) -> Result<(), (ErrorCode, String)> {
        let host_id = self.host_id().to_string();
        match msg {
            HostRequest::Auth(_) => Err((ErrorCode::Unauthorized, "Already authenticated".into())),
            HostRequest::SessionRegister(r) => {
                let request_id = r.request_id.clone();
                lifecycle::register_session(&self.core, &host_id, &request_id, r).map(|_| ())
            }
            HostRequest::SessionEnd(e) => {
                owned_session(&self.core, &host_id, &e.session_id)?;
                let core = self.core.clone();
                self.core.tasks.spawn(async move {
                    lifecycle::end_session(
                        &core,
                        e.session_id,
                        Some(e.request_id),
                        "ended by its host".into(),
                    )
                    .await;
                });
                Ok(())
            }
            HostRequest::SessionState(s) => {
                owned_session(&self.core, &host_id, &s.session_id)?;
                lifecycle::set_busy(&self.core, &s.session_id, s.state)
            }
            HostRequest::SessionEvent(e) => {
                owned_session(&self.core, &host_id, &e.session_id)?;
                super::events::forward(&self.core, e);
                Ok(())
            }
            HostRequest::ToolInvoke(call) => self.invoke(host_id, call),
            HostRequest::ToolPrecheck(p) => self.precheck(host_id, p),
            HostRequest::ToolCancel(c) => {
                let state = self.core.state();
                if let Some(token) = state
                    .hosts
                    .get(&host_id)
                    .and_then(|h| h.invocations.get(&c.call_id))
                {
                    token.cancel();
                }
                Ok(())
            }
            HostRequest::StatusGet(r) => {
                let status = crate::status::snapshot(&self.core);
                self.to_host(&HostEvent::Status(StatusReply {
                    request_id: r.request_id,
                    status,
                }));
                Ok(())
            }
            HostRequest::StreamsHistory(r) => {
                if !self.core.state().sessions.contains_key(&r.session_id) {
                    return Err(crate::state::unknown_session(&r.session_id));
                }
                let last = r.last.unwrap_or(STREAM_RETENTION);
                let streams = self
                    .core
                    .streams
                    .history(&r.session_id, r.stream.as_deref(), last);
                self.to_host(&HostEvent::StreamsHistory(StreamsHistoryReply {
                    request_id: r.request_id,
                    session_id: r.session_id,
                    streams,
                }));
                Ok(())
            }
            // Any authenticated host may apply a session's prompt, as with `tool.invoke`
            // (`tap prompt` previews a session another host owns).
            HostRequest::PromptApply(p) => {
                if !self.core.state().sessions.contains_key(&p.session_id) {
                    return Err(crate::state::unknown_session(&p.session_id));
                }
                let core = self.core.clone();
                self.core.tasks.spawn(async move {
                    let reply = match crate::transforms::apply::apply_prompt(
                        &core,
                        &p.session_id,
                        p.sections,
                    )
                    .await
                    {
                        Ok(a) => HostEvent::PromptApplied(tap_protocol::host::PromptApplied {
                            request_id: p.request_id,
                            session_id: p.session_id,
                            prompt: p.prompt,
                            sections: a.sections,
                            context: a.context,
                        }),
                        Err((code, message)) => HostEvent::Error(HostError {
                            code,
                            message,
                            reply_to: Some("prompt.apply".into()),
                            request_id: Some(p.request_id),
                        }),
                    };
                    send_to_host(&core, &host_id, &reply);
                });
                Ok(())
            }
        }
    }

    fn invoke(&self, host_id: String, call: ToolInvoke) -> Result<(), (ErrorCode, String)> {
        if !call.args.is_object() {
            return Err((
                ErrorCode::InvalidJson,
                "'args' must be a JSON object".to_string(),
            ));
        }
        let cancel = CancellationToken::new();
        {
            let mut state = self.core.state();
            let host = state.hosts.get_mut(&host_id).expect("attached host exists");
            if host.invocations.contains_key(&call.call_id) {
                return Err((
                    ErrorCode::InvalidJson,
                    format!("callId '{}' is already in flight", call.call_id),
                ));
            }
            host.invocations
                .insert(call.call_id.clone(), cancel.clone());
        }
        let core = self.core.clone();
        self.core.invocations.spawn(async move {
            let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
            let call_id = call.call_id;
            let request = CallRequest {
                session_id: call.session_id,
                tool: call.tool,
                args: call.args,
                cancel,
                progress: Some(progress_tx),
            };
            let run = crate::tools::call::call_tool(&core, request);
            tokio::pin!(run);
            let outcome = loop {
                // Progress first: a provider's progress sent just before its result is
                // already queued when the result lands, and must reach the host before it.
                tokio::select! {
                    biased;
                    Some(message) = progress_rx.recv() => {
                        send_to_host(&core, &host_id, &HostEvent::ToolProgress(HostToolProgress {
                            call_id: call_id.clone(),
                            message,
                        }));
                    }
                    outcome = &mut run => break outcome,
                }
            };
            let result = match outcome {
                Ok(data) => HostToolResult {
                    call_id: call_id.clone(),
                    data: Some(data),
                    error: None,
                    error_code: None,
                },
                Err(e) => HostToolResult {
                    call_id: call_id.clone(),
                    data: None,
                    error: Some(e.message),
                    error_code: Some(e.code),
                },
            };
            let mut state = core.state();
            if let Some(host) = state.hosts.get_mut(&host_id) {
                host.invocations.remove(&call_id);
                host.send(&HostEvent::ToolResult(result));
            }
        });
        Ok(())
    }

    /// `tool.precheck` → `tool.decision`. Gates may take up to 5 s, so the answer comes
    /// from a task; other requests on this connection are not held up.
    fn precheck(
        &self,
        host_id: String,
        p: tap_protocol::host::ToolPrecheck,
    ) -> Result<(), (ErrorCode, String)> {
        use tap_protocol::host::{PrecheckDecision, ToolDecision};
        // Like `tool.invoke`, any host may ask about any session (`tap call` is a host of
        // its own); an unknown session is INVALID_SESSION from `pre_tool_use`.
        if !p.args.is_object() {
            return Err((
                ErrorCode::InvalidJson,
                "'args' must be a JSON object".to_string(),
            ));
        }
        let core = self.core.clone();
        self.core.invocations.spawn(async move {
            let event =
                match crate::hooks::decide::pre_tool_use(&core, &p.session_id, &p.tool, &p.args)
                    .await
                {
                    Ok(decision) => {
                        let (decision, reason, context) = match decision {
                            Decision::Allow => (PrecheckDecision::Allow, None, None),
                            Decision::Deny(r) => (PrecheckDecision::Deny, Some(r), None),
                            Decision::Context(c) => (PrecheckDecision::Context, None, Some(c)),
                        };
                        HostEvent::ToolDecision(ToolDecision {
                            request_id: p.request_id,
                            decision,
                            reason,
                            context,
                        })
                    }
                    Err(e) => HostEvent::Error(HostError {
                        code: e.code,
                        message: e.message,
                        reply_to: Some("tool.precheck".into()),
                        request_id: Some(p.request_id),
                    }),
                };
            send_to_host(&core, &host_id, &event);
        });
        Ok(())
    }

    /// The socket is gone. A host without sessions is forgotten (its calls cancelled); a
    /// host with sessions keeps them for the resume window, then they end.
    fn detach(&self, remote: SocketAddr, unsent: Vec<Message>) {
        let Some((id, epoch)) = self.attached.clone() else {
            return;
        };
        let mut state = self.core.state();
        let Some(host) = state.hosts.get_mut(&id) else {
            return;
        };
        if host.epoch != epoch {
            return; // another connection resumed this host
        }
        host.out = None;
        for m in unsent.into_iter().rev() {
            host.outbox.push_front((m, false));
        }
        if host.sessions.is_empty() {
            let host = state.hosts.remove(&id).expect("present");
            for t in host.invocations.values() {
                t.cancel();
            }
            tracing::debug!(host = %id, %remote, "session host disconnected");
            return;
        }
        drop(state);
        let grace = self.core.config.host_resume_grace;
        tracing::info!(host = %id, grace_s = grace.as_secs(), "session host dropped; its sessions wait for it to resume");
        let core = self.core.clone();
        let stopping = core.stopping.clone();
        self.core.tasks.spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(grace) => {}
                _ = stopping.cancelled() => return,
            }
            let sessions = {
                let mut state = core.state();
                let still_gone = state
                    .hosts
                    .get(&id)
                    .is_some_and(|h| h.epoch == epoch && h.out.is_none());
                if !still_gone {
                    return;
                }
                let host = state.hosts.remove(&id).expect("present");
                for t in host.invocations.values() {
                    t.cancel();
                }
                host.sessions
            };
            let endings = sessions.into_iter().map(|s| {
                lifecycle::end_session(&core, s, None, "its host did not come back".into())
            });
            futures_util::future::join_all(endings).await;
        });
    }
}

pub(crate) fn send_to_host(core: &Core, host_id: &str, event: &HostEvent) {
    if let Some(h) = core.state().hosts.get_mut(host_id) {
        h.send(event);
    }
}

/// Checks that `session_id` exists and belongs to `host_id`.
pub(crate) fn owned_session(
    core: &Core,
    host_id: &str,
    session_id: &str,
) -> Result<(), (ErrorCode, String)> {
    match core.state().sessions.get(session_id) {
        None => Err(crate::state::unknown_session(session_id)),
        Some(s) if s.host != host_id => Err((
            ErrorCode::Unauthorized,
            format!("Session '{session_id}' belongs to another host"),
        )),
        Some(_) => Ok(()),
    }
}

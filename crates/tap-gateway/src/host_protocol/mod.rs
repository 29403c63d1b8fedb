//! One session-host connection (`/session`), as a handler on the one connection loop.
//! `auth`: the host's identity and its resume; `calls`: `tool.invoke` and
//! `tool.precheck`; `detach`: the socket is gone, the host may still resume.
//! Answers go through the host's [`HostEntry`],
//! never straight to the socket, so they are buffered while a dropped host may still
//! resume, and ordered with deliveries and tool-set updates.

mod auth;
mod calls;
mod detach;
#[cfg(test)]
mod ledger_backpressure_tests;
mod mcp_results;
mod resume;
#[cfg(test)]
pub(crate) mod test_peer;

use crate::accept::Kind;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::sessions::lifecycle;
use crate::socket::conn::auth_timeout_message;
use crate::socket::conn::{Handler, Step};
use crate::socket::frame::frame;
use crate::socket::outbound::OutSender;
use crate::socket::upgrade::WsStream;
use crate::state::Core;
use std::net::SocketAddr;
use std::sync::Arc;
use tap_protocol::host::{HostError, HostEvent, HostRequest, StatusReply, StreamsHistoryReply};
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::{decode, ErrorCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// Serves one session-host socket until it closes. Not an `async fn`, so that the socket
/// and the connection are not kept twice (see `socket::conn::run`).
pub(crate) fn serve(
    core: Arc<Core>,
    ws: WsStream,
    remote: SocketAddr,
) -> impl std::future::Future<Output = ()> + Send {
    let kill = core.stopping.child_token();
    let (out, rx) = core.outbound_queue(Kind::Host, kill.clone());
    let conn = HostConn::new(core.clone(), remote, out, kill.clone());
    let socket = core.socket(ws, Kind::Host, remote, rx, kill);
    crate::socket::conn::run(socket, conn)
}

impl Handler for HostConn {
    fn on_frame(&mut self, bytes: &[u8]) -> Step {
        let was_authed = self.attached.is_some();
        if !self.handle(bytes) {
            return Step::Close(CloseCode::Policy, "authentication failed");
        }
        match (was_authed, self.attached.is_some()) {
            (false, true) => Step::Authed,
            _ => Step::Continue,
        }
    }

    fn on_auth_deadline(&mut self) {
        self.core.diagnostics.limit_hit(Limit::AuthTimeout);
        self.reply_direct(ErrorCode::AuthFailed, &auth_timeout_message(), None);
    }

    /// Frames queued but never written go back in front of the outbox, so a host that
    /// resumes still gets them.
    fn closed(self, unsent: Vec<Message>) {
        self.detach(unsent);
    }
}

pub(crate) struct HostConn {
    core: Arc<Core>,
    remote: SocketAddr,
    out: OutSender,
    /// (host id, epoch) once authenticated.
    attached: Option<(String, u64)>,
    kill: CancellationToken,
}

impl HostConn {
    /// A connection that has not authenticated yet, writing into `out` (the socket's
    /// queue; `crate::fuzzing` reads it directly).
    pub(crate) fn new(
        core: Arc<Core>,
        remote: SocketAddr,
        out: OutSender,
        kill: CancellationToken,
    ) -> Self {
        Self {
            core,
            remote,
            out,
            attached: None,
            kill,
        }
    }

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
    fn handle(&mut self, bytes: &[u8]) -> bool {
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
        if let Err(Error { code, message, .. }) = result {
            self.error(code, message, kind, correlation.as_deref());
        }
        true
    }

    fn dispatch(&mut self, msg: HostRequest) -> Result<(), Error> {
        let host_id = self.host_id().to_string();
        match msg {
            HostRequest::Auth(_) => {
                Err(Error::new(ErrorCode::Unauthorized, "Already authenticated"))
            }
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
                let report = crate::state::host_report::HostReport::checked(
                    s.mode,
                    s.model,
                    s.capabilities,
                )?;
                lifecycle::report_state(&self.core, &s.session_id, s.state, report)
            }
            HostRequest::SessionEvent(e) => {
                owned_session(&self.core, &host_id, &e.session_id)?;
                crate::sessions::session_events::forward(&self.core, e);
                Ok(())
            }
            HostRequest::ToolInvoke(call) => self.invoke(host_id, call),
            HostRequest::ToolPrecheck(p) => self.precheck(host_id, p),
            HostRequest::ApprovalAnswer(a) => {
                crate::state::approval_asks::answered(&self.core, &host_id, a)
            }
            HostRequest::SessionModeResult(r) => {
                crate::builtin::session_mode::result(&self.core, &host_id, r);
                Ok(())
            }
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
                        Err(Error { code, message, .. }) => HostEvent::Error(HostError {
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
}

pub(crate) fn send_to_host(core: &Core, host_id: &str, event: &HostEvent) {
    if let Some(h) = core.state().hosts.get_mut(host_id) {
        h.send(event);
    }
}

/// Checks that `session_id` exists and belongs to `host_id`.
pub(crate) fn owned_session(core: &Core, host_id: &str, session_id: &str) -> Result<(), Error> {
    match core.state().sessions.get(session_id) {
        None => Err(crate::state::unknown_session(session_id)),
        Some(s) if s.host != host_id => Err(Error::new(
            ErrorCode::Unauthorized,
            format!("Session '{session_id}' belongs to another host"),
        )),
        Some(_) => Ok(()),
    }
}

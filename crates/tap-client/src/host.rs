use futures_util::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicU64, Ordering};
use tap_protocol::host::{
    BusyState, GatewayStatus, HostAuth, HostAuthOk, HostError, HostEvent, HostRequest,
    HostToolCancel, HostToolResult, RequestRef, SessionEnd, SessionEnded, SessionRegister,
    SessionStateReport, StreamsHistoryReply, StreamsHistoryRequest, ToolInvoke,
};
use tap_protocol::provider::SessionInfo;
use tap_protocol::{Json, HOST_PROTOCOL_VERSION};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// Why a session-host request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be opened or broke.
    #[error("cannot reach the gateway: {0}")]
    Connect(String),
    /// The gateway refused the request.
    #[error("{}: {}", .0.code, .0.message)]
    Refused(HostError),
    /// The connection closed before the answer came.
    #[error("the gateway closed the connection")]
    Closed,
    /// The gateway answered something this client did not expect.
    #[error("unexpected answer from the gateway: {0}")]
    Unexpected(String),
}

type Waiters = crate::mux::Waiters<HostEvent>;

/// A connected, authenticated session host.
///
/// Answers to requests are matched by `requestId` / `callId`; everything else the gateway
/// sends (tool sets, deliveries, progress, session ends it was not asked for) arrives on
/// [`HostClient::next_event`].
pub struct HostClient {
    out: crate::outbox::Outbox,
    waiters: Waiters,
    events: mpsc::UnboundedReceiver<HostEvent>,
    next_id: AtomicU64,
    welcome: HostAuthOk,
}

impl HostClient {
    /// Connects to `url` (`ws://…/session`) and authenticates with the host token.
    pub async fn connect(
        url: &str,
        token: &str,
        host_name: &str,
        resume_token: Option<String>,
    ) -> Result<Self, ClientError> {
        let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .map_err(|e| ClientError::Connect(e.to_string()))?;
        let (mut sink, mut stream) = ws.split();
        let auth = HostRequest::Auth(HostAuth {
            token: token.to_string(),
            protocol_version: HOST_PROTOCOL_VERSION,
            host_name: Some(host_name.to_string()),
            resume_token,
            // Calls do not outlive a connection here (they end `Closed`), so there is
            // nothing to list.
            pending_calls: None,
        });
        sink.send(Message::text(
            serde_json::to_string(&auth).expect("serializes"),
        ))
        .await
        .map_err(|e| ClientError::Connect(e.to_string()))?;
        let welcome = loop {
            match stream.next().await {
                Some(Ok(Message::Text(t))) => match serde_json::from_str::<HostEvent>(&t) {
                    Ok(HostEvent::AuthOk(ok)) => break ok,
                    Ok(HostEvent::Error(e)) => return Err(ClientError::Refused(e)),
                    _ => return Err(ClientError::Unexpected(t.to_string())),
                },
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(ClientError::Connect(e.to_string())),
                None => return Err(ClientError::Closed),
            }
        };
        let (mux, events) = crate::mux::start(sink, stream, classify);
        Ok(Self {
            out: mux.out,
            waiters: mux.waiters,
            events,
            next_id: AtomicU64::new(1),
            welcome,
        })
    }

    /// The gateway's welcome: host id and resume token.
    pub fn welcome(&self) -> &HostAuthOk {
        &self.welcome
    }

    /// Next unsolicited event; `None` once the connection is closed.
    pub async fn next_event(&mut self) -> Option<HostEvent> {
        self.events.recv().await
    }

    fn fresh_id(&self, tag: &str) -> String {
        format!("{tag}-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn send(&self, req: &HostRequest) -> Result<(), ClientError> {
        let text = serde_json::to_string(req).expect("serializes");
        self.out
            .send(Message::text(text))
            .map_err(|_| ClientError::Closed)
    }

    async fn request(&self, id: String, req: HostRequest) -> Result<HostEvent, ClientError> {
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().unwrap().insert(id.clone(), tx);
        if let Err(e) = self.send(&req) {
            self.waiters.lock().unwrap().remove(&id);
            return Err(e);
        }
        match rx.await {
            Ok(HostEvent::Error(e)) => Err(ClientError::Refused(e)),
            Ok(event) => Ok(event),
            Err(_) => Err(ClientError::Closed),
        }
    }

    /// Registers a session.
    pub async fn register_session(&self, req: SessionRegister) -> Result<SessionInfo, ClientError> {
        let id = self.fresh_id("reg");
        let req = SessionRegister {
            request_id: id.clone(),
            ..req
        };
        match self.request(id, HostRequest::SessionRegister(req)).await? {
            HostEvent::SessionRegistered(r) => Ok(r.session),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Ends a session; returns once providers had their shutdown deadline.
    pub async fn end_session(&self, session_id: &str) -> Result<SessionEnded, ClientError> {
        let id = self.fresh_id("end");
        let req = HostRequest::SessionEnd(SessionEnd {
            request_id: id.clone(),
            session_id: session_id.to_string(),
        });
        match self.request(id, req).await? {
            HostEvent::SessionEnded(e) => Ok(e),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Reports busy / idle.
    pub fn set_state(&self, session_id: &str, state: BusyState) -> Result<(), ClientError> {
        self.send(&HostRequest::SessionState(SessionStateReport {
            session_id: session_id.to_string(),
            state,
            mode: None,
            model: None,
            capabilities: None,
        }))
    }

    /// Reports busy / idle with what else changed (the agent's mode, its model, what the
    /// host can do).
    pub fn report_state(&self, report: SessionStateReport) -> Result<(), ClientError> {
        self.send(&HostRequest::SessionState(report))
    }

    /// Reports a session event (`user.message`, `tool.execution_complete`, ...), which
    /// the gateway forwards to the providers that subscribed to it.
    pub fn session_event(
        &self,
        session_id: &str,
        event: &str,
        data: serde_json::Value,
    ) -> Result<(), ClientError> {
        self.send(&HostRequest::SessionEvent(
            tap_protocol::host::HostSessionEvent {
                session_id: session_id.to_string(),
                event: event.to_string(),
                data,
            },
        ))
    }

    /// Answers an `approval.ask` (`approval.answer`); the gateway says nothing back, except
    /// an `error` event when the approval is of a session another host owns.
    pub fn answer_approval(
        &self,
        approval_id: &str,
        answer: tap_protocol::host::HostApprovalAnswer,
    ) -> Result<(), ClientError> {
        self.send(&HostRequest::ApprovalAnswer(
            tap_protocol::host::ApprovalAnswer {
                approval_id: approval_id.to_string(),
                answer,
            },
        ))
    }

    /// Answers a `session.mode.set` (`session.mode.result`).
    pub fn mode_result(
        &self,
        result: tap_protocol::host::SessionModeResult,
    ) -> Result<(), ClientError> {
        self.send(&HostRequest::SessionModeResult(result))
    }

    /// Starts an invocation and returns its `callId` without waiting.
    pub fn start_invoke(
        &self,
        session_id: &str,
        tool: &str,
        args: Json,
    ) -> Result<(String, oneshot::Receiver<HostEvent>), ClientError> {
        self.start_invoke_traced(session_id, tool, args, None)
    }

    /// [`HostClient::start_invoke`] under the caller's W3C trace context: the gateway's
    /// spans for the call join that trace, under that span.
    pub fn start_invoke_traced(
        &self,
        session_id: &str,
        tool: &str,
        args: Json,
        traceparent: Option<&str>,
    ) -> Result<(String, oneshot::Receiver<HostEvent>), ClientError> {
        let call_id = self.fresh_id("call");
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().unwrap().insert(call_id.clone(), tx);
        self.send(&HostRequest::ToolInvoke(ToolInvoke {
            call_id: call_id.clone(),
            session_id: session_id.to_string(),
            tool: tool.to_string(),
            args,
            traceparent: traceparent.map(str::to_string),
        }))?;
        Ok((call_id, rx))
    }

    /// Invokes a tool and waits for its one terminal result.
    pub async fn invoke(
        &self,
        session_id: &str,
        tool: &str,
        args: Json,
    ) -> Result<HostToolResult, ClientError> {
        let (_, rx) = self.start_invoke(session_id, tool, args)?;
        match rx.await {
            Ok(HostEvent::ToolResult(r)) => Ok(r),
            Ok(HostEvent::Error(e)) => Err(ClientError::Refused(e)),
            Ok(other) => Err(ClientError::Unexpected(format!("{other:?}"))),
            Err(_) => Err(ClientError::Closed),
        }
    }

    /// Asks for the pre-tool-use decision (`tool.precheck` → `tool.decision`): what the
    /// session's hook rules say about using `tool` with `args`. Gates may take up to 5 s.
    pub async fn precheck(
        &self,
        session_id: &str,
        tool: &str,
        args: Json,
    ) -> Result<tap_protocol::host::ToolDecision, ClientError> {
        let request_id = self.fresh_id("pre");
        let req = HostRequest::ToolPrecheck(tap_protocol::host::ToolPrecheck {
            request_id: request_id.clone(),
            session_id: session_id.to_string(),
            tool: tool.to_string(),
            args,
        });
        match self.request(request_id, req).await? {
            HostEvent::ToolDecision(d) => Ok(d),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Cancels an invocation started by this client.
    pub fn cancel(&self, call_id: &str) -> Result<(), ClientError> {
        self.send(&HostRequest::ToolCancel(HostToolCancel {
            call_id: call_id.to_string(),
        }))
    }

    /// The gateway's status snapshot.
    pub async fn status(&self) -> Result<GatewayStatus, ClientError> {
        let id = self.fresh_id("status");
        let req = HostRequest::StatusGet(RequestRef {
            request_id: id.clone(),
        });
        match self.request(id, req).await? {
            HostEvent::Status(s) => Ok(s.status),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Stream history of a session (`stream` or `stream@provider`, all when `None`).
    pub async fn streams_history(
        &self,
        session_id: &str,
        stream: Option<&str>,
        last: Option<usize>,
    ) -> Result<StreamsHistoryReply, ClientError> {
        let id = self.fresh_id("hist");
        let req = HostRequest::StreamsHistory(StreamsHistoryRequest {
            request_id: id.clone(),
            session_id: session_id.to_string(),
            stream: stream.map(str::to_string),
            last,
        });
        match self.request(id, req).await? {
            HostEvent::StreamsHistory(h) => Ok(h),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Applies the session's prompt transforms to `sections` and collects its context,
    /// as a session host does on prompt submission (`prompt.apply`).
    pub async fn apply_prompt(
        &self,
        session_id: &str,
        prompt: &str,
        sections: std::collections::BTreeMap<String, String>,
    ) -> Result<tap_protocol::host::PromptApplied, ClientError> {
        let id = self.fresh_id("prompt");
        let req = HostRequest::PromptApply(tap_protocol::host::PromptApply {
            request_id: id.clone(),
            session_id: session_id.to_string(),
            prompt: prompt.to_string(),
            sections,
        });
        match self.request(id, req).await? {
            HostEvent::PromptApplied(a) => Ok(a),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }
}

/// Answers go to the request with their `requestId` / `callId`; an answer nobody waits
/// for (and everything else) is an event.
fn classify(text: &str) -> Option<crate::mux::Frame<HostEvent, HostEvent>> {
    let event = serde_json::from_str::<HostEvent>(text).ok()?;
    let key = match &event {
        HostEvent::SessionRegistered(m) => Some(m.request_id.clone()),
        HostEvent::SessionEnded(m) => m.request_id.clone(),
        HostEvent::ToolResult(m) => Some(m.call_id.clone()),
        HostEvent::Status(m) => Some(m.request_id.clone()),
        HostEvent::StreamsHistory(m) => Some(m.request_id.clone()),
        HostEvent::ToolDecision(m) => Some(m.request_id.clone()),
        HostEvent::PromptApplied(m) => Some(m.request_id.clone()),
        HostEvent::Error(m) => m.request_id.clone(),
        _ => None,
    };
    Some(match key {
        Some(key) => crate::mux::Frame::Answer {
            key,
            answer: event,
            unclaimed: Some,
        },
        None => crate::mux::Frame::Event(event),
    })
}

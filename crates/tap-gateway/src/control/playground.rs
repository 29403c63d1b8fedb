//! The panel's tool playground (`playground.*`): sessions a control connection holds, and
//! tool calls it makes through the same path as a session host's.
//!
//! A session is held with the MCP facade's `attach` (join by id or label, or register one
//! labelled with the name), so it lives exactly as long as an MCP client's would: released
//! on `playground.close` or when the connection closes, then ended (if the playground
//! registered it) once nobody has held it for the resume window.
//!
//! Handlers never await, and a call can take up to its tool's timeout, so each call runs in
//! a task on `invocations`. The task hands its progress and its outcome back through a
//! channel the connection drains in `background`: progress events get their `seq` there,
//! and since both travel the one channel, a call's progress always precedes its answer.

use crate::gateway::Gateway;
use crate::mcp::attach::{self, Presence};
use crate::request::{CallError, CallRequest};
use crate::state::mcp_binding::Binding;
use crate::state::Core;
use crate::tools::traced;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tap_protocol::control::{
    ControlError, ControlEvent, Later, PlaygroundCallError, PlaygroundCallParams,
    PlaygroundCallResult, PlaygroundOpenParams, PlaygroundSession, PlaygroundTool, PlaygroundTools,
    ServerFrame,
};
use tap_protocol::limits::{
    MAX_PLAYGROUND_CALLS, MAX_PLAYGROUND_CALL_ID_LEN, MAX_PLAYGROUND_SESSIONS,
};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a call task hands back to its connection.
pub(super) enum Outgoing {
    /// A `tool.progress` of the call, to send as a `playground.progress` event.
    Progress { call_id: String, message: String },
    /// The call ended: the response to the `playground.call` request `request_id`.
    Done {
        request_id: String,
        result: PlaygroundCallResult,
    },
    /// The answer to another `@later` request (`mcpServers.signIn`, …), ready to send.
    Answer(ServerFrame),
}

/// One control connection's playground: what it holds and what it has in flight.
pub(super) struct Playground {
    /// Held sessions by session id.
    held: HashMap<String, Presence>,
    /// Calls in flight by `callId`; removed when their `Done` is sent.
    calls: HashMap<String, CancellationToken>,
    tx: mpsc::UnboundedSender<Outgoing>,
    rx: mpsc::UnboundedReceiver<Outgoing>,
}

impl Default for Playground {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            held: HashMap::new(),
            calls: HashMap::new(),
            tx,
            rx,
        }
    }
}

impl Drop for Playground {
    /// The connection closed: its calls are cancelled (their providers get `tool.cancel`);
    /// dropping `held` releases its sessions.
    fn drop(&mut self) {
        for cancel in self.calls.values() {
            cancel.cancel();
        }
    }
}

impl Playground {
    pub fn open(
        &mut self,
        core: &Arc<Core>,
        p: PlaygroundOpenParams,
    ) -> Result<PlaygroundSession, ControlError> {
        let name = p.name.trim();
        let again = self
            .held
            .values()
            .any(|h| h.binding.name == name || h.binding.session_id == name);
        if !again && self.held.len() >= MAX_PLAYGROUND_SESSIONS {
            return Err(ControlError::new(
                ErrorCode::RateLimited,
                format!(
                    "This connection already holds {MAX_PLAYGROUND_SESSIONS} playground sessions; close one first"
                ),
            ));
        }
        let presence = attach::attach(core, name, p.cwd, None).map_err(ControlError::from)?;
        let session = PlaygroundSession {
            session_id: presence.binding.session_id.clone(),
            name: presence.binding.name.clone(),
            owned: presence.binding.owns_session(),
        };
        // Opening a held session again keeps one hold: the old presence is dropped after
        // the new one counts, so the session is never released in between.
        self.held.insert(session.session_id.clone(), presence);
        Ok(session)
    }

    pub fn close(&mut self, session_id: &str) -> Result<(), ControlError> {
        match self.held.remove(session_id) {
            Some(_) => Ok(()),
            None => Err(ControlError::new(
                ErrorCode::NotFound,
                format!("This connection holds no playground session '{session_id}'"),
            )),
        }
    }

    pub fn cancel(&mut self, call_id: &str) -> Result<(), ControlError> {
        match self.calls.get(call_id) {
            Some(cancel) => {
                cancel.cancel();
                Ok(())
            }
            None => Err(ControlError::new(
                ErrorCode::NotFound,
                format!("No call '{call_id}' is in flight on this connection"),
            )),
        }
    }

    /// Checks the request, then starts the call in a task; its answer comes through
    /// [`Self::next`]. Unknown sessions and tools are refused here with a clear error;
    /// arguments are checked against the tool's schema on the call path itself, so a
    /// mismatch is the call's `INVALID_JSON` outcome, as a session host would get it.
    pub fn call(
        &mut self,
        gw: &Gateway,
        request_id: &str,
        p: PlaygroundCallParams,
    ) -> Result<Later<PlaygroundCallResult>, ControlError> {
        let core = gw.core();
        let invalid = |m: String| Err(ControlError::new(ErrorCode::InvalidJson, m));
        if p.call_id.is_empty() || p.call_id.len() > MAX_PLAYGROUND_CALL_ID_LEN {
            return invalid(format!(
                "'callId' must be 1 to {MAX_PLAYGROUND_CALL_ID_LEN} characters"
            ));
        }
        if self.calls.contains_key(&p.call_id) {
            return invalid(format!("callId '{}' is already in flight", p.call_id));
        }
        if self.calls.len() >= MAX_PLAYGROUND_CALLS {
            return Err(ControlError::new(
                ErrorCode::RateLimited,
                format!("{MAX_PLAYGROUND_CALLS} calls are already in flight on this connection"),
            ));
        }
        if !p.args.is_object() {
            return invalid("'args' must be a JSON object".into());
        }
        let mcp_result = {
            let state = core.state();
            let session = state
                .live_session(&p.session_id)
                .map_err(ControlError::from)?;
            let Some(tool) = session.tools.get(&p.tool) else {
                return Err(ControlError::new(
                    ErrorCode::NotFound,
                    format!("Session '{}' has no tool '{}'", p.session_id, p.tool),
                ));
            };
            tool.def.result_format == Some(tap_protocol::provider::ResultFormat::Mcp)
        };
        let cancel = CancellationToken::new();
        self.calls.insert(p.call_id.clone(), cancel.clone());
        let binding = self.held.get(&p.session_id).map(|h| h.binding.clone());
        let (gw, tx, request_id) = (gw.clone(), self.tx.clone(), request_id.to_string());
        core.invocations.spawn(async move {
            let started = Instant::now();
            let call_id = p.call_id.clone();
            let (outcome, context, trace_id) = run(&gw, binding.as_deref(), p, cancel, &tx).await;
            let (data, error) = match outcome {
                Ok(data) => {
                    let error = mcp_result.then(|| tool_error(&data)).flatten();
                    (Some(data), error)
                }
                Err(e) => (
                    None,
                    Some(PlaygroundCallError {
                        code: e.code,
                        message: e.message,
                    }),
                ),
            };
            let result = PlaygroundCallResult {
                call_id,
                duration_ms: started.elapsed().as_millis() as u64,
                data,
                error,
                context,
                trace_id: Some(trace_id),
            };
            // The connection is gone: nobody to tell.
            let _ = tx.send(Outgoing::Done { request_id, result });
        });
        Ok(Later::accepted())
    }

    /// The next progress event or call answer to send; pending while there is none.
    /// Cancel-safe.
    pub async fn next(&mut self) -> Frame {
        // `self` holds a sender, so the channel never closes.
        match self.rx.recv().await.expect("the playground holds a sender") {
            Outgoing::Progress { call_id, message } => {
                Frame::Event(ControlEvent::PlaygroundProgress { call_id, message })
            }
            Outgoing::Done { request_id, result } => {
                self.calls.remove(&result.call_id);
                Frame::Response(ServerFrame::result(request_id, result))
            }
            Outgoing::Answer(frame) => Frame::Response(frame),
        }
    }

    /// Answers the `@later` request `request_id` with what `work` gives, once it has run
    /// (on `invocations`: handlers never await). Its answer travels the connection's one
    /// channel, like a call's.
    pub fn answer_later<T, F>(&self, gw: &Gateway, request_id: &str, work: F) -> Later<T>
    where
        T: serde::Serialize,
        F: std::future::Future<Output = Result<T, crate::error::Error>> + Send + 'static,
    {
        let (tx, request_id) = (self.tx.clone(), request_id.to_string());
        gw.core().invocations.spawn(async move {
            let frame = match work.await {
                Ok(result) => ServerFrame::result(request_id, result),
                Err(e) => ServerFrame::error(Some(request_id), e.into()),
            };
            let _ = tx.send(Outgoing::Answer(frame));
        });
        Later::accepted()
    }

    /// The tools of a live session.
    pub fn tools(core: &Core, session_id: &str) -> Result<PlaygroundTools, ControlError> {
        let state = core.state();
        let session = state.live_session(session_id).map_err(ControlError::from)?;
        let tools = session
            .host_tools(core.config.default_tool_timeout)
            .into_iter()
            .map(|t| PlaygroundTool {
                name: t.name,
                description: t.description,
                parameters: t.parameters.to_value(),
                provider: t.provider,
                timeout_ms: t.timeout_ms,
            })
            .collect();
        Ok(PlaygroundTools {
            session_id: session_id.to_string(),
            tools,
        })
    }
}

/// An MCP server's result with `isError: true`: the call failed (`TOOL_ERROR`, its text as
/// the message), as a session host is told; the result object is shown beside it.
fn tool_error(data: &Json) -> Option<PlaygroundCallError> {
    if !traced::reported_failure(data) {
        return None;
    }
    Some(PlaygroundCallError {
        code: ErrorCode::Other(traced::TOOL_ERROR.into()),
        message: traced::failure_text(data),
    })
}

/// What the connection sends for an [`Outgoing`].
pub(super) enum Frame {
    Event(ControlEvent),
    Response(ServerFrame),
}

/// The hook precheck, then the call path, as the MCP facade runs a call: a deny is the
/// call's `DENIED` outcome; context rides along with the result.
async fn run(
    gw: &Gateway,
    binding: Option<&Binding>,
    p: PlaygroundCallParams,
    cancel: CancellationToken,
    tx: &mpsc::UnboundedSender<Outgoing>,
) -> (Result<Json, CallError>, Option<String>, String) {
    let cancelled = || CallError::new(ErrorCode::Cancelled, "The call was cancelled");
    let mut root = traced::open_call(gw.core(), &p.session_id, &p.tool, None, "playground");
    let trace_id = root.context().trace_hex();
    let context = tokio::select! {
        c = gw.precheck_call(&p.session_id, &p.tool, &p.args, &root) => match c {
            Ok(context) => context,
            Err(e) => {
                let outcome = Err(e);
                traced::end(root, &outcome);
                return (outcome, None, trace_id);
            }
        },
        _ = cancel.cancelled() => {
            let outcome = Err(cancelled());
            traced::end(root, &outcome);
            return (outcome, None, trace_id);
        }
    };
    // A session the playground registered is busy while one of its calls runs, so push
    // pacing (`inject` waits for idle) holds for it as for any agent.
    let _busy = binding.map(|b| attach::busy(gw.core(), b));
    let call_id = p.call_id;
    let request = CallRequest {
        session_id: p.session_id,
        tool: p.tool,
        args: p.args,
        cancel,
        progress: None,
        traceparent: None,
        // The user at the panel: what the user owns is theirs to change.
        caller: crate::request::Caller::User,
    };
    let outcome = gw
        .call_tool_reporting(request, &mut root, |message| {
            let call_id = call_id.clone();
            let _ = tx.send(Outgoing::Progress { call_id, message });
            std::future::ready(())
        })
        .await;
    traced::end_call(root, &outcome);
    (outcome, context, trace_id)
}

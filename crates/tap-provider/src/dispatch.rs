//! What the gateway asks a provider to decide: tool calls, gate checks and callback
//! transforms. Each handler runs in a task of its own, so a slow or panicking one never stops
//! the connection; its answer goes back through the outbox, stamped with its connection.

use crate::errors::ToolError;
use crate::outbox::{Outbox, Outgoing};
use crate::state::Shared;
use crate::tool::CallContext;
use crate::types::Event;
use crate::Verdict;
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::provider::{
    GateCheck, GateResult, ProviderMessage, ToolCall, ToolResult, TransformRequest, TransformResult,
};
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

/// What a handler's task needs to answer.
pub(crate) struct Answer {
    pub shared: Arc<Shared>,
    pub outbox: Outbox,
    pub generation: u64,
}

impl Answer {
    fn send(&self, msg: ProviderMessage) {
        let _ = self.outbox.send(Outgoing {
            generation: self.generation,
            msg,
        });
    }
}

fn failed(id: String, e: ToolError) -> ToolResult {
    ToolResult {
        id,
        error: Some(e.message),
        error_code: Some(e.code),
        retryable: e.retryable.then_some(true),
        ..Default::default()
    }
}

/// Starts call `c`'s handler after checking its arguments; returns the token that cancels
/// it (`tool.cancel`, a drop), or `None` when it was answered at once.
pub(crate) fn call(a: Answer, c: ToolCall) -> Option<CancellationToken> {
    let tool = a.shared.decl().tool(&c.tool);
    let Some(tool) = tool else {
        let e = ToolError::new("NOT_FOUND", format!("No tool '{}'", c.tool));
        a.send(ProviderMessage::ToolResult(failed(c.id, e)));
        return None;
    };
    if let Err(e) = tool.check(&c.args) {
        a.send(ProviderMessage::ToolResult(failed(c.id, e)));
        return None;
    }
    let cancelled = CancellationToken::new();
    let ctx = CallContext {
        call_id: c.id.clone(),
        session_id: c.session_id.clone(),
        cancelled: cancelled.clone(),
        outbox: a.outbox.clone(),
        generation: a.generation,
        persist_dir: a.shared.binding().persist_dir.clone(),
    };
    let timeout = tool.def.timeout.map(Duration::from_millis);
    let handler = tokio::spawn((tool.handler)(c.args, ctx));
    let abort = handler.abort_handle();
    let token = cancelled.clone();
    tokio::spawn(async move {
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let cancel = || ToolError::new("CANCELLED", "The call was cancelled");
        let outcome = tokio::select! {
            joined = handler => match joined {
                Ok(r) => r,
                Err(e) if e.is_panic() => Err(ToolError::internal(panic_message("handler", e.into_panic()))),
                Err(_) => Err(cancel()),
            },
            _ = cancelled.cancelled() => {
                abort.abort();
                Err(cancel())
            }
            _ = deadline => {
                cancelled.cancel();
                abort.abort();
                Err(ToolError::new("TIMEOUT", "The handler did not finish within the tool's timeout"))
            }
        };
        let id = c.id;
        let result = match outcome.and_then(|out| out.into_result(id.clone(), &c.tool)) {
            Ok(r) => r,
            Err(e) => failed(id, e),
        };
        a.send(ProviderMessage::ToolResult(result));
    });
    Some(token)
}

/// Answers a `gate.check` with its gate's handler: a gate without one, or whose handler
/// panics, denies (a gate guards something; silence must not let it through).
pub(crate) fn gate(a: Answer, check: GateCheck) {
    let id = check.gate_id.clone().unwrap_or_default();
    let handler = a.shared.decl().gates.get(&id).cloned();
    let name = a.shared.config.name.clone();
    tokio::spawn(async move {
        let verdict = match handler {
            None => Verdict::Deny(format!("Provider '{name}' has no handler for gate '{id}'")),
            Some(h) => match tokio::spawn(h(check.clone())).await {
                Ok(v) => v,
                Err(e) => Verdict::Deny(format!(
                    "Gate '{id}' failed: {}",
                    panic_message(
                        "gate",
                        e.try_into_panic().unwrap_or_else(|_| Box::new("cancelled"))
                    )
                )),
            },
        };
        let (decision, reason) = verdict.into_wire();
        a.send(ProviderMessage::GateResult(GateResult {
            gate_id: check.gate_id,
            call_id: check.call_id,
            decision,
            reason,
        }));
    });
}

/// Answers a `transform.request` with its section's handler. Without one (a static
/// transform, or a callback declared through [`crate::Builder::hooks`]) there is no answer:
/// the gateway keeps the section as it was after 2 s. A panicking handler is reported as
/// an [`Event::Error`] and likewise left unanswered.
pub(crate) fn transform(a: Answer, req: TransformRequest) {
    let handler = (a.shared.decl().transforms.get(&req.section)).and_then(|t| t.handler.clone());
    let Some(handler) = handler else {
        return;
    };
    tokio::spawn(async move {
        let section = req.section.clone();
        let call_id = req.call_id.clone();
        match tokio::spawn(handler(req)).await {
            Ok(content) => a.send(ProviderMessage::TransformResult(TransformResult {
                call_id,
                content,
            })),
            Err(e) => a.shared.emit(Event::Error {
                code: ErrorCode::Internal,
                message: format!(
                    "Transform '{section}' failed: {}",
                    panic_message(
                        "transform",
                        e.try_into_panic().unwrap_or_else(|_| Box::new("cancelled"))
                    )
                ),
                reply_to: Some("transform.request".into()),
            }),
        }
    });
}

fn panic_message(what: &str, p: Box<dyn std::any::Any + Send>) -> String {
    let why = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into());
    format!("The {what} panicked: {why}")
}

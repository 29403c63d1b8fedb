use super::PendingCall;
use crate::gateway::Gateway;
use std::time::Duration;
use tap_protocol::provider::{GatewayMessage, ToolCall, ToolCancel};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A tool invocation from a session host (or from in-process code).
#[derive(Debug, Default)]
pub struct CallRequest {
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Json,
    /// Cancelled by the caller: the provider gets `tool.cancel`, the call ends `CANCELLED`.
    pub cancel: CancellationToken,
    /// Where `tool.progress` messages go.
    pub progress: Option<mpsc::UnboundedSender<String>>,
}

/// The failure outcome of a call: a spec error code and a human message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    /// `NOT_FOUND`, `TIMEOUT`, `CANCELLED`, `DISCONNECTED`, `INTERNAL`, a provider's own code…
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
}

impl From<(ErrorCode, String)> for CallError {
    fn from((code, message): (ErrorCode, String)) -> Self {
        Self { code, message }
    }
}

impl CallError {
    /// A call error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl Gateway {
    /// Runs one tool call to its single terminal outcome: the provider's result, a timeout
    /// (the provider gets `tool.cancel`), a cancellation by the caller, or the provider's
    /// disconnect. This is the in-process call path; the session-host socket is a thin
    /// adapter over it.
    pub async fn call_tool(&self, req: CallRequest) -> Result<Json, CallError> {
        let route = self.route(&req.session_id, &req.tool)?;
        // The timeout covers time spent queued for a concurrency slot; the slot is held
        // until this function returns (the call's terminal outcome).
        let deadline = tokio::time::Instant::now() + route.timeout;
        let _slot =
            super::concurrency::acquire(self, &req.session_id, &req.tool, deadline, &req.cancel)
                .await?;
        // A queued call may have waited: route again (the tool may have moved or gone).
        let route = match &_slot {
            Some(_) => self.route(&req.session_id, &req.tool)?,
            None => route,
        };
        let id = self.shared().ids.next("c");
        let frame = crate::providers::frame(&GatewayMessage::ToolCall(ToolCall {
            id: id.clone(),
            session_id: req.session_id.clone(),
            tool: req.tool.clone(),
            args: req.args,
        }));
        let (done_tx, mut done_rx) = oneshot::channel();
        let pending = PendingCall {
            session_id: req.session_id.clone(),
            done: done_tx,
            progress: req.progress,
        };
        if route.link.calls.insert(id.clone(), pending).is_err() {
            return Err(disconnected(&route.provider_name));
        }
        if route.link.out.send(frame).is_err() {
            route.link.calls.take(&id);
            return Err(disconnected(&route.provider_name));
        }

        let give_up = tokio::select! {
            outcome = &mut done_rx => return outcome.unwrap_or_else(|_| Err(disconnected(&route.provider_name))),
            _ = tokio::time::sleep_until(deadline) => {
                (ErrorCode::Timeout, "timeout", format!(
                    "Tool '{}' did not answer within {} ms", req.tool, route.timeout.as_millis()))
            }
            _ = req.cancel.cancelled() => {
                (ErrorCode::Cancelled, "cancelled", format!("Call to '{}' was cancelled", req.tool))
            }
        };
        let (code, reason, message) = give_up;
        // Whoever takes the entry owns the outcome. If the result won the race, use it.
        if route.link.calls.take(&id).is_none() {
            return done_rx
                .await
                .unwrap_or_else(|_| Err(disconnected(&route.provider_name)));
        }
        let cancel = GatewayMessage::ToolCancel(ToolCancel {
            id,
            session_id: req.session_id,
            reason: reason.to_string(),
        });
        let _ = route.link.out.send(crate::providers::frame(&cancel));
        Err(CallError::new(code, message))
    }
}

fn disconnected(provider: &str) -> CallError {
    CallError::new(
        ErrorCode::Disconnected,
        format!("Provider '{provider}' disconnected before answering"),
    )
}

/// Where a tool call goes: resolved under the state lock, used without it.
pub(crate) struct Route {
    pub provider_name: String,
    pub link: crate::providers::ProviderLink,
    pub timeout: Duration,
}

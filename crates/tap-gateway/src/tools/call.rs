use super::PendingCall;
use crate::gateway::Gateway;
use crate::sessions::{Resolved, Want};
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
    /// The provider said `retryable: true` (another instance may succeed).
    pub(crate) retryable: bool,
}

impl From<(ErrorCode, String)> for CallError {
    fn from((code, message): (ErrorCode, String)) -> Self {
        Self::new(code, message)
    }
}

impl CallError {
    /// A call error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
        }
    }
}

impl Gateway {
    /// Runs one tool call to its single terminal outcome: the provider's result, a timeout
    /// (the provider gets `tool.cancel`), a cancellation by the caller, or the provider's
    /// disconnect. This is the in-process call path; the session-host socket is a thin
    /// adapter over it.
    ///
    /// A shared tool (multi-instance provider) goes to the instance named by `args.target`,
    /// else to the most recently active one; the generated `list_<name>_instances` is
    /// answered here. A failure the provider marks `retryable` on a call the gateway routed
    /// itself (no `target`) is retried once on another instance holding the tool.
    pub async fn call_tool(&self, req: CallRequest) -> Result<Json, CallError> {
        // Timeouts count from here, through queueing and a retry: the caller waits at most
        // the tool's timeout in all.
        let started = tokio::time::Instant::now();
        let want = Want {
            target: req.args.get("target"),
            ..Want::default()
        };
        let route = match self.route(&req.session_id, &req.tool, want)? {
            Resolved::ListInstances(provider) => {
                return self.list_instances(&req.session_id, &provider)
            }
            Resolved::Call(route) => route,
        };
        let (outcome, tried) = self.attempt(&req, route, want, started).await;
        let error = match outcome {
            Err(e) if e.retryable && tried.failover => e,
            other => return other,
        };
        // Spec: `retryable` "hints whether the gateway should retry on another instance".
        // Once, never on the instance that failed; with no other instance holding the tool,
        // or nothing left of the caller's time, the failure stands.
        let exclude = [tried.provider_id.clone()];
        let want = Want {
            exclude: &exclude,
            ..Want::default()
        };
        let retry = match self.route(&req.session_id, &req.tool, want) {
            Ok(Resolved::Call(r)) if r.failover => r,
            _ => return Err(error),
        };
        if req.cancel.is_cancelled() || tokio::time::Instant::now() >= started + retry.timeout {
            return Err(error);
        }
        tracing::info!(session = %req.session_id, tool = %req.tool, failed = ?tried.instance,
            retry = ?retry.instance, code = %error.code, "retryable failure; retrying on another instance");
        self.attempt(&req, retry, want, started).await.0
    }

    /// One dispatch: a concurrency slot for the routed provider, then the `tool.call`.
    /// Returns the outcome and the route it took.
    async fn attempt(
        &self,
        req: &CallRequest,
        mut route: Route,
        want: Want<'_>,
        started: tokio::time::Instant,
    ) -> (Result<Json, CallError>, Route) {
        // The slot is held until this function returns (the call's terminal outcome).
        let _slot = loop {
            let deadline = started + route.timeout;
            let slot = match super::concurrency::acquire(
                self,
                &route.provider_id,
                &req.tool,
                deadline,
                &req.cancel,
            )
            .await
            {
                Ok(slot) => slot,
                Err(e) => return (Err(e), route),
            };
            if slot.is_none() {
                break None;
            }
            // A queued call may have waited: route again (the tool may have moved or gone),
            // staying with the instance it waited for while that one still holds the tool.
            let again = Want {
                pin: Some(&route.provider_id),
                ..want
            };
            let moved = match self.route(&req.session_id, &req.tool, again) {
                Ok(Resolved::Call(r)) => r,
                Ok(Resolved::ListInstances(_)) => return (Err(gone(&req.tool)), route),
                Err(e) => return (Err(e), route),
            };
            let same = moved.provider_id == route.provider_id;
            route = moved;
            if same {
                break slot;
            }
            // Another provider holds it now: wait for a slot of that one instead.
        };
        let outcome = self.dispatch(req, &route, started + route.timeout).await;
        (outcome, route)
    }

    /// Sends the `tool.call` and waits for its terminal outcome.
    async fn dispatch(
        &self,
        req: &CallRequest,
        route: &Route,
        deadline: tokio::time::Instant,
    ) -> Result<Json, CallError> {
        let mut args = req.args.clone();
        if route.strip_target {
            // The gateway's own parameter: the instance does not declare it.
            if let Some(o) = args.as_object_mut() {
                o.remove("target");
            }
        }
        let id = self.shared().ids.next("c");
        let frame = crate::providers::frame(&GatewayMessage::ToolCall(ToolCall {
            id: id.clone(),
            session_id: req.session_id.clone(),
            tool: req.tool.clone(),
            args,
        }));
        let (done_tx, mut done_rx) = oneshot::channel();
        let pending = PendingCall {
            session_id: req.session_id.clone(),
            done: done_tx,
            progress: req.progress.clone(),
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
            session_id: req.session_id.clone(),
            reason: reason.to_string(),
        });
        let _ = route.link.out.send(crate::providers::frame(&cancel));
        Err(CallError::new(code, message))
    }
}

fn gone(tool: &str) -> CallError {
    CallError::new(
        ErrorCode::NotFound,
        format!("Tool '{tool}' is no longer a provider's tool"),
    )
}

fn disconnected(provider: &str) -> CallError {
    CallError::new(
        ErrorCode::Disconnected,
        format!("Provider '{provider}' disconnected before answering"),
    )
}

/// Where a call goes: resolved under the state lock, used without it.
pub(crate) struct Route {
    pub provider_id: String,
    pub provider_name: String,
    /// The instance, for a shared tool.
    pub instance: Option<String>,
    pub link: crate::providers::ProviderLink,
    pub timeout: Duration,
    /// The gateway chose the instance (a shared tool called without `target`): a
    /// retryable failure may be retried on another one.
    pub failover: bool,
    /// `target` is the gateway's parameter here and is removed from the args sent.
    pub strip_target: bool,
}

//! The one call path: route, concurrency slot, `tool.call`, terminal outcome, and the one
//! `retryable` retry on another instance.

use super::route::{resolve, Resolved, Route, Want};
use crate::request::{CallError, CallRequest};
use crate::socket::frame::frame;
use crate::state::call_table::PendingCall;
use crate::state::search_defs::CALL_TOOL;
use crate::state::Core;
use crate::trace::OpenSpan;
use std::sync::Arc;
use tap_protocol::provider::{GatewayMessage, ToolCall, ToolCancel};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::oneshot;

/// Runs one tool call to its single terminal outcome: the provider's result, a timeout
/// (the provider gets `tool.cancel`), a cancellation by the caller, or the provider's
/// disconnect. This is the in-process call path; the session-host socket is a thin
/// adapter over it.
///
/// A shared tool (multi-instance provider) goes to the instance named by `args.target`,
/// else to the most recently active one; the generated `list_<name>_instances` is
/// answered here. A failure the provider marks `retryable` on a call the gateway routed
/// itself (no `target`) is retried once on another instance holding the tool.
pub(crate) async fn call_tool(core: &Arc<Core>, req: CallRequest) -> Result<Json, CallError> {
    let mut root = super::traced::open_call(
        core,
        &req.session_id,
        &req.tool,
        req.traceparent.as_deref(),
        "api",
    );
    let outcome = call_tool_in(core, req, &mut root).await;
    super::traced::end_call(root, &outcome);
    outcome
}

/// [`call_tool`] under a root span the caller opened (and ends): the call's spans become
/// its children, and the root learns which provider answered.
pub(crate) async fn call_tool_in(
    core: &Arc<Core>,
    req: CallRequest,
    root: &mut OpenSpan,
) -> Result<Json, CallError> {
    // Timeouts count from here, through queueing and a retry: the caller waits at most
    // the tool's timeout in all.
    let started = tokio::time::Instant::now();
    super::ledger_backpressure::wait(core, &req, started + core.config.default_tool_timeout)
        .await?;
    let want = Want {
        target: req.args.get("target"),
        ..Want::default()
    };
    let route = match resolve(core, &req.session_id, &req.tool, want)? {
        Resolved::ListInstances(provider) => {
            return super::list_instances::answer(core, &req.session_id, &provider)
        }
        Resolved::Builtin if req.tool == CALL_TOOL => return call_through(core, req, root).await,
        Resolved::Builtin => {
            root.provider(crate::builtin::PROVIDER);
            return crate::builtin::call(core, &req.session_id, req.caller, &req.tool, &req.args)
                .await;
        }
        Resolved::Call(route) => route,
    };
    // Arguments the declared schema refuses never reach the provider (decision 34), nor
    // the user: checked before the approval.
    route.check_args(&req.tool, &req.args)?;
    // Allowed, denied, or waited for (`crate::approvals`). A wait for the user is not the
    // tool's time: its timeout counts from the answer.
    let started = match super::approval::check(core, &req, &route, root).await? {
        true => tokio::time::Instant::now(),
        false => started,
    };
    let (outcome, tried) = attempt(core, &req, route, want, started, root, true).await;
    root.provider(&tried.by.provider_name);
    let error = match outcome {
        Err(e) if e.retryable && tried.failover => e,
        other => return other,
    };
    // Spec: `retryable` "hints whether the gateway should retry on another instance".
    // Once, never on the instance that failed; with no other instance holding the tool,
    // or nothing left of the caller's time, the failure stands.
    let exclude = [tried.by.provider_id.clone()];
    let want = Want {
        exclude: &exclude,
        ..Want::default()
    };
    let retry = match resolve(core, &req.session_id, &req.tool, want) {
        Ok(Resolved::Call(r)) if r.failover => r,
        _ => return Err(error),
    };
    if req.cancel.is_cancelled() || tokio::time::Instant::now() >= started + retry.timeout {
        return Err(error);
    }
    tracing::info!(session = %req.session_id, tool = %req.tool, failed = ?tried.by.instance,
        retry = ?retry.by.instance, code = %error.code, "retryable failure; retrying on another instance");
    root.event(
        "retry",
        vec![
            ("failed.provider", tried.by.provider_name.to_string().into()),
            ("error.code", error.code.to_string().into()),
        ],
    );
    let (outcome, route) = attempt(core, &req, retry, want, started, root, false).await;
    root.provider(&route.by.provider_name);
    outcome
}

/// `tap_call_tool` (the search surface): its arguments checked against its schema, then
/// the tool it names called through this same path, under the same root span (which
/// names that tool from here on, and notes how it was reached). Everything a direct call
/// meets applies: the session's tool map (a tool outside the profile is refused as a
/// direct call is), the tool's schema, concurrency, timeouts, the caller's cancellation.
/// The hook precheck, which the caller runs before the call, already judged the named
/// tool (`hooks::decide`).
async fn call_through(
    core: &Arc<Core>,
    mut req: CallRequest,
    root: &mut OpenSpan,
) -> Result<Json, CallError> {
    crate::builtin::check_args(CALL_TOOL, &req.args)?;
    let Some((name, args)) = crate::state::search_defs::called(&req.tool, &req.args) else {
        return Err(CallError::new(
            ErrorCode::InvalidJson,
            format!("{CALL_TOOL} needs 'name', a tool's name"),
        ));
    };
    if name == CALL_TOOL {
        return Err(CallError::new(
            ErrorCode::InvalidJson,
            format!("{CALL_TOOL} calls another tool, not itself"),
        ));
    }
    let (name, args) = (name.to_string(), args.clone());
    root.tool(&name);
    root.set("called.through", CALL_TOOL);
    req.tool = name;
    req.args = args;
    // Boxed: the future holds itself once (`name` is never `tap_call_tool` again).
    Box::pin(call_tool_in(core, req, root)).await
}

/// One dispatch: a concurrency slot for the routed provider, then the `tool.call`.
/// Returns the outcome and the route it took.
async fn attempt(
    core: &Core,
    req: &CallRequest,
    mut route: Route,
    want: Want<'_>,
    started: tokio::time::Instant,
    root: &OpenSpan,
    args_checked: bool,
) -> (Result<Json, CallError>, Route) {
    // Arguments the declared schema refuses never reach the provider (decision 34);
    // checked before the call waits for a slot (the first attempt's were checked before
    // its approval; a retry's instance may declare another schema).
    if !args_checked {
        if let Err(e) = route.check_args(&req.tool, &req.args) {
            return (Err(e), route);
        }
    }
    // The slot is held until this function returns (the call's terminal outcome).
    let _slot = loop {
        let deadline = started + route.timeout;
        let slot = match super::concurrency::acquire(
            core,
            &route.by.provider_id,
            &req.tool,
            deadline,
            &req.cancel,
            root,
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
            pin: Some(&route.by.provider_id),
            ..want
        };
        let moved = match resolve(core, &req.session_id, &req.tool, again) {
            Ok(Resolved::Call(r)) => r,
            Ok(Resolved::ListInstances(_) | Resolved::Builtin) => {
                return (Err(gone(&req.tool)), route)
            }
            Err(e) => return (Err(e), route),
        };
        let same = moved.by.provider_id == route.by.provider_id;
        // While it waited the tool may have moved or been declared again.
        let recheck = !same_schema(&moved, &route);
        route = moved;
        if recheck {
            if let Err(e) = route.check_args(&req.tool, &req.args) {
                return (Err(e), route);
            }
        }
        if same {
            break slot;
        }
        // Another provider holds it now: wait for a slot of that one instead.
    };
    let mut span = root.child("provider.call");
    span.session(&req.session_id);
    span.provider(&route.by.provider_name);
    span.tool(&req.tool);
    if let Some(instance) = &route.by.instance {
        span.set("provider.instance", instance.as_str());
    }
    if want.exclude.iter().any(|e| !e.is_empty()) {
        span.set("retry", true);
    }
    let outcome = dispatch(core, req, &route, started + route.timeout, &span).await;
    super::traced::end(span, &outcome);
    (outcome, route)
}

/// Sends the `tool.call` and waits for its terminal outcome.
async fn dispatch(
    core: &Core,
    req: &CallRequest,
    route: &Route,
    deadline: tokio::time::Instant,
    span: &OpenSpan,
) -> Result<Json, CallError> {
    let mut args = req.args.clone();
    if route.strip_target {
        // The gateway's own parameter: the instance does not declare it.
        if let Some(o) = args.as_object_mut() {
            o.shift_remove("target");
        }
    }
    let id = core.ids.next("c");
    let call = frame(&GatewayMessage::ToolCall(ToolCall {
        id: id.clone(),
        session_id: req.session_id.clone(),
        tool: req.tool.clone(),
        args,
        traceparent: Some(span.context().traceparent()),
    }));
    let (done_tx, mut done_rx) = oneshot::channel();
    let pending = PendingCall {
        session_id: req.session_id.clone(),
        done: done_tx,
        progress: req.progress.clone(),
    };
    if route.by.link.calls.insert(id.clone(), pending).is_err() {
        return Err(disconnected(&route.by.provider_name));
    }
    if route.by.link.out.send(call).is_err() {
        route.by.link.calls.take(&id);
        return Err(disconnected(&route.by.provider_name));
    }
    // A caller whose future is dropped mid-call never reaches the `select!` below (the MCP
    // fast path runs the call in the HTTP connection's own task, which hyper drops when the
    // client goes away): the guard then takes the entry and sends `tool.cancel`. Otherwise
    // the entry is already taken when it drops, and it does nothing.
    let _abandoned = Abandoned {
        route,
        id: &id,
        session_id: &req.session_id,
    };

    let give_up = tokio::select! {
        outcome = &mut done_rx => return outcome.unwrap_or_else(|_| Err(disconnected(&route.by.provider_name))),
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
    if route.by.link.calls.take(&id).is_none() {
        return done_rx
            .await
            .unwrap_or_else(|_| Err(disconnected(&route.by.provider_name)));
    }
    let cancel = GatewayMessage::ToolCancel(ToolCancel {
        id: id.clone(),
        session_id: req.session_id.clone(),
        reason: reason.to_string(),
    });
    route.by.link.send(&cancel);
    Err(CallError::new(code, message))
}

/// Sends `tool.cancel` for a call still pending when the future waiting for it is dropped.
struct Abandoned<'a> {
    route: &'a Route,
    id: &'a str,
    session_id: &'a str,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if self.route.by.link.calls.take(self.id).is_some() {
            self.route
                .by
                .link
                .send(&GatewayMessage::ToolCancel(ToolCancel {
                    id: self.id.to_string(),
                    session_id: self.session_id.to_string(),
                    reason: "cancelled".to_string(),
                }));
        }
    }
}

fn same_schema(a: &Route, b: &Route) -> bool {
    match (&a.schema, &b.schema) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
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

//! A call to a server's tool: `tools/call` with the gateway's trace context and a
//! progress token, cancellation forwarded, one terminal result for the provider. A call
//! that finds the connection gone, or the server asking for a sign-in, reports it to the
//! run (`bridge.rs`) through `gone`.

use super::in_flight::InFlight;
use super::line_limit::Cut;
use crate::oauth::challenge::{self, Challenge};
use crate::provider_protocol::local::LocalProvider;
use crate::state::Core;
use crate::trace::context::SpanContext;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use std::sync::{Arc, Mutex};
use tap_protocol::provider::{ProviderMessage, ToolCall, ToolResult};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[allow(clippy::too_many_arguments)]
pub(super) fn start_call(
    core: &Arc<Core>,
    peer: &Peer<RoleClient>,
    local: &LocalProvider,
    call: ToolCall,
    tool: Option<String>,
    in_flight: &Arc<Mutex<InFlight>>,
    gone: &mpsc::UnboundedSender<Lost>,
    cut: &Arc<Cut>,
    last_call: &Arc<Mutex<tokio::time::Instant>>,
) {
    *last_call.lock().unwrap() = tokio::time::Instant::now();
    let reply = local.sender();
    let Some(tool) = tool else {
        let _ = reply.send(&ProviderMessage::ToolResult(ToolResult {
            id: call.id,
            error: Some(format!("no tool '{}' on this MCP server", call.tool)),
            error_code: Some(ErrorCode::NotFound),
            ..ToolResult::default()
        }));
        return;
    };
    let cancel = CancellationToken::new();
    {
        let mut table = in_flight.lock().unwrap();
        table.cancels.insert(call.id.clone(), cancel.clone());
        table
            .sessions
            .push((call.id.clone(), call.session_id.clone()));
        let trace = call.traceparent.as_deref().and_then(SpanContext::parse);
        if let Some(trace) = trace {
            table.traces.insert(call.id.clone(), trace.trace_id);
        }
    }
    let peer = peer.clone();
    let in_flight = in_flight.clone();
    let gone = gone.clone();
    let cut = cut.clone();
    let last_call = last_call.clone();
    core.tasks.spawn(async move {
        let id = call.id.clone();
        let result = call_tool(&peer, call, tool, cancel, &in_flight).await;
        *last_call.lock().unwrap() = tokio::time::Instant::now();
        // Absent: the run ended and already answered the call.
        if !in_flight.lock().unwrap().finish(&id) {
            return;
        }
        let result = match result {
            Ok(result) => result,
            Err(lost) => {
                let result = match &lost.sign_in {
                    // Not retryable: the same call fails until the user signs in.
                    Some(challenge) => ToolResult {
                        id: id.clone(),
                        error: Some(format!(
                            "MCP server '{}': {}; sign in with `tap mcp login {}` or from the panel's Servers page",
                            cut.server,
                            challenge.reason(true),
                            cut.server
                        )),
                        error_code: Some(ErrorCode::Other(NEEDS_SIGN_IN.into())),
                        retryable: Some(false),
                        ..ToolResult::default()
                    },
                    None => match oversized(&cut, &id) {
                        Some(result) => result,
                        None => ToolResult {
                            id: id.clone(),
                            error: Some(lost.why.clone()),
                            error_code: Some(ErrorCode::Disconnected),
                            retryable: Some(true),
                            ..ToolResult::default()
                        },
                    },
                };
                let _ = gone.send(lost);
                result
            }
        };
        let _ = reply.send(&ProviderMessage::ToolResult(result));
    });
}

/// The error code of a call refused because the server wants the user to sign in.
pub(crate) const NEEDS_SIGN_IN: &str = "NEEDS_SIGN_IN";

/// The connection to the server was lost during a call, or the server refused it until
/// the user signs in.
pub(super) struct Lost {
    pub why: String,
    pub sign_in: Option<Challenge>,
}

impl Lost {
    /// From rmcp's error: a sign-in when the server answered `401`/`403`.
    fn from_service(why: impl Into<String>, e: &ServiceError) -> Self {
        Lost {
            why: why.into(),
            sign_in: challenge::of_request(e),
        }
    }
}

/// A call's result when the server's connection was cut for a message over the limit
/// (most likely this call's result): not retryable, since the same call would send it again.
pub(super) fn oversized(cut: &Cut, id: &str) -> Option<ToolResult> {
    Some(ToolResult {
        id: id.to_string(),
        error: Some(format!(
            "MCP server '{}': {}; the gateway closed its connection and starts it again",
            cut.server,
            cut.reason()?
        )),
        error_code: Some(ErrorCode::PayloadTooLarge),
        retryable: Some(false),
        ..ToolResult::default()
    })
}

async fn call_tool(
    peer: &Peer<RoleClient>,
    call: ToolCall,
    tool: String,
    cancel: CancellationToken,
    in_flight: &Mutex<InFlight>,
) -> Result<ToolResult, Lost> {
    let mut params = CallToolRequestParams::new(tool);
    if let Json::Object(args) = call.args {
        params = params.with_arguments(args);
    }
    let mut meta = RequestMetaObject::new();
    if let Some(tp) = &call.traceparent {
        meta.insert("traceparent".into(), Json::String(tp.clone()));
    }
    let options = PeerRequestOptions::no_options().with_meta(meta);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = match peer.send_cancellable_request(request, options).await {
        Ok(h) => h,
        Err(e) => {
            return Err(Lost::from_service(
                format!("the call could not be sent: {e}"),
                &e,
            ))
        }
    };
    in_flight
        .lock()
        .unwrap()
        .progress
        .insert(handle.progress_token.clone(), call.id.clone());
    let request_id = handle.id.clone();
    let answer = tokio::select! {
        answer = handle.await_response() => answer,
        _ = cancel.cancelled() => {
            let note = CancelledNotificationParam::new(Some(request_id), Some("cancelled by the gateway".into()));
            let _ = peer.notify_cancelled(note).await;
            return Ok(ToolResult {
                id: call.id,
                error: Some("Cancelled".into()),
                error_code: Some(ErrorCode::Cancelled),
                ..ToolResult::default()
            });
        }
    };
    let failure = |code: ErrorCode, message: String| ToolResult {
        id: call.id.clone(),
        error: Some(message),
        error_code: Some(code),
        ..ToolResult::default()
    };
    Ok(match answer {
        Ok(ServerResult::CallToolResult(result)) => match serde_json::to_value(&result) {
            Ok(data) => ToolResult {
                id: call.id.clone(),
                data: Some(data),
                ..ToolResult::default()
            },
            Err(e) => failure(
                ErrorCode::Internal,
                format!("its result could not be read: {e}"),
            ),
        },
        Ok(other) => failure(
            ErrorCode::Internal,
            format!(
                "it answered tools/call with something else: {:?}",
                kind_of(&other)
            ),
        ),
        Err(ServiceError::McpError(e)) => failure(
            ErrorCode::Other("MCP_ERROR".into()),
            format!("{} ({})", e.message, e.code.0),
        ),
        Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
            return Err(Lost::from_service(
                "the connection to the server closed during the call",
                &e,
            ))
        }
        Err(e) => failure(ErrorCode::Internal, e.to_string()),
    })
}

fn kind_of(result: &ServerResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
        })
        .unwrap_or_default()
}

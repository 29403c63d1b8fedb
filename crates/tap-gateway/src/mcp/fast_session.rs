//! The endpoint's own answer to a plain `tools/call` of an `initialize`-generation session
//! (2025-11-25 and older), as `fast.rs` is for the stateless generation.
//!
//! rmcp serves a session's request through its session worker, the session's service and a
//! task per request, with the answer coming back through each in turn: 6 to 7 context
//! switches in the gateway per call against 2 for the same call from a session host
//! (docs/performance.md, run 20). A plain call needs none of that. It is answered here, in
//! the HTTP connection's task, through the same call path as rmcp's handler (`calls::call`)
//! and over the same binding (the session's [`Attachment`]), as one JSON body, which MCP
//! lets a server send for any request.
//!
//! "Plain" is narrow, as in `fast.rs`: a session rmcp still has, whose handler listed it
//! (`sessions.rs`); headers as the session's client always sends them; one request, no
//! progress token (progress needs rmcp's stream). Everything else goes to rmcp as it came.
//! So do a session's requests when rmcp has not seen one for
//! [`RMCP_TOUCH_INTERVAL`](crate::limits::RMCP_TOUCH_INTERVAL): its idle timer only counts
//! the requests it sees. A `notifications/cancelled` naming one of the endpoint's calls
//! cancels it here (the provider gets `tool.cancel`), and goes on to rmcp too.

use super::calls::{self, Asked};
use super::fast::{self, Unread};
use super::sessions::{Entry, Sessions};
use crate::state::mcp_binding::Target;
use crate::state::Core;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, JsonRpcMessage, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::ErrorData as McpError;
use std::sync::Arc;

/// Answers `req` if it is a plain `tools/call` of a session listed in `sessions`;
/// otherwise gives it back (with its body, if that was read) for rmcp to serve.
pub(crate) async fn answer(
    core: &Arc<Core>,
    target: &Target,
    sessions: &Sessions,
    req: Request,
) -> Result<Response, Request> {
    let Some(id) = fast::only(req.headers(), "mcp-session-id") else {
        return Err(req);
    };
    let Some(entry) = sessions.get(id) else {
        return Err(req);
    };
    if !sessions.live(id).await {
        return Err(req);
    }
    // From here on, whatever goes to rmcp is a request of this session it sees.
    let to_rmcp = |req: Request| {
        entry.touch();
        req
    };
    if req.method() != Method::POST || !plain_headers(req.headers(), &entry) {
        return Err(to_rmcp(req));
    }
    if entry.due_for_rmcp() {
        return Err(to_rmcp(req));
    }
    let (parts, body) = req.into_parts();
    let bytes = match fast::read(body).await {
        Ok(bytes) => bytes,
        Err(Unread::Failed(e)) => return Ok(fast::unreadable(e)),
        Err(Unread::TooLarge(bytes)) => {
            return Err(to_rmcp(Request::from_parts(parts, Body::from(bytes))))
        }
    };
    let message = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes).ok();
    let call = match message {
        Some(JsonRpcMessage::Request(request)) => match request.request {
            ClientRequest::CallToolRequest(call) => Some((request.id, call)),
            _ => None,
        },
        Some(JsonRpcMessage::Notification(n)) => {
            if let ClientNotification::CancelledNotification(c) = &n.notification {
                if let Some(id) = &c.params.request_id {
                    entry.cancel(id);
                }
            }
            None
        }
        _ => None,
    };
    let rebuilt = |parts, bytes: Bytes| Request::from_parts(parts, Body::from(bytes));
    let Some((id, mut call)) = call else {
        return Err(to_rmcp(rebuilt(parts, bytes)));
    };
    let meta = call
        .extensions
        .remove::<RequestMetaObject>()
        .unwrap_or_default();
    // A progress token needs rmcp's stream; a stateless generation's `_meta` in a
    // session's request is rmcp's to judge.
    if meta.get_progress_token().is_some() || meta.protocol_version().is_some() {
        return Err(to_rmcp(rebuilt(parts, bytes)));
    }
    if may_ask_the_client(core, target, &entry, &call.params.name) {
        return Err(to_rmcp(rebuilt(parts, bytes)));
    }
    let outcome = self::call(core, target, &entry, call.params, meta, id.clone()).await;
    // A session's answers are 200 whatever they say, as rmcp's stream for them is.
    Ok(fast::respond(outcome, id, StatusCode::OK))
}

/// Whether a call of `tool` may need to ask the client mid-call: an MCP server's tool may
/// ask for sampling or elicitation, and only rmcp's event stream for the request can carry
/// that to the client that made it. So a server's tool, called by a client that declared
/// either, goes to rmcp; every other call stays on this path.
fn may_ask_the_client(core: &Arc<Core>, target: &Target, entry: &Arc<Entry>, tool: &str) -> bool {
    if !entry.can_be_asked {
        return false;
    }
    let Ok(binding) = entry.attachment.binding(core, || Some(target.clone())) else {
        return false;
    };
    matches!(super::tools::exists(core, &binding, tool), Ok(Some(true)))
}

/// The call, as rmcp's handler for this session makes it, listed for cancellation while it
/// runs.
async fn call(
    core: &Arc<Core>,
    target: &Target,
    entry: &Arc<Entry>,
    params: CallToolRequestParams,
    meta: RequestMetaObject,
    id: RequestId,
) -> Result<ServerResult, McpError> {
    let binding = entry.attachment.binding(core, || Some(target.clone()))?;
    // A client that goes away drops this future with its connection; the call path then
    // sends `tool.cancel`. This token is its `notifications/cancelled`, or the gateway
    // stopping.
    let cancel = core.stopping.child_token();
    let _listed = entry.start_call(id, cancel.clone());
    let asked = Asked {
        meta: &meta,
        cancel,
        peer: None,
        path: "endpoint",
        origin: None,
    };
    let result = calls::call(core, &binding, params, asked).await?;
    let mut result = ServerResult::from(CallToolResponse::Complete(result));
    // What rmcp's handler does for a peer of a version before 2026-07-28, which every
    // `initialize`-generation session is.
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    Ok(result)
}

/// Headers as an `initialize`-generation client sends them with each request: its session
/// once, the version it negotiated if any, both media types accepted, a JSON body within
/// the limit, a loopback `Host`.
fn plain_headers(headers: &HeaderMap, entry: &Entry) -> bool {
    let version_ok = match headers.get_all("mcp-protocol-version").iter().count() {
        0 => true,
        1 => fast::only(headers, "mcp-protocol-version") == Some(entry.version.as_str()),
        _ => false,
    };
    version_ok && fast::plain_transport(headers)
}

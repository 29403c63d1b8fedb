//! The endpoint's own answer to a plain stateless `tools/call` (the 2026-07-28 generation).
//!
//! rmcp serves every request through several tasks: the HTTP connection's task hands it to
//! a fresh per-request service, which runs the handler in a task of its own, whose answer
//! comes back through a channel (docs/performance.md, run 7). A plain call needs none of
//! that: it is answered here, in the connection's task, through the same call path as the
//! handler's (`calls::call`: hooks, gates, schema check, timeouts, the same result
//! conversion) and serialized as the same JSON-RPC message rmcp would send.
//!
//! "Plain" is narrow on purpose: only what rmcp would accept and hand to `call_tool`
//! unchanged, answered as one JSON body. Anything else (another method, a batch, a
//! session id, a progress token, headers that disagree with the body, an `Accept` with
//! parameters, a body over the limit, an unexpected `Host`) goes to rmcp as it came, and
//! rmcp's own checks answer it.

use super::attach::attach;
use super::calls::{self, Asked};
use super::errors::gateway_error;
use crate::state::mcp_binding::Target;
use crate::state::Core;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientRequest, ErrorCode,
    JsonRpcMessage, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::ErrorData as McpError;
use std::sync::Arc;
use tap_protocol::limits::MAX_MCP_REQUEST_BYTES;

/// The hosts rmcp's service accepts by default (its DNS-rebinding check): a request naming
/// another is left to rmcp, which refuses it.
const ALLOWED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Answers `req` if it is a plain stateless `tools/call`; otherwise gives it back (with its
/// body, if that was read) for rmcp to serve.
pub(crate) async fn answer(
    core: &Arc<Core>,
    target: &Target,
    req: Request,
) -> Result<Response, Request> {
    if req.method() != Method::POST || !plain_headers(req.headers()) {
        return Err(req);
    }
    let (parts, body) = req.into_parts();
    let bytes = match read(body).await {
        Ok(bytes) => bytes,
        Err(Unread::Failed(e)) => return Ok(unreadable(e)),
        // rmcp sees the same too-long body and refuses it.
        Err(Unread::TooLarge(bytes)) => return Err(Request::from_parts(parts, Body::from(bytes))),
    };
    let Some((id, params, meta)) = plain_call(&parts.headers, &bytes) else {
        return Err(Request::from_parts(parts, Body::from(bytes)));
    };
    let outcome = call(core, target, params, meta).await;
    let status = http_status(&outcome);
    Ok(respond(outcome, id, status))
}

/// The call, as rmcp's per-request handler makes it: attach to the named session for the
/// request's length (a stateless client is present while its request runs), then the
/// handler's own call path.
async fn call(
    core: &Arc<Core>,
    target: &Target,
    params: CallToolRequestParams,
    meta: RequestMetaObject,
) -> Result<ServerResult, McpError> {
    let presence = attach(
        core,
        &target.name,
        target.cwd.clone(),
        target.profile.as_deref(),
    )
    .map_err(gateway_error)?;
    let asked = Asked {
        meta: &meta,
        // A client that goes away drops this future with its connection; the call path
        // then sends `tool.cancel` (`tools::call`'s guard). This token is the gateway
        // stopping.
        cancel: core.stopping.child_token(),
        peer: None,
        path: "endpoint",
        origin: None,
    };
    let result = calls::call(core, &presence.binding, params, asked).await?;
    Ok(ServerResult::from(CallToolResponse::Complete(result)))
}

/// The JSON-RPC answer as rmcp writes a terminal message in JSON response mode.
pub(super) fn respond(
    outcome: Result<ServerResult, McpError>,
    id: RequestId,
    status: StatusCode,
) -> Response {
    let message: ServerJsonRpcMessage = match outcome {
        Ok(result) => JsonRpcMessage::response(result, id),
        Err(error) => JsonRpcMessage::error(error, Some(id)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => {
            let text = format!("serialize json response: {e}");
            (StatusCode::INTERNAL_SERVER_ERROR, text).into_response()
        }
    }
}

/// rmcp's status for a stateless JSON-RPC answer (its `jsonrpc_http_status`, for a request
/// whose `_meta` was well formed, which a plain call's is).
fn http_status(outcome: &Result<ServerResult, McpError>) -> StatusCode {
    let Err(error) = outcome else {
        return StatusCode::OK;
    };
    match error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// The headers of a stateless `tools/call` that rmcp would let through unchanged, checked
/// before the body is read.
fn plain_headers(headers: &HeaderMap) -> bool {
    let version = ProtocolVersion::V_2026_07_28;
    headers.get("mcp-session-id").is_none()
        && only(headers, "mcp-protocol-version") == Some(version.as_str())
        && only(headers, "mcp-method") == Some("tools/call")
        && plain_transport(headers)
}

/// What any plain POST carries, in either generation: both media types accepted, a JSON
/// body, a `Host` rmcp allows, and no declared length over the limit (rmcp refuses that
/// unread).
pub(super) fn plain_transport(headers: &HeaderMap) -> bool {
    accepts_json_and_sse(headers)
        && headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().trim())
            .is_some_and(|v| v.eq_ignore_ascii_case("application/json"))
        && allowed_host(headers)
        && headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .is_none_or(|n| n <= MAX_MCP_REQUEST_BYTES)
}

/// The value of a header that appears exactly once, as text (rmcp refuses duplicates of
/// the SEP-2243 headers).
pub(super) fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    match values.next() {
        Some(_) => None,
        None => first.to_str().ok(),
    }
}

/// Both media types MCP requires, listed plainly: an entry with parameters (a weight of
/// zero, say) or quotes is rmcp's to judge.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for essence in value.split(',').map(str::trim) {
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

fn allowed_host(headers: &HeaderMap) -> bool {
    let Some(authority) = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| axum::http::uri::Authority::try_from(v).ok())
    else {
        return false;
    };
    let host = authority
        .host()
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    ALLOWED_HOSTS.contains(&host.as_str())
}

/// A body that is plain JSON-RPC `tools/call` as rmcp parses it, in agreement with its
/// headers, naming the 2026-07-28 generation in `_meta` with everything that generation
/// requires there, and asking for no progress (progress notifications need rmcp's stream).
fn plain_call(
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(RequestId, CallToolRequestParams, RequestMetaObject)> {
    // rmcp's own message type, so the body is parsed by its rules.
    let message = serde_json::from_slice::<ClientJsonRpcMessage>(body).ok()?;
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(mut call) = request.request else {
        return None;
    };
    // rmcp's parser keeps `_meta` in the request's extensions; its service moves it into
    // the handler's context from there, and so does this.
    let meta = call.extensions.remove::<RequestMetaObject>()?;
    let version = ProtocolVersion::V_2026_07_28;
    let plain = meta.protocol_version().as_ref() == Some(&version)
        && meta.missing_required_keys(&version).is_empty()
        && meta.get_progress_token().is_none()
        // SEP-2243: `Mcp-Name` repeats the tool's name (a Base64-encoded one is rmcp's).
        && only(headers, "mcp-name").is_some_and(|n| n == call.params.name && !n.starts_with("=?"));
    plain.then_some((request.id, call.params, meta))
}

/// What rmcp answers when it cannot read a body.
pub(super) fn unreadable(e: axum::Error) -> Response {
    let text = format!("Failed to read request body: {e}");
    (StatusCode::INTERNAL_SERVER_ERROR, text).into_response()
}

pub(super) enum Unread {
    TooLarge(Bytes),
    Failed(axum::Error),
}

/// The whole body, up to the limit rmcp applies (what was read so far, past it).
pub(super) async fn read(mut body: Body) -> Result<Bytes, Unread> {
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(Unread::Failed)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        collected.extend_from_slice(&data);
        if collected.len() > MAX_MCP_REQUEST_BYTES {
            return Err(Unread::TooLarge(collected.freeze()));
        }
    }
    Ok(collected.freeze())
}

//! CORS for web-based MCP clients on a loopback origin (`http://localhost:5173`), which the
//! endpoint admits with the host token (`auth::origin`). A browser sends such a page's
//! `fetch` with an `Authorization` header only after a preflight (`OPTIONS`, which carries no
//! credentials) said it may, and lets the page read the answer (and `Mcp-Session-Id`) only
//! when the response names its origin. Pages of other origins never get this far: the
//! Origin check refuses them first, preflight included.

use crate::limits::MCP_CORS_MAX_AGE;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

/// What a page may send: the headers MCP's Streamable HTTP transport uses, and `tap-cwd`.
const ALLOW_HEADERS: &str =
    "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, tap-cwd, tap-profile";
/// What a page may read besides the simple headers.
const EXPOSE_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// The answer to a preflight from `origin` (already admitted).
pub(crate) fn preflight(origin: &HeaderValue) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from(MCP_CORS_MAX_AGE.as_secs()),
    );
    h.insert(header::VARY, HeaderValue::from_static("origin"));
    response
}

/// Lets the page on `origin` read `response`.
pub(crate) fn allow(response: &mut Response, origin: &HeaderValue) {
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    h.append(header::VARY, HeaderValue::from_static("origin"));
}

/// Whether `method` is a preflight's.
pub(crate) fn is_preflight(method: &Method) -> bool {
    method == Method::OPTIONS
}

//! `/mcp/<session>`: the MCP facade's endpoint. Every request is checked here first: the
//! `Origin` (a web page other than the panel is refused, so a site the user visits cannot
//! call tools) and `Authorization: Bearer <host token>` (never a token in the URL). Then a
//! WebSocket upgrade is `tap mcp` (`ws.rs`), a plain stateless `tools/call` is answered
//! here (`fast.rs`), and anything else is Streamable HTTP, served by rmcp's service for both
//! MCP generations.

use super::cors;
use super::handler::McpHandler;
use super::sessions::Sessions;
use crate::accept::{limited_upgrade, Kind};
use crate::auth::origin::{self, Allowed};
use crate::auth::tokens;
use crate::socket::upgrade;
use crate::state::mcp_binding::Target;
use crate::state::Core;
use axum::extract::{ConnectInfo, Path, Request};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tap_protocol::limits::{MAX_MCP_REQUEST_BYTES, MCP_SESSION_IDLE_TIMEOUT, MCP_SSE_KEEP_ALIVE};

/// The header naming the working directory of a session the facade registers (HTTP
/// clients; `tap mcp` sends its `--cwd` in it too). A header, not a query: URLs end up in
/// logs and histories.
pub(crate) const CWD_HEADER: &str = "tap-cwd";

/// The header naming the client's profile (`$TAP_HOME/profiles.json`): the tools its
/// session holds. `tap mcp --profile NAME` sends it too.
pub(crate) const PROFILE_HEADER: &str = "tap-profile";

/// MCP clients: native programs (no `Origin`), the panel, the desktop app's webview, and
/// web-based clients on a loopback origin (the host token is the credential; see
/// `auth::origin`).
const MCP_ENDPOINT: Allowed = Allowed {
    native: true,
    tauri: true,
    loopback: true,
};

/// The Streamable HTTP service every `/mcp/<session>` request goes through, and the
/// `initialize`-generation sessions it holds, for the endpoint's own answers.
#[derive(Clone)]
pub(crate) struct Service {
    rmcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    sessions: Arc<Sessions>,
}

pub(crate) fn service(core: &Arc<Core>) -> Service {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(core.stopping.child_token())
        .with_max_request_body_bytes(MAX_MCP_REQUEST_BYTES)
        .with_sse_keep_alive(Some(MCP_SSE_KEEP_ALIVE))
        .with_json_response(true);
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(MCP_SESSION_IDLE_TIMEOUT);
    let manager = Arc::new(manager);
    let sessions = Arc::new(Sessions::new(manager.clone()));
    let core = core.clone();
    let entered = sessions.clone();
    let rmcp = StreamableHttpService::new(
        move || Ok(McpHandler::new(core.clone(), None).with_sessions(entered.clone())),
        manager,
        config,
    );
    Service { rmcp, sessions }
}

pub(crate) async fn endpoint(
    core: Arc<Core>,
    service: Service,
    Path(name): Path<String>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if let Err(why) = origin::check(req.headers(), core.address, MCP_ENDPOINT) {
        tracing::warn!(%remote, why = why.message.as_str(), "MCP request refused");
        return (StatusCode::FORBIDDEN, format!("{why}\n")).into_response();
    }
    // A page on a loopback origin (admitted above): its preflight is answered without a
    // token (browsers send none), and every answer names its origin so it may read it.
    let page = req
        .headers()
        .get(header::ORIGIN)
        .filter(|o| o.to_str().is_ok_and(origin::is_loopback_origin))
        .cloned();
    match page {
        Some(page) if cors::is_preflight(req.method()) => cors::preflight(&page),
        Some(page) => {
            let mut response = admitted(core, service, name, remote, req).await;
            cors::allow(&mut response, &page);
            response
        }
        None => admitted(core, service, name, remote, req).await,
    }
}

/// A request whose origin was admitted: the token, then the transport.
async fn admitted(
    core: Arc<Core>,
    service: Service,
    name: String,
    remote: SocketAddr,
    req: Request,
) -> Response {
    let client = match authorized(req.headers(), &core) {
        Ok(client) => client,
        Err(why) => {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                format!("{why}\n"),
            )
                .into_response()
        }
    };
    let cwd = req
        .headers()
        .get(CWD_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let profile = req
        .headers()
        .get(PROFILE_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    // A client token made with a profile holds its client to it: the header may repeat
    // it, never name another (or none: the token's profile applies).
    let profile = match (client.and_then(|c| c.profile), profile) {
        (Some(held), Some(asked)) if held != asked => {
            return (
                StatusCode::FORBIDDEN,
                format!("this client's token holds it to profile '{held}', not '{asked}'\n"),
            )
                .into_response()
        }
        (Some(held), _) => Some(held),
        (None, asked) => asked,
    };
    let target = Target { name, cwd, profile };
    if upgrade::is_websocket(&req) {
        let core2 = core.clone();
        return limited_upgrade(req, &core, Kind::Host, move |ws| {
            super::ws::serve(core2, ws, remote, target)
        });
    }
    // A plain `tools/call` is answered here, in this task: a stateless one (`fast.rs`) or
    // one of a session the handler listed (`fast_session.rs`).
    let answered = match req.headers().contains_key("mcp-session-id") {
        false => super::fast::answer(&core, &target, req).await,
        true => super::fast_session::answer(&core, &target, &service.sessions, req).await,
    };
    let mut req = match answered {
        Ok(response) => return response,
        Err(req) => req,
    };
    req.extensions_mut().insert(target);
    let mut service = service.rmcp;
    match tower_service::Service::call(&mut service, req).await {
        Ok(response) => response.map(axum::body::Body::new),
        Err(never) => match never {},
    }
}

/// `Authorization: Bearer <host token>`, compared in constant time.
/// The request's bearer token: the host token (`Ok(None)`), or a client token
/// (`auth/client_tokens.rs`) with what it was made for.
fn authorized(
    headers: &HeaderMap,
    core: &Core,
) -> Result<Option<crate::auth::client_tokens::Entry>, &'static str> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or("MCP clients authenticate with 'Authorization: Bearer <host token>' (tap mcp config prints a client's settings)")?;
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or("The Authorization header must be 'Bearer <host token>'")?;
    let token = token.trim();
    if tokens::matches(token, &core.secrets.host_token) {
        return Ok(None);
    }
    match core.client_tokens.check(token) {
        Some(entry) => Ok(Some(entry)),
        None => Err("Invalid token: neither the host token nor a client token (`tap tokens list`)"),
    }
}

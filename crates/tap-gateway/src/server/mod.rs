//! HTTP on the gateway port: the WebSocket endpoints, `/healthz`, the panel (its files
//! and its one-time login), and `/oauth/callback` (the end of a remote server's sign-in).

mod headers;
mod login;
mod oauth_callback;
mod static_files;

use crate::accept::{limited_upgrade, Kind};
use crate::gateway::Gateway;
use crate::socket::upgrade;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use std::net::SocketAddr;
use tokio::net::TcpListener;

pub(crate) async fn serve(listener: TcpListener, gw: Gateway) {
    let stopping = gw.core().stopping.clone();
    let abandoned = gw.core().slots.abandoned.clone();
    let app = router(gw);
    // A flood of connections that never authenticate waits in the backlog (`pacing.rs`).
    let listener = crate::socket::pacing::Paced {
        inner: listener,
        abandoned,
    };
    // Every message on these sockets is small and latency-bound (a call, a result): no
    // Nagle delay waiting for a full segment.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    let served = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move { stopping.cancelled().await })
    .await;
    if let Err(e) = served {
        tracing::error!(error = %e, "HTTP server failed");
    }
}

/// Every route on the gateway port. Handlers read the peer's address from
/// `ConnectInfo<SocketAddr>`, which the server (or `crate::fuzzing`) puts in each request.
pub(crate) fn router(gw: Gateway) -> Router {
    let mcp_core = gw.core().clone();
    let mcp_service = crate::mcp::http::service(&mcp_core);
    Router::new()
        .route(
            "/mcp/{session}",
            any(move |path, remote, req| {
                crate::mcp::http::endpoint(mcp_core.clone(), mcp_service.clone(), path, remote, req)
            }),
        )
        .route("/", get(provider_endpoint))
        .route("/session", get(session_endpoint))
        .route("/control", get(crate::control::endpoint))
        .route("/healthz", get(healthz))
        .route("/assets/{*path}", get(static_files::asset))
        .route("/api/login", post(login::endpoint))
        .route(crate::oauth::CALLBACK_PATH, get(oauth_callback::endpoint))
        .with_state(gw)
}

/// Liveness for anyone on loopback. Says what is listening (so a second `tap gateway`
/// can tell "another gateway" from "another program") and nothing secret.
async fn healthz(State(gw): State<Gateway>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "service": "tap-gateway",
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeMs": gw.core().started.elapsed().as_millis() as u64,
    }))
}

async fn provider_endpoint(
    State(gw): State<Gateway>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if !upgrade::is_websocket(&req) {
        return static_files::index(&gw).await;
    }
    // Browser providers' `Origin` is shown to the user with their pairing request.
    let origin = req
        .headers()
        .get(axum::http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let core = gw.core().clone();
    limited_upgrade(req, gw.core(), Kind::Provider, move |ws| {
        crate::provider_protocol::serve(core, ws, remote, origin)
    })
}

async fn session_endpoint(
    State(gw): State<Gateway>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if !upgrade::is_websocket(&req) {
        return (
            StatusCode::UPGRADE_REQUIRED,
            "Session hosts connect over WebSocket\n",
        )
            .into_response();
    }
    let core = gw.core().clone();
    limited_upgrade(req, gw.core(), Kind::Host, move |ws| {
        crate::host_protocol::serve(core, ws, remote)
    })
}

//! HTTP on the gateway port: the WebSocket endpoints and `/healthz`.

mod metered;
mod upgrade;

pub(crate) use metered::Metered;
pub(crate) use upgrade::WsStream;

use crate::gateway::Gateway;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use std::net::SocketAddr;
use tokio::net::TcpListener;

pub(crate) async fn serve(listener: TcpListener, gw: Gateway) {
    let stopping = gw.shared().stopping.clone();
    let app = Router::new()
        .route("/", get(provider_endpoint))
        .route("/session", get(session_endpoint))
        .route("/healthz", get(healthz))
        .with_state(gw);
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

/// Liveness for anyone on loopback. Says what is listening (so a second `tap gateway`
/// can tell "another gateway" from "another program") and nothing secret.
async fn healthz(State(gw): State<Gateway>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "service": "tap-gateway",
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeMs": gw.shared().started.elapsed().as_millis() as u64,
    }))
}

async fn provider_endpoint(
    State(gw): State<Gateway>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if !upgrade::is_websocket(&req) {
        return (
            StatusCode::OK,
            "Tap gateway. Providers connect here over WebSocket (TAP Provider Interface v2).\n",
        )
            .into_response();
    }
    // The connection limit is taken before the upgrade, so the 51st connection is refused
    // with a plain HTTP status and never costs a WebSocket.
    let Ok(permit) = gw.shared().provider_slots.clone().try_acquire_owned() else {
        tracing::warn!(%remote, "provider connection refused: limit reached");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many provider connections (limit 50)\n",
        )
            .into_response();
    };
    let tasks = gw.shared().tasks.clone();
    upgrade::accept(req, tasks, move |ws| async move {
        crate::providers::serve(gw, ws, remote).await;
        drop(permit);
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
    let Ok(permit) = gw.shared().host_slots.clone().try_acquire_owned() else {
        tracing::warn!(%remote, "session host connection refused: limit reached");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many session-host connections\n",
        )
            .into_response();
    };
    let tasks = gw.shared().tasks.clone();
    upgrade::accept(req, tasks, move |ws| async move {
        crate::sessions::serve_host(gw, ws, remote).await;
        drop(permit);
    })
}

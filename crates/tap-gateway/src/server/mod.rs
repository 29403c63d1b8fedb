//! HTTP on the gateway port: the WebSocket endpoints, `/healthz`, and the panel (its
//! files and its one-time login).

mod login;
mod metered;
mod static_files;
mod upgrade;

pub(crate) use login::LoginCodes;
pub(crate) use metered::Metered;
pub(crate) use upgrade::WsStream;

use crate::diagnostics::Limit;
use crate::gateway::Gateway;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub(crate) async fn serve(listener: TcpListener, gw: Gateway) {
    let stopping = gw.shared().stopping.clone();
    let app = Router::new()
        .route("/", get(provider_endpoint))
        .route("/session", get(session_endpoint))
        .route("/control", get(crate::control::endpoint))
        .route("/healthz", get(healthz))
        .route("/assets/{*path}", get(static_files::asset))
        .route("/api/login", post(login::endpoint))
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
        return static_files::index(&gw).await;
    }
    // Browser providers' `Origin` is shown to the user with their pairing request.
    let origin = req
        .headers()
        .get(axum::http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let slots = gw.shared().provider_slots.clone();
    limited_upgrade(req, gw, slots, "provider", move |gw, ws| {
        crate::providers::serve(gw, ws, remote, origin)
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
    let slots = gw.shared().host_slots.clone();
    limited_upgrade(req, gw, slots, "session-host", move |gw, ws| {
        crate::sessions::serve_host(gw, ws, remote)
    })
}

/// Upgrades if a connection slot is free. The slot is taken before the upgrade, so a
/// connection over the limit is refused with a plain HTTP 503 and never costs a
/// WebSocket; it is released when `serve` returns.
pub(crate) fn limited_upgrade<F, Fut>(
    req: Request,
    gw: Gateway,
    slots: Arc<Semaphore>,
    kind: &'static str,
    serve: F,
) -> Response
where
    F: FnOnce(Gateway, WsStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Ok(permit) = slots.try_acquire_owned() else {
        tracing::warn!(kind, "connection refused: limit reached");
        gw.limit_hit(match kind {
            "provider" => Limit::ProviderConnections,
            "session-host" => Limit::HostConnections,
            _ => Limit::ControlConnections,
        });
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Too many {kind} connections\n"),
        )
            .into_response();
    };
    let tasks = gw.shared().tasks.clone();
    // Opening and closing change the connection states the diagnostics show.
    gw.diagnostics_changed();
    let counter = gw.clone();
    let over_budget = move || counter.limit_hit(Limit::PreAuthBytes);
    upgrade::accept(req, tasks, over_budget, move |ws| async move {
        let closed = gw.clone();
        serve(gw, ws).await;
        drop(permit);
        closed.diagnostics_changed();
    })
}

//! The control plane, `ws://127.0.0.1:PORT/control`: what the panel, the tray app and
//! `tap pairing` speak (`tap_protocol::control`, `docs/control-protocol.md`).
//!
//! Two gates, in this order: the `Origin` header before the upgrade (a web page the user
//! happens to visit must not even get a socket), then the control token as the first
//! request. Everything after is dispatched to the engine and answered on this socket;
//! engine events are forwarded, numbered per connection.

pub(crate) mod connection;
mod dispatch;
mod follow;
mod playground;

use crate::accept::Kind;
use crate::auth::origin;
use crate::gateway::Gateway;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;

/// `GET /control`: the Origin check, then the (connection-limited) upgrade.
pub(crate) async fn endpoint(
    State(gw): State<Gateway>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let origin = origin::CONTROL_SOCKET;
    if !origin::admits(
        req.headers(),
        gw.address(),
        origin,
        "control connection",
        remote,
    ) {
        return (StatusCode::FORBIDDEN, "Origin not allowed\n").into_response();
    }
    let core = gw.core().clone();
    crate::accept::limited_upgrade(req, &core, Kind::Control, move |ws| {
        connection::serve(gw, ws, remote)
    })
}

//! The WebSocket handshake, done by hand on top of axum so the resulting stream is a plain
//! tokio-tungstenite stream over our [`Metered`] IO with our frame limits.

use super::metered::Metered;
use super::slots::Ticket;
use crate::limits::SOCKET_READ_BUFFER_BYTES;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use std::future::Future;
use tap_protocol::limits::{HARD_FRAME_CAP_BYTES, MAX_PRE_AUTH_BYTES};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;
use tokio_util::task::TaskTracker;

/// A server-side WebSocket on an upgraded HTTP connection.
pub(crate) type WsStream = WebSocketStream<Metered<TokioIo<hyper::upgrade::Upgraded>>>;

pub(crate) fn is_websocket(req: &Request) -> bool {
    let has = |name, want: &str| {
        req.headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(want))
    };
    has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade")
}

/// Answers the handshake and runs `serve` on the socket once the upgrade completes, as a
/// task owned by `tasks`. The socket keeps `slot` until it drops. `over_budget` runs if
/// the peer sends more than `MAX_PRE_AUTH_BYTES` before authenticating (the socket then
/// fails).
pub(crate) fn accept<F, Fut>(
    mut req: Request,
    tasks: TaskTracker,
    slot: Ticket,
    over_budget: impl FnOnce() + Send + 'static,
    serve: F,
) -> Response
where
    F: FnOnce(WsStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let version_ok = req
        .headers()
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_some_and(|v| v == "13");
    let Some(key) = req.headers().get(header::SEC_WEBSOCKET_KEY).cloned() else {
        return (StatusCode::BAD_REQUEST, "missing Sec-WebSocket-Key\n").into_response();
    };
    if !version_ok {
        return (StatusCode::BAD_REQUEST, "unsupported WebSocket version\n").into_response();
    }
    let on_upgrade = hyper::upgrade::on(&mut req);
    tasks.spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(u) => u,
            Err(e) => {
                tracing::debug!(error = %e, "WebSocket upgrade failed");
                return;
            }
        };
        let mut config = WebSocketConfig::default();
        config.max_message_size = Some(HARD_FRAME_CAP_BYTES);
        config.max_frame_size = Some(HARD_FRAME_CAP_BYTES);
        // tungstenite's default is 128 KiB, zeroed per connection: most of a provider
        // socket's memory, and measurable in connection churn. Frames here are small;
        // large ones grow the buffer as needed.
        config.read_buffer_size = SOCKET_READ_BUFFER_BYTES;
        let io = Metered::new(TokioIo::new(upgraded), MAX_PRE_AUTH_BYTES)
            .on_over_budget(over_budget)
            .with_slot(slot);
        let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
        serve(ws).await;
    });
    let accept = derive_accept_key(key.as_bytes());
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header(
            header::SEC_WEBSOCKET_ACCEPT,
            HeaderValue::from_str(&accept).expect("base64 is a valid header value"),
        )
        .body(Body::empty())
        .expect("static response")
}

//! One-time panel login: `ui.login` (control plane) issues a code inside a URL fragment,
//! and the page this gateway serves trades it for the control token with
//! `POST /api/login {"code"}`.
//!
//! Why it is safe to hand the control token to a browser page this way:
//! - only a control client (which already holds the token) can issue a code;
//! - the code travels in the URL *fragment*, which browsers never send to a server, so
//!   it lands in no request line, proxy or log; it works once, for 120 s;
//! - the exchange requires the `Origin` of the panel itself: another web page (also one
//!   that rebinds its DNS name to 127.0.0.1, whose Origin is still its own name) is
//!   refused before the code is even looked at, so it cannot consume or guess it.
//!
//! Neither the code nor the token is ever logged.

use super::headers::harden;
use crate::auth::origin::{self, PANEL_LOGIN};
use crate::gateway::Gateway;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::net::SocketAddr;
use tap_protocol::limits::MAX_LOGIN_BODY_BYTES;

#[derive(Deserialize)]
struct LoginBody {
    code: String,
}

/// `POST /api/login`: Origin first (403, nothing consumed), then the body (400), then the
/// code (401, or 200 with the control token).
pub(crate) async fn endpoint(
    State(gw): State<Gateway>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if !origin::admits(
        req.headers(),
        gw.address(),
        PANEL_LOGIN,
        "panel login",
        remote,
    ) {
        return answer(StatusCode::FORBIDDEN, error("Origin not allowed"));
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_LOGIN_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return answer(
                StatusCode::BAD_REQUEST,
                error("The body must be {\"code\": \"…\"}"),
            )
        }
    };
    let Ok(LoginBody { code }) = serde_json::from_slice::<LoginBody>(&body) else {
        return answer(
            StatusCode::BAD_REQUEST,
            error("The body must be {\"code\": \"…\"}"),
        );
    };
    if !gw.redeem_login(&code) {
        tracing::info!(%remote, "panel login refused: unknown, used or expired code");
        return answer(
            StatusCode::UNAUTHORIZED,
            error("This login link is unknown, used or expired; run `tap ui` for a new one"),
        );
    }
    tracing::info!(%remote, "panel logged in");
    answer(
        StatusCode::OK,
        serde_json::json!({ "controlToken": gw.control_token() }),
    )
}

fn error(message: &str) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

fn answer(status: StatusCode, body: serde_json::Value) -> Response {
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    harden(h);
    resp.into_response()
}

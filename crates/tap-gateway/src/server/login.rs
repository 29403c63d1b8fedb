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

use crate::auth::tokens;
use crate::gateway::Gateway;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::SystemTime;
use tap_protocol::control::{UiLoginResult, UI_LOGIN_CODE_TTL};
use tokio::time::Instant;

/// Codes outstanding at once; issuing one more forgets the oldest.
const MAX_OUTSTANDING: usize = 16;

/// A login request body is `{"code": "<43 characters>"}`; anything much longer is not one.
const MAX_BODY_BYTES: usize = 1024;

/// The outstanding codes with their expiry, oldest first.
#[derive(Default)]
pub(crate) struct LoginCodes {
    codes: Mutex<VecDeque<(String, Instant)>>,
}

impl LoginCodes {
    /// A fresh code: 256 random bits, base64url; valid once, until the returned instant.
    fn issue(&self) -> (String, Instant) {
        let code = tokens::generate("");
        let now = Instant::now();
        let expires = now + UI_LOGIN_CODE_TTL;
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|(_, exp)| *exp > now);
        while codes.len() >= MAX_OUTSTANDING {
            codes.pop_front();
        }
        codes.push_back((code.clone(), expires));
        (code, expires)
    }

    /// Consumes `presented` if it is an outstanding, unexpired code. Every outstanding
    /// code is compared, each in constant time, so the time taken says nothing about
    /// which one (or how much of one) matched.
    fn redeem(&self, presented: &str) -> bool {
        let now = Instant::now();
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|(_, exp)| *exp > now);
        let mut found = None;
        for (i, (code, _)) in codes.iter().enumerate() {
            if tokens::matches(presented, code) {
                found = Some(i);
            }
        }
        match found {
            Some(i) => {
                codes.remove(i);
                true
            }
            None => false,
        }
    }
}

impl Gateway {
    /// A one-time login link for the panel this gateway serves
    /// (`http://127.0.0.1:PORT/#login=CODE`): the page exchanges the code for the control
    /// token with `POST /api/login`. The code works once, for 120 s
    /// ([`UI_LOGIN_CODE_TTL`]). The URL is a secret until used: do not log it.
    pub fn ui_login(&self) -> UiLoginResult {
        let (code, expires) = self.shared().ui_logins.issue();
        let left = expires.saturating_duration_since(Instant::now());
        tracing::info!("panel login link issued");
        UiLoginResult {
            url: format!("http://{}/#login={code}", self.address()),
            expires_at: crate::time::rfc3339(SystemTime::now() + left),
        }
    }
}

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
    if let Err(why) = check_origin(req.headers(), gw.address()) {
        tracing::warn!(%remote, why, "panel login refused");
        return answer(StatusCode::FORBIDDEN, error("Origin not allowed"));
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await {
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
    if !gw.shared().ui_logins.redeem(&code) {
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

/// `Ok` only for exactly one `Origin` that is the panel's own (`http://127.0.0.1:PORT`,
/// `http://localhost:PORT`). A missing Origin is refused too: browsers always send it on
/// a POST, and nothing but the panel has a reason to call this.
fn check_origin(headers: &HeaderMap, gateway: SocketAddr) -> Result<(), String> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let Some(origin) = origins.next() else {
        return Err("no Origin header".into());
    };
    if origins.next().is_some() {
        return Err("more than one Origin header".into());
    }
    let Ok(origin) = origin.to_str() else {
        return Err("Origin is not ASCII".into());
    };
    let port = gateway.port();
    let own = [
        format!("http://{gateway}"),
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ];
    if own.iter().any(|o| origin.eq_ignore_ascii_case(o)) {
        Ok(())
    } else {
        Err(format!("Origin '{origin}' is not the panel's"))
    }
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
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    resp.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_code_works_once_and_only_until_it_expires() {
        let codes = LoginCodes::default();
        let (a, _) = codes.issue();
        let (b, _) = codes.issue();
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
        assert!(!codes.redeem(&a[..42]));
        assert!(!codes.redeem(""));
        assert!(codes.redeem(&a));
        assert!(!codes.redeem(&a), "second use");
        tokio::time::advance(UI_LOGIN_CODE_TTL).await;
        assert!(!codes.redeem(&b), "expired");
    }

    #[tokio::test]
    async fn issuing_past_the_cap_forgets_the_oldest() {
        let codes = LoginCodes::default();
        let first = codes.issue().0;
        let rest: Vec<String> = (0..MAX_OUTSTANDING).map(|_| codes.issue().0).collect();
        assert!(!codes.redeem(&first));
        for c in rest {
            assert!(codes.redeem(&c));
        }
    }

    #[test]
    fn only_the_panel_origin_may_log_in() {
        let gw: SocketAddr = "127.0.0.1:9400".parse().unwrap();
        let with = |origins: &[&str]| {
            let mut h = HeaderMap::new();
            for o in origins {
                h.append(header::ORIGIN, HeaderValue::from_str(o).unwrap());
            }
            h
        };
        for ok in ["http://127.0.0.1:9400", "http://localhost:9400"] {
            assert_eq!(check_origin(&with(&[ok]), gw), Ok(()), "{ok}");
        }
        for bad in [
            &[][..],
            &["http://evil.example"],
            &["tauri://localhost"],
            &["http://127.0.0.1:9401"],
            &["null"],
            &["http://127.0.0.1:9400", "http://127.0.0.1:9400"],
        ] {
            assert!(check_origin(&with(bad), gw).is_err(), "{bad:?}");
        }
    }
}

//! Which pages may open a control socket.
//!
//! Browsers always send `Origin` on a WebSocket handshake and a page cannot forge it, so
//! allowing only the panel's own origins keeps every other web page out (including one
//! that rebinds its DNS name to 127.0.0.1: its Origin is still its own name). Native
//! clients (the CLI, the Tauri shell's Rust side) send no Origin; they still need the
//! control token, which only the user's own processes can read.

use axum::http::{header, HeaderMap};
use std::net::SocketAddr;

/// The Tauri webview's origins: `tauri://localhost` (Linux, macOS) and
/// `http://tauri.localhost` (Windows).
const TAURI_ORIGINS: &[&str] = &["tauri://localhost", "http://tauri.localhost"];

/// `Ok` when the handshake's Origin may use the control plane; else why not (for the log;
/// the Origin itself is logged too, it is not secret).
pub(super) fn check(headers: &HeaderMap, gateway: SocketAddr) -> Result<(), String> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let Some(origin) = origins.next() else {
        return Ok(());
    };
    if origins.next().is_some() {
        return Err("more than one Origin header".into());
    }
    let Ok(origin) = origin.to_str() else {
        return Err("Origin is not ASCII".into());
    };
    let port = gateway.port();
    // The panel served by this gateway, under either loopback name.
    let own = [
        format!("http://{gateway}"),
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ];
    let allowed = own
        .iter()
        .map(String::as_str)
        .chain(TAURI_ORIGINS.iter().copied());
    for ok in allowed {
        if origin.eq_ignore_ascii_case(ok) {
            return Ok(());
        }
    }
    Err(format!("Origin '{origin}' is not the panel's"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(origins: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for o in origins {
            h.append(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    const GW: &str = "127.0.0.1:9400";

    #[test]
    fn no_origin_and_the_panel_origins_pass() {
        let gw = GW.parse().unwrap();
        for ok in [
            &[][..],
            &["http://127.0.0.1:9400"],
            &["http://localhost:9400"],
            &["tauri://localhost"],
            &["http://tauri.localhost"],
        ] {
            assert_eq!(check(&with(ok), gw), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn every_other_origin_is_refused() {
        let gw = GW.parse().unwrap();
        for bad in [
            "http://evil.example",
            "http://127.0.0.1:9401",
            "http://localhost",
            "https://127.0.0.1:9400",
            "http://127.0.0.1:9400.evil.example",
            "http://localhost:9400/",
            "null",
            "file://",
            "https://tauri.localhost.evil.example",
        ] {
            assert!(check(&with(&[bad]), gw).is_err(), "{bad} was accepted");
        }
        assert!(
            check(&with(&["http://127.0.0.1:9400", "http://evil.example"]), gw).is_err(),
            "two Origin headers"
        );
    }

    #[test]
    fn an_ipv6_gateway_accepts_its_own_bracketed_origin() {
        let gw = "[::1]:9400".parse().unwrap();
        assert_eq!(check(&with(&["http://[::1]:9400"]), gw), Ok(()));
        assert_eq!(check(&with(&["http://localhost:9400"]), gw), Ok(()));
    }
}

//! Which web pages may talk to the gateway: the one `Origin` check behind the control
//! socket's upgrade, the panel's login exchange and the MCP endpoint.
//!
//! Browsers always send `Origin` on a WebSocket handshake and on a POST, and a page cannot
//! forge it, so allowing only the panel's own origins keeps every other web page out
//! (including one that rebinds its DNS name to 127.0.0.1: its Origin is still its own
//! name). The Origin itself is not secret; it is logged with a refusal.
//!
//! The MCP endpoint also admits every loopback origin (`http://localhost:5173`, any port):
//! a web-based MCP client the user runs locally. That is safe because the credential there
//! is the host token, which a page can only have if the user gave it to it; a page of any
//! other site is still refused before its token is even looked at, and so is a request
//! whose `Host` is not a loopback name (DNS rebinding: a site that points its name at
//! 127.0.0.1 still sends its own name as `Host`). The control plane keeps the panel-only
//! rule: its token is in the page the gateway serves.

use crate::error::Error;
use axum::http::{header, HeaderMap};
use std::net::SocketAddr;
use tap_protocol::ErrorCode;

/// The Tauri webview's origins: `tauri://localhost` (Linux, macOS) and
/// `http://tauri.localhost` (Windows).
const TAURI_ORIGINS: &[&str] = &["tauri://localhost", "http://tauri.localhost"];

/// What a surface accepts besides the panel served by this gateway.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowed {
    /// No `Origin` at all: a native client (the CLI, the Tauri shell's Rust side). Those
    /// still need the control token, which only the user's own processes can read.
    pub native: bool,
    /// The desktop app's webview.
    pub tauri: bool,
    /// Any page on a loopback origin (`http(s)://localhost|127.0.0.1|[::1][:port]`), whose
    /// request also names a loopback `Host`; the surface must require a token of its own.
    pub loopback: bool,
}

/// The control socket: the panel, the desktop app's webview, native clients.
pub(crate) const CONTROL_SOCKET: Allowed = Allowed {
    native: true,
    tauri: true,
    loopback: false,
};

/// `POST /api/login`: the panel page only (nothing else has a reason to call it).
pub(crate) const PANEL_LOGIN: Allowed = Allowed {
    native: false,
    tauri: false,
    loopback: false,
};

/// `Ok` when the request's Origin may use the surface `allowed` describes; else why not.
pub(crate) fn check(
    headers: &HeaderMap,
    gateway: SocketAddr,
    allowed: Allowed,
) -> Result<(), Error> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let Some(origin) = origins.next() else {
        return match allowed.native {
            true => Ok(()),
            false => Err(Error::new(ErrorCode::Unauthorized, "no Origin header")),
        };
    };
    if origins.next().is_some() {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            "more than one Origin header",
        ));
    }
    let Ok(origin) = origin.to_str() else {
        return Err(Error::new(ErrorCode::Unauthorized, "Origin is not ASCII"));
    };
    let port = gateway.port();
    // The panel served by this gateway, under either loopback name.
    let own = [
        format!("http://{gateway}"),
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ];
    let tauri = TAURI_ORIGINS.iter().filter(|_| allowed.tauri).copied();
    if own
        .iter()
        .map(String::as_str)
        .chain(tauri)
        .any(|ok| origin.eq_ignore_ascii_case(ok))
    {
        Ok(())
    } else if allowed.loopback && is_loopback_origin(origin) {
        match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
            Some(host) if is_loopback_authority(host) => Ok(()),
            _ => Err(Error::new(
                ErrorCode::Unauthorized,
                "a page on a loopback origin must address the gateway by a loopback name (Host)",
            )),
        }
    } else {
        Err(Error::new(
            ErrorCode::Unauthorized,
            format!("Origin '{origin}' is not the panel's"),
        ))
    }
}

/// `http://` or `https://` and a loopback authority, nothing after it (an Origin has no
/// path).
pub(crate) fn is_loopback_origin(origin: &str) -> bool {
    let lower = origin.to_ascii_lowercase();
    let authority = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"));
    authority.is_some_and(is_loopback_authority)
}

/// `localhost`, `127.0.0.1` or `[::1]`, each with an optional port: the names that reach
/// this machine whatever a DNS server says.
fn is_loopback_authority(authority: &str) -> bool {
    let lower = authority.to_ascii_lowercase();
    let (host, port) = match lower.strip_prefix("[::1]") {
        Some(rest) => ("[::1]", rest),
        None => lower.split_at(lower.find(':').unwrap_or(lower.len())),
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| {
            !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        });
    matches!(host, "localhost" | "127.0.0.1" | "[::1]") && port_ok
}

/// [`check`] as the HTTP endpoints use it: a refusal is logged with what was refused and
/// who asked.
pub(crate) fn admits(
    headers: &HeaderMap,
    gateway: SocketAddr,
    allowed: Allowed,
    refused: &str,
    remote: SocketAddr,
) -> bool {
    match check(headers, gateway, allowed) {
        Ok(()) => true,
        Err(why) => {
            tracing::warn!(%remote, why = why.message.as_str(), "{refused} refused");
            false
        }
    }
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
    fn no_origin_and_the_panel_origins_pass_the_control_socket() {
        let gw = GW.parse().unwrap();
        for ok in [
            &[][..],
            &["http://127.0.0.1:9400"],
            &["http://localhost:9400"],
            &["tauri://localhost"],
            &["http://tauri.localhost"],
        ] {
            assert_eq!(check(&with(ok), gw, CONTROL_SOCKET), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn every_other_origin_is_refused_by_the_control_socket() {
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
            assert!(
                check(&with(&[bad]), gw, CONTROL_SOCKET).is_err(),
                "{bad} was accepted"
            );
        }
        assert!(
            check(
                &with(&["http://127.0.0.1:9400", "http://evil.example"]),
                gw,
                CONTROL_SOCKET
            )
            .is_err(),
            "two Origin headers"
        );
    }

    #[test]
    fn an_ipv6_gateway_accepts_its_own_bracketed_origin() {
        let gw = "[::1]:9400".parse().unwrap();
        assert_eq!(
            check(&with(&["http://[::1]:9400"]), gw, CONTROL_SOCKET),
            Ok(())
        );
        assert_eq!(
            check(&with(&["http://localhost:9400"]), gw, CONTROL_SOCKET),
            Ok(())
        );
    }

    const MCP: Allowed = Allowed {
        native: true,
        tauri: true,
        loopback: true,
    };

    fn with_host(origin: &str, host: &str) -> HeaderMap {
        let mut h = with(&[origin]);
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        h
    }

    #[test]
    fn a_surface_with_its_own_token_admits_any_loopback_origin_addressing_a_loopback_host() {
        let gw: SocketAddr = GW.parse().unwrap();
        for ok in [
            "http://localhost:5173",
            "http://127.0.0.1:3000",
            "https://localhost",
            "http://[::1]:8080",
            "HTTP://LOCALHOST:1",
        ] {
            assert_eq!(
                check(&with_host(ok, "127.0.0.1:9400"), gw, MCP),
                Ok(()),
                "{ok}"
            );
            assert!(
                check(&with_host(ok, "127.0.0.1:9400"), gw, CONTROL_SOCKET).is_err(),
                "{ok} on the control socket"
            );
        }
        for host in ["localhost:9400", "[::1]:9400", "127.0.0.1"] {
            assert_eq!(
                check(&with_host("http://localhost:5173", host), gw, MCP),
                Ok(()),
                "{host}"
            );
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example:5173",
            "http://127.0.0.1.nip.io",
            "http://localhost:5173/",
            "http://localhost:",
            "http://localhost:123456",
            "http://localhost:80x",
            "http://[::2]:80",
            "null",
            "file://",
            "ws://localhost:5173",
        ] {
            assert!(
                check(&with_host(bad, "127.0.0.1:9400"), gw, MCP).is_err(),
                "{bad} was accepted"
            );
        }
        // DNS rebinding: the page's own name comes as Host.
        for host in ["evil.example:9400", "localhost.evil.example:9400", ""] {
            assert!(
                check(&with_host("http://localhost:5173", host), gw, MCP).is_err(),
                "Host {host} was accepted"
            );
        }
        assert!(
            check(&with(&["http://localhost:5173"]), gw, MCP).is_err(),
            "no Host"
        );
    }

    #[test]
    fn only_the_panel_origin_may_log_in() {
        let gw: SocketAddr = GW.parse().unwrap();
        for ok in ["http://127.0.0.1:9400", "http://localhost:9400"] {
            assert_eq!(check(&with(&[ok]), gw, PANEL_LOGIN), Ok(()), "{ok}");
        }
        for bad in [
            &[][..],
            &["http://evil.example"],
            &["tauri://localhost"],
            &["http://127.0.0.1:9401"],
            &["null"],
            &["http://127.0.0.1:9400", "http://127.0.0.1:9400"],
        ] {
            assert!(check(&with(bad), gw, PANEL_LOGIN).is_err(), "{bad:?}");
        }
    }
}

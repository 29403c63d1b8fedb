//! The panel's files: from `GatewayConfig::ui_dir` (a built `ui/dist`) when set, else
//! from `GatewayConfig::embedded_panel` (the panel built into the program). `GET /` serves
//! `index.html`, `GET /assets/<file>` a file under `assets/`. Nothing else is reachable: a
//! path is accepted only as plain name segments, and a file found in `ui_dir` must still
//! lie inside `assets/` once symlinks are resolved.
//!
//! `ui_dir` is an override, not a fallback: when it is set, the embedded panel is not
//! used, even if the directory holds no panel (so a panel under development is never
//! silently replaced by the built-in one). Its files are read per request (no cache), so a
//! rebuilt panel is served at once.

use super::headers::harden;
use crate::config::panel_source::{source, Source};
use crate::gateway::Gateway;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::borrow::Cow;
use std::path::{Path as FsPath, PathBuf};

/// What `GET /` says when there is no panel to serve.
const NO_PANEL: &str =
    "Tap gateway. Providers connect here over WebSocket (TAP Provider Interface v2).\n\
The panel is not available here: TAP_UI_DIR names a directory without a built panel \
(index.html), or this program was built without one. Unset TAP_UI_DIR to use the panel \
built into `tap`, or build one with `npm install && npm run build` in ui/ and point \
TAP_UI_DIR at ui/dist (then restart the gateway).\n";

/// `GET /` without a WebSocket upgrade: the panel's `index.html`, or the plain-text note.
pub(crate) async fn index(gw: &Gateway) -> Response {
    let bytes = match source(&gw.core().config) {
        Source::Dir(dir) => match tokio::fs::read(dir.join("index.html")).await {
            Ok(bytes) => Cow::Owned(bytes),
            Err(e) => {
                tracing::debug!(dir = %dir.display(), error = %e, "no panel index.html");
                return (StatusCode::OK, NO_PANEL).into_response();
            }
        },
        Source::Embedded(panel) => match panel.get("index.html") {
            Some(bytes) => Cow::Borrowed(bytes),
            None => return (StatusCode::OK, NO_PANEL).into_response(),
        },
        Source::None => return (StatusCode::OK, NO_PANEL).into_response(),
    };
    let mut resp = file_response(bytes, "text/html; charset=utf-8", gw);
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET /assets/{*path}`: a file under the panel's `assets/`, else 404.
pub(crate) async fn asset(State(gw): State<Gateway>, Path(path): Path<String>) -> Response {
    if !is_plain_relative(&path) {
        return not_found();
    }
    let bytes = match source(&gw.core().config) {
        Source::Dir(dir) => {
            let Some(file) = locate(dir, &path) else {
                return not_found();
            };
            match tokio::fs::read(&file).await {
                Ok(bytes) => Cow::Owned(bytes),
                Err(_) => return not_found(),
            }
        }
        Source::Embedded(panel) => match panel.get(&format!("assets/{path}")) {
            Some(bytes) => Cow::Borrowed(bytes),
            None => return not_found(),
        },
        Source::None => return not_found(),
    };
    let mut resp = file_response(bytes, content_type(&path), &gw);
    // Vite names assets by content hash, but we send no validators: revalidate.
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// The file `path` (plain names, checked by the caller) names under `<dir>/assets/`, if
/// it is a regular file inside that directory once symlinks are resolved.
fn locate(dir: &FsPath, path: &str) -> Option<PathBuf> {
    let assets = dir.join("assets");
    let root = assets.canonicalize().ok()?;
    let file = assets.join(path).canonicalize().ok()?;
    (file.starts_with(&root) && file.is_file()).then_some(file)
}

/// `a/b-1.js`: segments of `[A-Za-z0-9._-]`, none empty or starting with a dot (so no
/// `..`, no hidden files, no absolute path, no backslash or drive letter).
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').all(|seg| {
            !seg.is_empty()
                && !seg.starts_with('.')
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

/// A file with the panel's security headers. The CSP lets the page talk only to this
/// gateway (its own origin and its WebSocket under either loopback name), load nothing
/// from elsewhere, and not be framed.
fn file_response(bytes: Cow<'static, [u8]>, content_type: &'static str, gw: &Gateway) -> Response {
    let port = gw.address().port();
    let csp = format!(
        "default-src 'self'; connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; \
         img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
    );
    let mut resp = Response::new(Body::from(bytes));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(&csp).expect("ASCII"),
    );
    harden(h);
    resp
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not found\n").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_pass() {
        for ok in ["app.js", "index-B4x_9a.js", "fonts/a.woff2", "a/b/c.css"] {
            assert!(is_plain_relative(ok), "{ok}");
        }
        for bad in [
            "",
            "..",
            "../index.html",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            ".env",
            "a/.hidden",
            "a\\..\\b",
            "C:x",
            "a b",
            "a%2e",
            "a/",
        ] {
            assert!(!is_plain_relative(bad), "{bad}");
        }
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type("x.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("x.CSS"), "text/css; charset=utf-8");
        assert_eq!(content_type("x.svg"), "image/svg+xml");
        assert_eq!(content_type("x"), "application/octet-stream");
    }
}

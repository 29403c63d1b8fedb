//! The panel over plain HTTP on the gateway port (`GatewayConfig::ui_dir`): `GET /` and
//! `/assets/…` with their security headers and no way out of the directory, the one-time
//! login (`ui.login` on the control plane, `POST /api/login`), and the panel's extra
//! control methods (`streams.history`, `provider.disconnect`). Real sockets; a tiny fake
//! panel in a tempdir stands in for the built UI.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_client::{ControlClient, ControlClientError};
use tap_gateway::EmbeddedPanel;
use tap_protocol::control::UI_LOGIN_CODE_TTL;
use tap_protocol::ErrorCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INDEX: &str =
    "<!doctype html><title>fake panel</title><script src=\"/assets/app.js\"></script>\n";
const APP_JS: &str = "console.log('fake panel');\n";
/// In `ui_dir` but outside `assets/`: must never be served.
const SECRET: &str = "not for the web\n";

/// A gateway serving a fake panel (`index.html`, `assets/app.js`, and `secret.txt` next to
/// them), in a tempdir of its own.
async fn with_panel() -> (TestGateway, tempfile::TempDir) {
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(ui.path().join("index.html"), INDEX).unwrap();
    std::fs::create_dir(ui.path().join("assets")).unwrap();
    std::fs::write(ui.path().join("assets").join("app.js"), APP_JS).unwrap();
    std::fs::write(ui.path().join("secret.txt"), SECRET).unwrap();
    let dir = ui.path().to_path_buf();
    let gw = TestGateway::start_with(|c| c.ui_dir = Some(dir)).await;
    (gw, ui)
}

/// The same fake panel compiled in, as `tap` holds the real one
/// (`GatewayConfig::embedded_panel`); no `secret.txt`, as only served paths are embedded.
const EMBEDDED: EmbeddedPanel = EmbeddedPanel::new(&[
    ("index.html", INDEX.as_bytes()),
    ("assets/app.js", APP_JS.as_bytes()),
]);

/// A gateway serving [`EMBEDDED`], with no `ui_dir`.
async fn with_embedded() -> TestGateway {
    TestGateway::start_with(|c| c.embedded_panel = Some(EMBEDDED)).await
}

fn port(gw: &TestGateway) -> u16 {
    gw.handle.gateway().address().port()
}

/// One HTTP response, read to the end of a `Connection: close` exchange.
#[derive(Debug)]
struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl HttpResponse {
    /// The one value of header `name` (case-insensitive), failing on none or several.
    fn header(&self, name: &str) -> &str {
        let found: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(found.len(), 1, "header {name} in {self:?}");
        found[0]
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Sends `head` (request line and headers, without the blank line) and `body` over a
/// fresh TCP connection, exactly as written: no client-side path normalisation.
async fn http(gw: &TestGateway, head: &str, body: &str) -> HttpResponse {
    let addr = gw.handle.gateway().address();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{head}\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut raw))
        .await
        .expect("no complete HTTP response in time")
        .unwrap();
    let text = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line}"));
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(':').expect("header line");
            (n.trim().to_string(), v.trim().to_string())
        })
        .collect();
    HttpResponse {
        status,
        headers,
        body: body.to_string(),
    }
}

async fn get(gw: &TestGateway, path: &str) -> HttpResponse {
    http(gw, &format!("GET {path} HTTP/1.1"), "").await
}

/// `POST /api/login` with `origin` (none when `None`) and `body`.
async fn login(gw: &TestGateway, origin: Option<&str>, body: &str) -> HttpResponse {
    let mut head = "POST /api/login HTTP/1.1\r\nContent-Type: application/json".to_string();
    if let Some(o) = origin {
        head.push_str(&format!("\r\nOrigin: {o}"));
    }
    http(gw, &head, body).await
}

fn panel_origin(gw: &TestGateway) -> String {
    format!("http://127.0.0.1:{}", port(gw))
}

async fn control(gw: &TestGateway) -> ControlClient {
    let url = format!("{}/control", gw.url());
    ControlClient::connect(&url, gw.handle.gateway().control_token())
        .await
        .unwrap()
        .0
}

/// A fresh login code from `ui.login`, checking the URL's shape on the way.
async fn login_code(gw: &TestGateway) -> String {
    let l = control(gw).await.ui_login().await.unwrap();
    let prefix = format!("http://127.0.0.1:{}/#login=", port(gw));
    let code = l
        .url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{} does not start with {prefix}", l.url));
    code.to_string()
}

fn code_body(code: &str) -> String {
    json!({ "code": code }).to_string()
}

fn refused_code(e: ControlClientError) -> ErrorCode {
    match e {
        ControlClientError::Refused(err) => err.code,
        other => panic!("expected a refusal, got {other}"),
    }
}

// ---- serving the panel ----

#[tokio::test]
async fn root_serves_index_html_with_the_security_headers() {
    let (gw, _ui) = with_panel().await;
    let r = get(&gw, "/").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, INDEX);
    assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
    let p = port(&gw);
    assert_eq!(
        r.header("content-security-policy"),
        format!(
            "default-src 'self'; connect-src 'self' ws://127.0.0.1:{p} ws://localhost:{p}; \
             img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
        )
    );
    assert_eq!(r.header("x-content-type-options"), "nosniff");
    assert_eq!(r.header("referrer-policy"), "no-referrer");
    assert_eq!(r.header("cache-control"), "no-store");
}

#[tokio::test]
async fn assets_are_served_with_their_content_type() {
    let (gw, ui) = with_panel().await;
    let r = get(&gw, "/assets/app.js").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, APP_JS);
    assert_eq!(r.header("content-type"), "text/javascript; charset=utf-8");
    assert_eq!(r.header("x-content-type-options"), "nosniff");

    std::fs::create_dir(ui.path().join("assets").join("fonts")).unwrap();
    std::fs::write(ui.path().join("assets").join("style-1a.css"), "a{}").unwrap();
    std::fs::write(ui.path().join("assets/fonts/x.woff2"), "w").unwrap();
    let r = get(&gw, "/assets/style-1a.css").await;
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, "text/css; charset=utf-8")
    );
    let r = get(&gw, "/assets/fonts/x.woff2").await;
    assert_eq!((r.status, r.header("content-type")), (200, "font/woff2"));

    for missing in [
        "/assets/nope.js",
        "/assets/fonts",
        "/assets/",
        "/index.html",
    ] {
        assert_eq!(get(&gw, missing).await.status, 404, "{missing}");
    }
}

#[tokio::test]
async fn no_path_leads_out_of_the_assets_directory() {
    let (gw, ui) = with_panel().await;
    // A file next to the panel directory, as a traversal target outside it.
    let outside = ui
        .path()
        .parent()
        .unwrap()
        .join(format!("tap-panel-outside-{}.txt", std::process::id()));
    std::fs::write(&outside, SECRET).unwrap();
    let outside_name = outside.file_name().unwrap().to_str().unwrap().to_string();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, ui.path().join("assets").join("link.txt")).unwrap();

    let attempts = [
        "/assets/../index.html".to_string(),
        "/assets/../secret.txt".to_string(),
        "/assets/%2e%2e/secret.txt".to_string(),
        "/assets/%2E%2E/secret.txt".to_string(),
        "/assets/%2e%2e%2fsecret.txt".to_string(),
        "/assets/.%2e/secret.txt".to_string(),
        "/assets/..%5csecret.txt".to_string(),
        format!("/assets/../../{outside_name}"),
        format!("/assets/%2e%2e/%2e%2e/{outside_name}"),
        "/assets//etc/passwd".to_string(),
        "/assets/%2fetc%2fpasswd".to_string(),
        format!("/assets/{}", outside.display()),
        "//etc/passwd".to_string(),
        "/secret.txt".to_string(),
        "/assets/link.txt".to_string(),
        "/assets/%00app.js".to_string(),
    ];
    for path in &attempts {
        let r = get(&gw, path).await;
        assert!(
            r.status == 404 || r.status == 400,
            "{path}: status {} ({r:?})",
            r.status
        );
        assert!(!r.body.contains(SECRET.trim()), "{path} leaked: {r:?}");
        assert!(!r.body.contains("root:"), "{path} leaked: {r:?}");
    }
    std::fs::remove_file(&outside).unwrap();
    // The real asset is still reachable, so the refusals above were about the paths.
    assert_eq!(get(&gw, "/assets/app.js").await.status, 200);
}

#[tokio::test]
async fn without_a_panel_root_answers_in_plain_text() {
    let gw = TestGateway::start().await;
    let r = get(&gw, "/").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("content-type").starts_with("text/plain"), "{r:?}");
    assert!(r.body.contains("Providers connect here"), "{r:?}");
    assert!(r.body.contains("npm run build"), "{r:?}");
    assert!(r.body.contains("TAP_UI_DIR"), "{r:?}");
    assert_eq!(get(&gw, "/assets/app.js").await.status, 404);

    // A ui_dir without index.html is no panel either.
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_path_buf();
    let gw = TestGateway::start_with(|c| c.ui_dir = Some(dir)).await;
    let r = get(&gw, "/").await;
    assert_eq!(r.status, 200);
    assert!(r.body.contains("npm run build"), "{r:?}");
}

#[tokio::test]
async fn without_a_ui_dir_the_embedded_panel_is_served() {
    let gw = with_embedded().await;
    let r = get(&gw, "/").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, INDEX);
    assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
    assert!(r
        .header("content-security-policy")
        .starts_with("default-src 'self';"));
    assert_eq!(r.header("cache-control"), "no-store");
    let r = get(&gw, "/assets/app.js").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, APP_JS);
    assert_eq!(r.header("content-type"), "text/javascript; charset=utf-8");
    assert_eq!(r.header("cache-control"), "no-cache");
    for path in [
        "/assets/missing.js",
        "/assets/.app.js",
        "/assets/app.js/x",
        "/assets/%2e%2e/index.html",
        "/index.html",
    ] {
        assert_eq!(get(&gw, path).await.status, 404, "{path}");
    }
}

#[tokio::test]
async fn a_ui_dir_replaces_the_embedded_panel_even_when_it_holds_none() {
    // The override wins over the compiled-in panel...
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(ui.path().join("index.html"), "<p>from disk</p>").unwrap();
    let dir = ui.path().to_path_buf();
    let gw = TestGateway::start_with(|c| {
        c.ui_dir = Some(dir);
        c.embedded_panel = Some(EMBEDDED);
    })
    .await;
    assert_eq!(get(&gw, "/").await.body, "<p>from disk</p>");
    assert_eq!(get(&gw, "/assets/app.js").await.status, 404);

    // ...and an empty one is no panel at all, rather than a silent fallback.
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_path_buf();
    let gw = TestGateway::start_with(|c| {
        c.ui_dir = Some(dir);
        c.embedded_panel = Some(EMBEDDED);
    })
    .await;
    let r = get(&gw, "/").await;
    assert!(r.header("content-type").starts_with("text/plain"), "{r:?}");
    assert!(r.body.contains("TAP_UI_DIR"), "{r:?}");
    assert_eq!(get(&gw, "/assets/app.js").await.status, 404);
    assert!(!gw.handle.gateway().serves_panel());
}

#[tokio::test]
async fn ui_login_is_refused_when_there_is_no_panel() {
    for gw in [
        TestGateway::start().await,
        TestGateway::start_with(|c| c.embedded_panel = Some(EmbeddedPanel::new(&[]))).await,
    ] {
        assert!(!gw.handle.gateway().serves_panel());
        match control(&gw).await.ui_login().await {
            Err(ControlClientError::Refused(err)) => {
                assert_eq!(err.code, ErrorCode::NotFound);
                assert!(err.message.contains("serves no panel"), "{}", err.message);
                assert!(err.message.contains("TAP_UI_DIR"), "{}", err.message);
            }
            other => panic!("expected NOT_FOUND, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn providers_still_connect_on_root_next_to_the_panel() {
    let (gw, _ui) = with_panel().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, sessions) = gw.authed().await;
    assert_eq!(sessions["active"][0]["id"], json!(session.id), "{sessions}");
    p.send(
        json!({"type": "hello", "name": "next-to-panel", "protocolVersion": 2,
                  "session": session.id, "tools": [tool("t")]}),
    )
    .await;
    assert_eq!(p.expect("hello.ack").await["sessionId"], json!(session.id));
    // And the panel is still there.
    assert_eq!(get(&gw, "/").await.body, INDEX);
}

// ---- one-time login ----

#[tokio::test]
async fn ui_login_gives_a_link_with_a_fresh_code_for_this_port() {
    let gw = with_embedded().await;
    let c = control(&gw).await;
    let a = c.ui_login().await.unwrap();
    let b = c.ui_login().await.unwrap();
    let prefix = format!("http://127.0.0.1:{}/#login=", port(&gw));
    for l in [&a, &b] {
        let code = l
            .url
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{}", l.url));
        assert_eq!(code.len(), 43, "256 bits of base64url: {code}");
        assert!(
            code.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{code}"
        );
        assert!(
            l.expires_at.len() == 24 && l.expires_at.ends_with('Z'),
            "{}",
            l.expires_at
        );
    }
    assert_ne!(a.url, b.url);
}

#[tokio::test]
async fn a_code_is_exchanged_once_for_the_control_token() {
    let gw = with_embedded().await;
    let code = login_code(&gw).await;
    let r = login(&gw, Some(&panel_origin(&gw)), &code_body(&code)).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.header("cache-control"), "no-store");
    let token = r.json()["controlToken"].as_str().unwrap().to_string();
    assert_eq!(token, gw.handle.gateway().control_token());
    assert_eq!(r.json().as_object().unwrap().len(), 1, "{r:?}");

    // The token works on the control plane.
    let url = format!("{}/control", gw.url());
    let (c, snapshot) = ControlClient::connect(&url, &token).await.unwrap();
    assert_eq!(snapshot.seq, 0);
    c.status().await.unwrap();

    // The same code again: used.
    let again = login(&gw, Some(&panel_origin(&gw)), &code_body(&code)).await;
    assert_eq!(again.status, 401, "{again:?}");
    assert!(again.json()["error"].is_string(), "{again:?}");
    assert!(again.json().get("controlToken").is_none());

    // The other loopback name of the panel is its origin too.
    let code = login_code(&gw).await;
    let origin = format!("http://localhost:{}", port(&gw));
    assert_eq!(
        login(&gw, Some(&origin), &code_body(&code)).await.status,
        200
    );

    // A code never issued.
    let made_up = "A".repeat(43);
    let r = login(&gw, Some(&panel_origin(&gw)), &code_body(&made_up)).await;
    assert_eq!(r.status, 401, "{r:?}");
}

#[tokio::test]
async fn a_foreign_or_missing_origin_is_403_and_leaves_the_code_unused() {
    let gw = with_embedded().await;
    let code = login_code(&gw).await;
    let other_port = format!("http://127.0.0.1:{}", port(&gw).wrapping_add(1));
    let origin_403 = [
        Some("http://evil.example"),
        None,
        Some(other_port.as_str()),
        Some("tauri://localhost"),
        Some("null"),
    ];
    for origin in origin_403 {
        let r = login(&gw, origin, &code_body(&code)).await;
        assert_eq!(r.status, 403, "{origin:?}: {r:?}");
        assert!(r.json().get("controlToken").is_none(), "{r:?}");
    }
    // Two Origin headers, one of them right: refused too.
    let head = format!(
        "POST /api/login HTTP/1.1\r\nOrigin: {}\r\nOrigin: http://evil.example",
        panel_origin(&gw)
    );
    assert_eq!(http(&gw, &head, &code_body(&code)).await.status, 403);

    // None of that consumed the code.
    let r = login(&gw, Some(&panel_origin(&gw)), &code_body(&code)).await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_malformed_body_is_400_and_leaves_the_code_unused() {
    let gw = with_embedded().await;
    let code = login_code(&gw).await;
    let origin = panel_origin(&gw);
    let long = code_body(&"x".repeat(4096));
    for body in [
        "",
        "not json",
        "[]",
        "{}",
        r#"{"code": 5}"#,
        r#"{"code": null}"#,
        long.as_str(),
    ] {
        let r = login(&gw, Some(&origin), body).await;
        assert_eq!(r.status, 400, "{body:.40}: {r:?}");
        assert!(r.json()["error"].is_string(), "{r:?}");
    }
    assert_eq!(
        login(&gw, Some(&origin), &code_body(&code)).await.status,
        200
    );
    // Only POST.
    assert_eq!(get(&gw, "/api/login").await.status, 405);
}

#[tokio::test(start_paused = true)]
async fn a_code_expires_after_120_seconds() {
    let gw = with_embedded().await;
    let early = login_code(&gw).await;
    let late = login_code(&gw).await;
    let origin = panel_origin(&gw);
    tokio::time::sleep(UI_LOGIN_CODE_TTL - Duration::from_secs(1)).await;
    assert_eq!(
        login(&gw, Some(&origin), &code_body(&early)).await.status,
        200
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = login(&gw, Some(&origin), &code_body(&late)).await;
    assert_eq!(r.status, 401, "{r:?}");
}

#[tokio::test]
async fn a_login_result_debug_prints_no_code() {
    // What a `?` log field would print must not carry the secret.
    let gw = with_embedded().await;
    let l = control(&gw).await.ui_login().await.unwrap();
    let code = l.url.split_once("#login=").unwrap().1.to_string();
    assert!(!format!("{l:?}").contains(&code), "{l:?}");
}

// ---- streams.history and provider.disconnect ----

/// `stream.query` on the provider's own socket: once it is answered, every push the
/// provider sent before it has been stored.
async fn barrier(p: &mut Provider) {
    p.send(json!({"type": "stream.query", "queryId": "sync"}))
        .await;
    p.expect("stream.history").await;
}

fn event_texts(entries: &[tap_protocol::provider::StreamEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.event.as_str()).collect()
}

#[tokio::test]
async fn streams_history_returns_what_providers_pushed() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    let c = control(&gw).await;

    let empty = c.streams_history(&session.id, None, None).await.unwrap();
    assert_eq!(empty.session_id, session.id);
    assert!(empty.streams.is_empty(), "{empty:?}");

    for (stream, event) in [("log", "one"), ("log", "two"), ("build", "ok")] {
        p.send(
            json!({"type": "push", "level": "keep", "stream": stream, "event": event,
                      "metadata": {"n": event}}),
        )
        .await;
    }
    barrier(&mut p).await;

    let all = c.streams_history(&session.id, None, None).await.unwrap();
    let keys: Vec<&str> = all.streams.keys().map(String::as_str).collect();
    assert_eq!(keys, ["build@pusher", "log@pusher"]);
    let log = &all.streams["log@pusher"];
    assert_eq!(event_texts(log), ["two", "one"], "newest first");
    assert_eq!(log[0].metadata.as_ref().unwrap()["n"], "two");
    assert!(log[0].ts.ends_with('Z'), "{:?}", log[0]);

    let one = c
        .streams_history(&session.id, Some("log"), Some(1))
        .await
        .unwrap();
    assert_eq!(one.streams.len(), 1);
    assert_eq!(event_texts(&one.streams["log@pusher"]), ["two"]);
    let by_owner = c
        .streams_history(&session.id, Some("build@pusher"), None)
        .await
        .unwrap();
    assert_eq!(event_texts(&by_owner.streams["build@pusher"]), ["ok"]);
    let nobody = c
        .streams_history(&session.id, Some("log@someone-else"), None)
        .await
        .unwrap();
    assert!(nobody.streams.is_empty());

    let e = c.streams_history("no-such-session", None, None).await;
    assert_eq!(refused_code(e.unwrap_err()), ErrorCode::InvalidSession);
}

#[tokio::test]
async fn provider_disconnect_closes_the_socket_and_fails_its_calls() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("victim", &session.id, json!([tool("slow")])).await;
    let mut other = gw.bound("bystander", &session.id, json!([tool("t")])).await;
    let c = control(&gw).await;

    let (_, rx) = host.start_invoke(&session.id, "slow", json!({})).unwrap();
    p.expect("tool.call").await;

    let status = c.status().await.unwrap();
    let id = status
        .providers
        .iter()
        .find(|s| s.name.as_deref() == Some("victim"))
        .expect("victim listed")
        .id
        .clone();
    c.provider_disconnect(&id).await.unwrap();

    p.expect_closed().await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Disconnected), "{r:?}");

    // Gone from status (the socket task may take a moment to deregister).
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let s = c.status().await.unwrap();
        if s.providers.iter().all(|s| s.id != id) {
            assert!(s
                .providers
                .iter()
                .any(|s| s.name.as_deref() == Some("bystander")));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still listed: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let again = c.provider_disconnect(&id).await.unwrap_err();
    assert_eq!(refused_code(again), ErrorCode::NotFound);
    let unknown = c.provider_disconnect("no-such-provider").await.unwrap_err();
    assert_eq!(refused_code(unknown), ErrorCode::NotFound);

    // The other provider was not touched.
    barrier(&mut other).await;
}

#[tokio::test]
async fn panel_methods_work_over_a_token_obtained_by_login() {
    // The whole path the panel takes: link → code → token → control socket → methods.
    let (gw, _ui) = with_panel().await;
    let code = login_code(&gw).await;
    let r = login(&gw, Some(&panel_origin(&gw)), &code_body(&code)).await;
    let token = r.json()["controlToken"].as_str().unwrap().to_string();
    let url = format!("{}/control", gw.url());
    let (c, _) = ControlClient::connect(&url, &token).await.unwrap();
    let (_host, session) = gw.host_with_session().await;
    let h = c.streams_history(&session.id, None, None).await.unwrap();
    assert!(h.streams.is_empty());
}

//! Hostile and mistaken HTTP requests to `/mcp/<session>`: each gets a clear refusal and
//! nothing else is affected.

use super::client;
use tap_protocol::limits::MAX_MCP_REQUEST_BYTES;
use tap_testkit::{TestGateway, PATIENCE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// `(status, body)` of one POST to `/mcp/work` with `headers` (each "Name: value").
async fn post(gw: &TestGateway, headers: &[String], body: &[u8]) -> (u16, String) {
    let host = gw.handle.gateway().address().to_string();
    let (status, _, body) = request(gw, "POST", &host, headers, body).await;
    (status, body)
}

/// `(status, head, body)` of one `method` request to `/mcp/work` naming `host` as `Host`.
async fn request(
    gw: &TestGateway,
    method: &str,
    host: &str,
    headers: &[String],
    body: &[u8],
) -> (u16, String, String) {
    let addr = gw.handle.gateway().address();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} /mcp/work HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before the whole body is written and close.
    let _ = s.write_all(body).await;
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, s.read_to_end(&mut raw))
        .await
        .expect("an HTTP response in time");
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn bearer(gw: &TestGateway) -> String {
    format!("Authorization: Bearer {}", gw.handle.gateway().host_token())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_host_token_are_refused_with_401() {
    let gw = TestGateway::start().await;
    let (status, body) = post(&gw, &[], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        body.contains("Authorization: Bearer <host token>"),
        "{body}"
    );
    for wrong in [
        "Authorization: Bearer htk-wrong".to_string(),
        "Authorization: Basic abc".to_string(),
        // The provider token is not the host token.
        format!("Authorization: Bearer {}", gw.token()),
    ] {
        let (status, body) = post(&gw, std::slice::from_ref(&wrong), INITIALIZE.as_bytes()).await;
        assert_eq!(status, 401, "{wrong}: {body}");
    }
    assert!(
        gw.handle.gateway().status().sessions.is_empty(),
        "nothing registered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_cannot_call_even_with_the_token() {
    let gw = TestGateway::start().await;
    let (status, body) = post(
        &gw,
        &[bearer(&gw), "Origin: http://evil.example".into()],
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("not the panel's"), "{body}");
    assert!(gw.handle.gateway().status().sessions.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_a_loopback_origin_calls_with_the_token_and_reads_the_answer() {
    let gw = TestGateway::start().await;
    let host = gw.handle.gateway().address().to_string();
    let page = "Origin: http://localhost:5173".to_string();
    // The browser's preflight carries no token: answered for a loopback origin only.
    let preflight = [
        page.clone(),
        "Access-Control-Request-Method: POST".into(),
        "Access-Control-Request-Headers: authorization, content-type".into(),
    ];
    let (status, head, _) = request(&gw, "OPTIONS", &host, &preflight, b"").await;
    assert_eq!(status, 204, "{head}");
    assert!(
        head.contains("access-control-allow-origin: http://localhost:5173"),
        "{head}"
    );
    assert!(head.contains("authorization"), "{head}");
    let (status, head, body) = request(
        &gw,
        "POST",
        &host,
        &[bearer(&gw), page.clone()],
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("serverInfo"), "{body}");
    assert!(
        head.contains("access-control-allow-origin: http://localhost:5173"),
        "{head}"
    );
    assert!(head.contains("access-control-expose-headers"), "{head}");
    // Without the token it is refused all the same (and may read why).
    let (status, head, _) = request(
        &gw,
        "POST",
        &host,
        std::slice::from_ref(&page),
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("access-control-allow-origin"), "{head}");
    // DNS rebinding: a loopback Origin but the site's own name as Host.
    let (status, _, body) = request(
        &gw,
        "POST",
        "evil.example:9400",
        &[bearer(&gw), page],
        INITIALIZE.as_bytes(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    // Another site gets neither the preflight nor an answer it could read.
    let evil = [
        "Origin: http://evil.example".to_string(),
        "Access-Control-Request-Method: POST".into(),
    ];
    let (status, head, _) = request(&gw, "OPTIONS", &host, &evil, b"").await;
    assert_eq!(status, 403, "{head}");
    assert!(!head.contains("access-control-allow-origin"), "{head}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_oversized_requests_get_errors_and_the_gateway_serves_on() {
    let gw = TestGateway::start().await;
    let (status, body) = post(&gw, &[bearer(&gw)], b"{not json").await;
    assert!((400..500).contains(&status), "{status}: {body}");
    assert!(body.contains("deserialize"), "says why: {body}");

    let (status, body) = post(&gw, &[bearer(&gw)], br#"{"jsonrpc":"2.0","id":1}"#).await;
    assert!((400..500).contains(&status), "{status}: {body}");

    let huge = vec![b' '; MAX_MCP_REQUEST_BYTES + 1];
    let (status, body) = post(&gw, &[bearer(&gw)], &huge).await;
    assert_eq!(status, 413, "{body}");

    // A real client still works.
    let mut c = client(&gw, "work", "legacy").await;
    assert!(c.tool_names().await.contains(&"tap_status".to_string()));
}

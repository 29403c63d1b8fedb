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
    let addr = gw.handle.gateway().address();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
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
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
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

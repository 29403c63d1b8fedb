//! What a server asks the client during a call (`sampling/createMessage`) reaches the
//! client on the event stream of its own `tools/call` request, so a Streamable HTTP client
//! that never opened the session's standalone `GET` stream still gets it. Raw HTTP here:
//! the PyPI client always opens that stream, which would hide the difference.

use super::{everything, gateway_with, server_in};
use serde_json::{json, Value};
use tap_testkit::PATIENCE;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// POSTs `body` to `/mcp/work` (in MCP session `session`, if any); the connection, to read
/// the answer from.
async fn post(gw: &tap_testkit::TestGateway, session: Option<&str>, body: &Value) -> TcpStream {
    let addr = gw.handle.gateway().address();
    let token = gw.handle.gateway().host_token();
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    head.push_str("\r\n");
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    s
}

/// Reads `s` into `seen` until `done` says so; the text so far.
async fn read_until(s: &mut TcpStream, seen: &mut String, done: impl Fn(&str) -> bool) {
    let mut buf = [0u8; 8192];
    while !done(seen) {
        let n = tokio::time::timeout(PATIENCE, s.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("nothing more in time; so far: {seen}"))
            .unwrap();
        assert!(n > 0, "the stream ended; so far: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

/// The first SSE event (or JSON body) in `text` that holds `needle`, as JSON.
fn message_with(text: &str, needle: &str) -> Value {
    let line = text
        .lines()
        .find(|l| l.contains(needle) && l.contains('{'))
        .unwrap_or_else(|| panic!("no {needle} in {text}"));
    let json = &line[line.find('{').unwrap()..];
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[tokio::test]
async fn a_servers_sampling_request_rides_the_stream_of_the_call_that_caused_it() {
    let gw = gateway_with(json!({"everything": everything()}), |_| {}).await;
    server_in(&gw, "everything", "ready").await;

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let mut s = post(&gw, None, &init).await;
    let mut text = String::new();
    read_until(&mut s, &mut text, |t| t.contains("serverInfo")).await;
    let session = text
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {text}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut s = post(&gw, Some(&session), &initialized).await;
    read_until(&mut s, &mut text, |t| t.contains("HTTP/1.1 202")).await;

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "everything__trigger-sampling-request",
        "arguments": {"prompt": "the capital of France", "maxTokens": 20}}});
    let mut stream = post(&gw, Some(&session), &call).await;
    let mut seen = String::new();
    read_until(&mut stream, &mut seen, |t| {
        t.contains("sampling/createMessage")
    })
    .await;
    let ask = message_with(&seen, "sampling/createMessage");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "model": "raw-model",
        "content": {"type": "text", "text": "Paris, said the raw client"}}});
    let mut s = post(&gw, Some(&session), &answer).await;
    let mut ack = String::new();
    read_until(&mut s, &mut ack, |t| t.contains("HTTP/1.1 202")).await;

    read_until(&mut stream, &mut seen, |t| {
        t.contains("said the raw client")
    })
    .await;
    let result = message_with(&seen, "said the raw client");
    assert_eq!(result["id"], 2, "{result}");
    assert!(result["result"]["content"].is_array(), "{result}");
}

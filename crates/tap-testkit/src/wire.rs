//! The provider wire as fallible functions on a bare socket: connect, send and receive JSON
//! text frames with a deadline, the `auth` + `hello` handshake. Errors are strings for the
//! caller to report, not panics, so the benchmark can use the same code as the tests; they
//! add nothing per frame over tokio-tungstenite itself (no parsing unless asked).

use crate::PATIENCE;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A client-side socket.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens a client socket to `url` (or a prepared request, e.g. with an `Origin`), with
/// Nagle off when `nodelay`.
pub async fn connect(url: impl IntoClientRequest + Unpin, nodelay: bool) -> Result<Ws, String> {
    let req = url
        .into_client_request()
        .map_err(|e| format!("bad request: {e}"))?;
    let target = req.uri().to_string();
    let connecting = tokio_tungstenite::connect_async_with_config(req, None, nodelay);
    let (ws, _) = tokio::time::timeout(PATIENCE, connecting)
        .await
        .map_err(|_| format!("connecting to {target} timed out"))?
        .map_err(|e| format!("cannot connect to {target}: {e}"))?;
    Ok(ws)
}

/// Opens a client socket to `url` whose kernel receive buffer is about `recv_buffer`
/// bytes, set before connecting so the TCP window stays that small: a peer that then
/// stops reading stalls the gateway's writes after a few KiB instead of megabytes (slow
/// consumer tests). Nagle off.
pub async fn connect_small_window(url: &str, recv_buffer: u32) -> Result<Ws, String> {
    let req = url
        .into_client_request()
        .map_err(|e| format!("bad request: {e}"))?;
    let uri = req.uri();
    let addr = format!(
        "{}:{}",
        uri.host().ok_or("no host")?,
        uri.port_u16().ok_or("no port")?
    );
    let addr: std::net::SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket
        .set_recv_buffer_size(recv_buffer)
        .map_err(|e| format!("SO_RCVBUF: {e}"))?;
    let stream = tokio::time::timeout(PATIENCE, socket.connect(addr))
        .await
        .map_err(|_| format!("connecting to {addr} timed out"))?
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (ws, _) = tokio_tungstenite::client_async(req, MaybeTlsStream::Plain(stream))
        .await
        .map_err(|e| format!("handshake with {addr} failed: {e}"))?;
    Ok(ws)
}

/// Sends one text frame.
pub async fn send_text(ws: &mut Ws, text: impl Into<Utf8Bytes>) -> Result<(), String> {
    ws.send(Message::Text(text.into()))
        .await
        .map_err(|e| format!("send failed: {e}"))
}

/// Sends `v` as one text frame.
pub async fn send_json(ws: &mut Ws, v: &Value) -> Result<(), String> {
    send_text(ws, v.to_string()).await
}

/// Next text frame, within [`PATIENCE`].
pub async fn recv_text(ws: &mut Ws) -> Result<Utf8Bytes, String> {
    recv_text_within(ws, PATIENCE).await
}

/// Next text frame, within `patience`; other data frames are skipped.
pub async fn recv_text_within(ws: &mut Ws, patience: Duration) -> Result<Utf8Bytes, String> {
    loop {
        match tokio::time::timeout(patience, ws.next()).await {
            Err(_) => return Err("timed out waiting for a message".into()),
            Ok(None) => return Err("connection closed".into()),
            Ok(Some(Err(e))) => return Err(format!("socket error: {e}")),
            Ok(Some(Ok(Message::Text(t)))) => return Ok(t),
            Ok(Some(Ok(Message::Close(f)))) => return Err(format!("connection closed: {f:?}")),
            Ok(Some(Ok(_))) => continue,
        }
    }
}

/// Next message whose `type` is `kind`, skipping notifications of other types (such as
/// `sessions.updated`); an `error` fails.
pub async fn expect(ws: &mut Ws, kind: &str) -> Result<Value, String> {
    expect_within(ws, kind, PATIENCE).await
}

/// [`expect`] with each frame awaited for at most `patience`.
pub async fn expect_within(ws: &mut Ws, kind: &str, patience: Duration) -> Result<Value, String> {
    loop {
        let text = recv_text_within(ws, patience).await?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("bad JSON: {e}"))?;
        if v["type"] == kind {
            return Ok(v);
        }
        if v["type"] == "error" {
            return Err(format!("expected '{kind}', got {v}"));
        }
    }
}

/// Reads until the peer closes; bounded by [`PATIENCE`].
pub async fn drain_until_closed(ws: &mut Ws) -> Result<(), String> {
    loop {
        match tokio::time::timeout(PATIENCE, ws.next()).await {
            Err(_) => return Err("timed out waiting for the close".into()),
            Ok(None) | Ok(Some(Err(_))) => return Ok(()),
            Ok(Some(Ok(_))) => continue,
        }
    }
}

/// Sends `auth` with `token` and waits for `sessions` (returned).
pub async fn auth(ws: &mut Ws, token: &str) -> Result<Value, String> {
    send_json(ws, &json!({"type": "auth", "token": token})).await?;
    expect(ws, "sessions").await
}

/// Sends `hello` for `session` with tool definitions `tools`, then waits for `hello.ack`
/// (returned) and `session.lifecycle started`.
pub async fn hello(ws: &mut Ws, name: &str, session: &str, tools: Value) -> Result<Value, String> {
    send_json(
        ws,
        &json!({"type": "hello", "name": name, "protocolVersion": 2,
                "session": session, "tools": tools}),
    )
    .await?;
    let ack = expect(ws, "hello.ack").await?;
    let started = expect(ws, "session.lifecycle").await?;
    if started["state"] != "started" {
        return Err(format!("expected lifecycle 'started', got {started}"));
    }
    Ok(ack)
}

/// Connects, authenticates with `token` and binds to `session` with `tools`.
pub async fn bind(
    url: &str,
    nodelay: bool,
    token: &str,
    name: &str,
    session: &str,
    tools: Value,
) -> Result<Ws, String> {
    let mut ws = connect(url, nodelay).await?;
    let ctx = |e: String| format!("provider '{name}': {e}");
    auth(&mut ws, token).await.map_err(ctx)?;
    hello(&mut ws, name, session, tools).await.map_err(ctx)?;
    Ok(ws)
}

//! Raw WebSocket plumbing shared by the bare echo and the bench provider: connect, send and
//! receive JSON with a deadline, and the "batch what is ready, then flush once" loop.

use futures_util::{FutureExt, SinkExt, StreamExt};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A client-side socket.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long any single expected answer may take before the run is declared broken.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// `--nodelay`: TCP_NODELAY on every socket the bench owns (its clients, its providers and
/// the bare server's side). The gateway's sockets and `HostClient`'s are not the bench's.
static NODELAY: AtomicBool = AtomicBool::new(false);

pub fn set_nodelay(on: bool) {
    NODELAY.store(on, Ordering::Relaxed);
}

pub fn nodelay() -> bool {
    NODELAY.load(Ordering::Relaxed)
}

/// Opens a client socket. By default Nagle stays on, as `connect_async` and `HostClient`
/// leave it, so the bare echo and the gateway's clients run with the same socket options.
pub async fn connect(url: &str) -> Result<Ws, String> {
    let connecting = tokio_tungstenite::connect_async_with_config(url, None, nodelay());
    let (ws, _) = tokio::time::timeout(PATIENCE, connecting)
        .await
        .map_err(|_| format!("connecting to {url} timed out"))?
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    Ok(ws)
}

pub async fn send_text(ws: &mut Ws, text: impl Into<Utf8Bytes>) -> Result<(), String> {
    ws.send(Message::Text(text.into()))
        .await
        .map_err(|e| format!("send failed: {e}"))
}

pub async fn send_json(ws: &mut Ws, v: &Value) -> Result<(), String> {
    send_text(ws, v.to_string()).await
}

/// Next text frame, within [`PATIENCE`].
pub async fn recv_text(ws: &mut Ws) -> Result<Utf8Bytes, String> {
    loop {
        match tokio::time::timeout(PATIENCE, ws.next()).await {
            Err(_) => return Err("timed out waiting for a frame".into()),
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
    loop {
        let text = recv_text(ws).await?;
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

/// Serves a socket frame by frame: `on_frame` gets each incoming message and may queue an
/// answer. Answers to every frame already readable are written with one flush, which is
/// what a decent server does under load and costs nothing when frames come one at a time.
/// Returns when the peer closes or breaks the socket.
pub async fn serve_batched<S>(
    ws: &mut WebSocketStream<S>,
    mut on_frame: impl FnMut(Message) -> Option<Message>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        let first = match ws.next().await {
            Some(Ok(m)) => m,
            _ => return,
        };
        let mut closing = first.is_close();
        if let Some(answer) = on_frame(first) {
            if ws.feed(answer).await.is_err() {
                return;
            }
        }
        // Polling once without waiting: `None` means nothing more is buffered yet.
        while !closing {
            let Some(next) = ws.next().now_or_never() else {
                break;
            };
            let Some(Ok(m)) = next else { return };
            closing = m.is_close();
            if let Some(answer) = on_frame(m) {
                if ws.feed(answer).await.is_err() {
                    return;
                }
            }
        }
        if ws.flush().await.is_err() || closing {
            return;
        }
    }
}

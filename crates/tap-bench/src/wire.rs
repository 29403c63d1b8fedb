//! Raw WebSocket plumbing shared by the bare echo and the bench provider. Connecting,
//! sending, receiving with a deadline and the provider handshake are the test kit's
//! (`tap_testkit::wire`: the same code the tests' provider client runs on, no parsing per
//! frame unless asked); what is the bench's own is `--nodelay` and the "batch what is
//! ready, then flush once" loop both sides of the comparison serve with.

use futures_util::{FutureExt, SinkExt, StreamExt};
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub use tap_testkit::wire::{drain_until_closed, recv_text, send_json, send_text, Ws};
pub use tap_testkit::PATIENCE;

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
    tap_testkit::wire::connect(url, nodelay()).await
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

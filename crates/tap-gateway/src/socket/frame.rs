//! Protocol messages into WebSocket frames, for every socket's outbound queue.

use serde::Serialize;
use tokio_tungstenite::tungstenite::Message;

/// Serializes a message into a text frame. Our own types always serialize.
pub(crate) fn frame<T: Serialize>(msg: &T) -> Message {
    Message::text(serde_json::to_string(msg).expect("protocol types serialize"))
}

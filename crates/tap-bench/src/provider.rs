//! The bench provider: a raw tokio-tungstenite client speaking Provider Interface v2 —
//! `auth` with the gateway token, `hello` into one session, then `tool.result` for every
//! `tool.call`.
//!
//! The handshake is the test kit's (`tap_testkit::wire`). The answering loop is the bench's
//! own and deliberately as cheap as the bare echo server: it finds the call id with a string
//! scan instead of parsing the JSON, and batches its answers like the echo does, so what
//! the comparison measures is the gateway, not the provider.

use crate::wire::{self, Ws};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// A tool definition with an empty parameter schema.
pub fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("bench tool {name}"),
           "parameters": {"type": "object", "properties": {}}})
}

/// Connects, authenticates and binds to `session` with `tools` (the test kit's handshake,
/// with the bench's `--nodelay` and tool descriptions).
pub async fn bind(
    url: &str,
    token: &str,
    name: &str,
    session: &str,
    tools: &[String],
) -> Result<Ws, String> {
    let defs: Vec<Value> = tools.iter().map(|t| tool(t)).collect();
    tap_testkit::wire::bind(url, wire::nodelay(), token, name, session, json!(defs)).await
}

/// Answers `tool.call`s until the gateway closes the socket.
pub async fn respond(mut ws: Ws) {
    wire::serve_batched(&mut ws, answer).await;
}

/// `tool.result {data: {ok: true}}` for a `tool.call`, nothing for anything else.
fn answer(m: Message) -> Option<Message> {
    let Message::Text(text) = m else { return None };
    let id = tool_call_id(&text)?;
    Some(Message::text(format!(
        r#"{{"type":"tool.result","id":"{id}","data":{{"ok":true}}}}"#
    )))
}

/// The `id` of a `tool.call` frame as the gateway writes it (`type` first; ids are plain
/// ASCII without escapes).
fn tool_call_id(text: &str) -> Option<&str> {
    if !text.starts_with(r#"{"type":"tool.call""#) {
        return None;
    }
    let start = text.find(r#""id":""#)? + 6;
    let len = text[start..].find('"')?;
    Some(&text[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_call_id() {
        let call = r#"{"type":"tool.call","id":"c-00ff-1a","sessionId":"s-1","tool":"echo","args":{"id":"x"}}"#;
        assert_eq!(tool_call_id(call), Some("c-00ff-1a"));
        assert_eq!(tool_call_id(r#"{"type":"tool.cancel","id":"c-1"}"#), None);
        let Some(Message::Text(t)) = answer(Message::text(call)) else {
            panic!("no answer")
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v,
            json!({"type": "tool.result", "id": "c-00ff-1a", "data": {"ok": true}})
        );
    }
}

//! The raw provider client: one WebSocket sending and receiving JSON text frames exactly as
//! a provider written in any language would, with assertions for tests. Every helper that
//! waits gives up after the client's patience ([`PATIENCE`] unless set otherwise).

use crate::wire::{self, Ws};
use crate::PATIENCE;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::MaybeTlsStream;

/// A raw provider socket (also used for `/session` and `/control` as raw frames).
pub struct Provider {
    /// The socket, for tests that write frames the helpers would not.
    pub ws: Ws,
    patience: Duration,
}

impl Provider {
    /// Connects to `url`, Nagle off: back-to-back frames must not wait on it, since under
    /// the paused clock a real-time delay lets the clock jump past a deadline.
    pub async fn connect(url: &str) -> Self {
        Self::connect_request(url).await
    }

    /// Connects with a prepared request (e.g. with an `Origin` header), Nagle off.
    pub async fn connect_request(req: impl IntoClientRequest + Unpin) -> Self {
        let ws = wire::connect(req, true)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Self::from_ws(ws)
    }

    /// Connects with a receive buffer of about `recv_buffer` bytes
    /// ([`wire::connect_small_window`]): for peers that stop reading.
    pub async fn connect_small_window(url: &str, recv_buffer: u32) -> Self {
        let ws = wire::connect_small_window(url, recv_buffer)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Self::from_ws(ws)
    }

    /// Wraps a socket opened elsewhere.
    pub fn from_ws(ws: Ws) -> Self {
        Self {
            ws,
            patience: PATIENCE,
        }
    }

    /// Waits up to `patience` for each frame instead of [`PATIENCE`].
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Connects to `url` and authenticates with `token`; returns the `sessions` message too.
    pub async fn authed_at(url: &str, token: &str) -> (Self, Value) {
        let mut p = Self::connect(url).await;
        p.send(json!({"type": "auth", "token": token})).await;
        let sessions = p.expect("sessions").await;
        (p, sessions)
    }

    /// This socket's local address, as the gateway sees the peer (`127.0.0.1:PORT`).
    pub fn local_addr(&self) -> String {
        match self.ws.get_ref() {
            MaybeTlsStream::Plain(s) => s.local_addr().unwrap().to_string(),
            _ => unreachable!("tests use plain TCP"),
        }
    }

    /// Sends `v` as one text frame.
    pub async fn send(&mut self, v: Value) {
        self.ws.send(Message::text(v.to_string())).await.unwrap();
    }

    /// Sends `text` as is (malformed frames, exact bytes).
    pub async fn send_raw(&mut self, text: impl Into<String>) {
        self.ws.send(Message::text(text.into())).await.unwrap();
    }

    /// Next JSON message; panics on close or after the patience.
    pub async fn recv(&mut self) -> Value {
        let text = wire::recv_text_within(&mut self.ws, self.patience)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// Next message, which must have `type` == `kind`.
    pub async fn expect(&mut self, kind: &str) -> Value {
        let v = self.recv().await;
        assert_eq!(v["type"], kind, "expected '{kind}', got {v}");
        v
    }

    /// Next message of type `kind`; messages of other types (`sessions.updated`, ...) are
    /// skipped, but an `error` fails the test.
    pub async fn expect_next(&mut self, kind: &str) -> Value {
        loop {
            let v = self.recv().await;
            if v["type"] == kind {
                return v;
            }
            assert_ne!(v["type"], "error", "expected {kind}, got an error: {v}");
        }
    }

    /// Next message must be an `error` with `code`.
    pub async fn expect_error(&mut self, code: &str) -> Value {
        let v = self.expect("error").await;
        assert_eq!(v["code"], code, "unexpected error: {v}");
        v
    }

    /// Returns once every frame sent before was handled, proving nothing else is queued for
    /// this provider: an unknown type's `UNKNOWN_TYPE` comes back in order.
    pub async fn fence(&mut self) {
        self.send(json!({"type": "test.fence"})).await;
        let e = self.expect_error("UNKNOWN_TYPE").await;
        assert_eq!(e["replyTo"], "test.fence", "{e}");
    }

    /// Waits until the gateway closes the socket; other messages are returned.
    pub async fn expect_closed(&mut self) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            match tokio::time::timeout(self.patience, self.ws.next())
                .await
                .expect("timed out waiting for close")
            {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return seen,
                Some(Ok(Message::Text(t))) => seen.push(serde_json::from_str(&t).unwrap()),
                Some(Ok(_)) => {}
            }
        }
    }
}

/// A tool definition for tests.
pub fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("test tool {name}"),
           "parameters": {"type": "object", "properties": {}}})
}

/// A tool definition with a `timeout` in ms.
pub fn timed_tool(name: &str, ms: u64) -> Value {
    let mut t = tool(name);
    t["timeout"] = json!(ms);
    t
}

/// A `hello` for `session` with `extra` fields merged in (they win).
pub fn hello(name: &str, session: &str, extra: Value) -> Value {
    let mut h = json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session});
    for (k, v) in extra.as_object().expect("extra is an object") {
        h[k] = v.clone();
    }
    h
}

/// Consumes `hello.ack` and `session.lifecycle started` for `session`; returns the ack.
pub async fn expect_bound(p: &mut Provider, session: &str) -> Value {
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started", "{started}");
    assert_eq!(started["sessionId"], session, "{started}");
    ack
}

/// Sends `hello` on an authenticated provider and expects the `error` `code` for it.
pub async fn hello_refused(p: &mut Provider, msg: Value, code: &str) -> Value {
    p.send(msg).await;
    let e = p.expect_error(code).await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    e
}

/// Proves that nothing is queued for `p` before this point: an unknown type is answered
/// `UNKNOWN_TYPE` in every state, so that answer must be the next frame.
pub async fn fence(p: &mut Provider) {
    p.send(json!({"type": "conformance.fence"})).await;
    let e = p.recv().await;
    assert_eq!(
        e["type"], "error",
        "expected only the fence's answer, got {e}"
    );
    assert_eq!(e["code"], "UNKNOWN_TYPE", "{e}");
    assert_eq!(e["replyTo"], "conformance.fence", "{e}");
}

/// Every frame that arrives before the answer to a fence (see [`fence`]).
pub async fn until_fence(p: &mut Provider) -> Vec<Value> {
    p.send(json!({"type": "conformance.fence"})).await;
    let mut seen = Vec::new();
    loop {
        let m = p.recv().await;
        if m["type"] == "error" && m["replyTo"] == "conformance.fence" {
            assert_eq!(m["code"], "UNKNOWN_TYPE", "{m}");
            return seen;
        }
        seen.push(m);
    }
}

/// Next frame of type `kind`, skipping frames whose type is in `skip`.
pub async fn expect_skipping(p: &mut Provider, kind: &str, skip: &[&str]) -> Value {
    loop {
        let v = p.recv().await;
        if v["type"] == kind {
            return v;
        }
        assert!(
            skip.iter().any(|s| v["type"] == *s),
            "expected '{kind}', got {v}"
        );
    }
}

/// Expects the connection to stay silent for `d` (paused clock: virtual time).
pub async fn silent_for(p: &mut Provider, d: Duration) {
    tokio::select! {
        v = p.recv() => panic!("expected nothing, got {v}"),
        _ = tokio::time::sleep(d) => {}
    }
}

/// Answers `call` with `data`.
pub async fn answer(p: &mut Provider, call: &Value, data: Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
}

/// `active[].id` of a `sessions` / `sessions.updated` message.
pub fn session_ids(msg: &Value) -> Vec<String> {
    msg["active"]
        .as_array()
        .expect("'active' list")
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

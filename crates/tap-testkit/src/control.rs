//! A raw control-plane client for the tests of the panel's methods (diagnostics, logs,
//! settings, stream tail): JSON frames in and out, events set aside while a response is
//! awaited. (The typed client is `tap_client::ControlClient`; tests of the wire use this.)

use crate::gateway::TestGateway;
use crate::provider::Provider;
use crate::PATIENCE;
use serde_json::{json, Value};
use std::collections::VecDeque;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, http::HeaderValue};

/// The raw control client.
pub struct Control {
    /// The `/control` socket.
    pub sock: Provider,
    /// Events received while waiting for responses, oldest first.
    pub events: VecDeque<Value>,
    next_id: u64,
}
impl Control {
    /// Opens `/control` with an optional `Origin` header, not authenticated; the error is
    /// the gateway's refusal of the upgrade (e.g. HTTP 403 for a foreign origin).
    pub async fn open(gw: &TestGateway, origin: Option<&str>) -> Result<Self, tungstenite::Error> {
        let mut req = format!("{}/control", gw.url())
            .into_client_request()
            .unwrap();
        if let Some(o) = origin {
            req.headers_mut()
                .insert("Origin", HeaderValue::from_str(o).unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true).await?;
        Ok(Self {
            sock: Provider::from_ws(ws),
            events: VecDeque::new(),
            next_id: 1,
        })
    }

    /// A client on a socket opened elsewhere (e.g. [`Provider::connect_small_window`]).
    pub fn from_sock(sock: Provider) -> Self {
        Self {
            sock,
            events: VecDeque::new(),
            next_id: 1,
        }
    }

    /// Connected to `/control` and authenticated; returns the client and the snapshot.
    pub async fn authed(gw: &TestGateway) -> (Self, Value) {
        let mut c = Self::open(gw, None).await.unwrap();
        let token = gw.handle.gateway().control_token().to_string();
        let snapshot = c.ok("auth", json!({"token": token})).await;
        (c, snapshot)
    }

    /// Sends a raw frame.
    pub async fn send(&mut self, v: Value) {
        self.sock.send(v).await;
    }

    /// The next frame, whatever it is.
    pub async fn recv(&mut self) -> Value {
        self.sock.recv().await
    }

    /// Sends a request and returns its response frame; events met on the way are kept
    /// for [`Control::event`].
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = format!("t{}", self.next_id);
        self.next_id += 1;
        self.send(json!({"type": "request", "id": id, "method": method, "params": params}))
            .await;
        self.response(&id).await
    }

    /// The response to request `id`; events met on the way are kept, anything else fails.
    pub async fn response(&mut self, id: &str) -> Value {
        loop {
            let f = self.recv().await;
            match f["type"].as_str() {
                Some("event") => self.events.push_back(f),
                Some("response") => {
                    assert_eq!(f["id"], id, "response to another request: {f}");
                    return f;
                }
                _ => panic!("unexpected frame while waiting for {id}: {f}"),
            }
        }
    }

    /// A request that must succeed; its result.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// A request that must fail with `code`; its error.
    pub async fn err(&mut self, method: &str, params: Value, code: &str) -> Value {
        let r = self.call(method, params).await;
        assert_eq!(r["error"]["code"], code, "{method}: {r}");
        assert!(r.get("result").is_none(), "{r}");
        r["error"].clone()
    }

    /// The next event frame.
    pub async fn event(&mut self) -> Value {
        if let Some(e) = self.events.pop_front() {
            return e;
        }
        let f = self.sock.recv().await;
        assert_eq!(f["type"], "event", "expected an event, got {f}");
        f
    }

    /// The next event of `kind` (its `event` object), skipping others.
    pub async fn event_of(&mut self, kind: &str) -> Value {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let e = tokio::time::timeout_at(deadline, self.event())
                .await
                .unwrap_or_else(|_| panic!("no '{kind}' event"));
            if e["event"]["kind"] == kind {
                return e["event"].clone();
            }
        }
    }

    /// Waits until the gateway closes the socket; frames that came first are returned.
    pub async fn closed(&mut self) -> Vec<Value> {
        self.sock.expect_closed().await
    }
}

/// Polls `check` with a fresh `diagnostics` result until it returns true.
pub async fn diagnostics_until(
    c: &mut Control,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let d = c.ok("diagnostics", json!({})).await;
        if check(&d) {
            return d;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "diagnostics never showed {what}: {d}"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// `errors[code].count` in a diagnostics result (0 when absent).
pub fn errors_of(d: &Value, code: &str) -> u64 {
    d["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == code)
        .map_or(0, |e| e["count"].as_u64().unwrap())
}

/// The entry of limit `id` in a diagnostics result.
pub fn limit_of<'a>(d: &'a Value, id: &str) -> &'a Value {
    d["limits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no limit '{id}' in {d}"))
}

/// Hits of limit `id`.
pub fn hits_of(d: &Value, id: &str) -> u64 {
    limit_of(d, id)["hits"].as_u64().unwrap()
}

//! A raw control-plane client for the tests of the panel's methods (diagnostics, logs,
//! settings, stream tail): JSON frames in and out, events set aside while a response is
//! awaited. Declare `mod support;` before `mod control_support;`.
#![allow(dead_code)]

use crate::support::{Provider, TestGateway, PATIENCE};
use serde_json::{json, Value};
use std::collections::VecDeque;

pub struct Control {
    pub sock: Provider,
    /// Events received while waiting for responses, oldest first.
    pub events: VecDeque<Value>,
    next_id: u64,
}

impl Control {
    /// Connected to `/control` and authenticated; returns the client and the snapshot.
    pub async fn authed(gw: &TestGateway) -> (Self, Value) {
        let sock = Provider::connect(&format!("{}/control", gw.url())).await;
        let mut c = Self {
            sock,
            events: VecDeque::new(),
            next_id: 1,
        };
        let token = gw.handle.gateway().control_token().to_string();
        let snapshot = c.ok("auth", json!({"token": token})).await;
        (c, snapshot)
    }

    /// Sends a request and returns its response frame.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = format!("t{}", self.next_id);
        self.next_id += 1;
        self.sock
            .send(json!({"type": "request", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let f = self.sock.recv().await;
            match f["type"].as_str() {
                Some("event") => self.events.push_back(f),
                Some("response") if f["id"] == id.as_str() => return f,
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

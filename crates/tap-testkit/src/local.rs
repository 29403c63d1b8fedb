//! The in-process provider transport (the spec's LocalProviderTransport): the same message
//! shapes without a socket or `auth` (spec decision A1). Frames are JSON, as on a socket.

use crate::gateway::TestGateway;
use crate::provider::hello;
use crate::PATIENCE;
use serde_json::{json, Value};

/// An internal (in-process) provider.
pub struct Internal(pub tap_gateway::LocalProvider);

impl Internal {
    /// Connects; returns the provider and its first message, `sessions`.
    pub async fn connect(gw: &TestGateway) -> (Self, Value) {
        let mut p = Self(gw.handle.gateway().connect_local());
        let sessions = p.expect("sessions").await;
        (p, sessions)
    }

    /// Sends one message.
    pub fn send(&self, v: Value) {
        self.0.send_json(&v).expect("local connection open");
    }

    /// Next message; panics on close or after [`PATIENCE`].
    pub async fn recv(&mut self) -> Value {
        tokio::time::timeout(PATIENCE, self.0.recv_json())
            .await
            .expect("timed out waiting for a message")
            .expect("local connection closed")
    }

    /// Next message, which must have `type` == `kind`.
    pub async fn expect(&mut self, kind: &str) -> Value {
        let v = self.recv().await;
        assert_eq!(v["type"], kind, "expected '{kind}', got {v}");
        v
    }

    /// Next message must be an `error` with `code`.
    pub async fn expect_error(&mut self, code: &str) -> Value {
        let v = self.expect("error").await;
        assert_eq!(v["code"], code, "unexpected error: {v}");
        v
    }

    /// Every message before the answer to an unknown-type fence (see [`crate::fence`]).
    pub async fn until_fence(&mut self) -> Vec<Value> {
        self.send(json!({"type": "conformance.fence"}));
        let mut seen = Vec::new();
        loop {
            let m = self.recv().await;
            if m["type"] == "error" && m["replyTo"] == "conformance.fence" {
                return seen;
            }
            seen.push(m);
        }
    }

    /// Proves nothing is queued before this point.
    pub async fn fence(&mut self) {
        let seen = self.until_fence().await;
        assert!(
            seen.is_empty(),
            "expected nothing before the fence, got {seen:?}"
        );
    }

    /// `hello` for `session` (an id or "all"); consumes `hello.ack` and returns it with the
    /// sessions of the `session.lifecycle started` messages that follow (spec decision A2).
    pub async fn hello(&mut self, name: &str, session: &str, extra: Value) -> (Value, Vec<String>) {
        self.send(hello(name, session, extra));
        let ack = self.expect("hello.ack").await;
        let mut started = Vec::new();
        for m in self.until_fence().await {
            assert_eq!(
                (m["type"].as_str(), m["state"].as_str()),
                (Some("session.lifecycle"), Some("started")),
                "{m}"
            );
            started.push(m["sessionId"].as_str().unwrap().to_string());
        }
        (ack, started)
    }
}

/// An internal provider bound to `session` (an id or "all") with `extra` hello fields.
pub async fn internal(gw: &TestGateway, name: &str, session: &str, extra: Value) -> Internal {
    let (mut p, _) = Internal::connect(gw).await;
    p.hello(name, session, extra).await;
    p
}

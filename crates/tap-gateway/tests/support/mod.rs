//! Test support: a real gateway on 127.0.0.1:0 in this process, raw provider sockets
//! speaking the wire protocol, and session hosts through `tap-client`.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::{GatewayConfig, GatewayHandle};
use tap_protocol::host::{HostEvent, HostToolResult, SessionRegister};
use tap_protocol::provider::SessionInfo;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for something that should happen promptly. Generous, so a
/// loaded CI machine does not fail tests; a hang still fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

pub struct TestGateway {
    pub handle: GatewayHandle,
    pub dir: tempfile::TempDir,
}

impl TestGateway {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(tweak: impl FnOnce(&mut GatewayConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = GatewayConfig::new(dir.path().join("home"));
        config.copilot_home = Some(dir.path().join("copilot"));
        tweak(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let handle = GatewayHandle::start(listener, config).await.unwrap();
        Self { handle, dir }
    }

    pub fn url(&self) -> String {
        format!("ws://{}", self.handle.gateway().address())
    }

    pub fn token(&self) -> String {
        self.handle.gateway().provider_token().to_string()
    }

    pub async fn host(&self) -> HostClient {
        HostClient::connect(
            &format!("{}/session", self.url()),
            self.handle.gateway().host_token(),
            "test-host",
            None,
        )
        .await
        .unwrap()
    }

    /// A host with one registered session.
    pub async fn host_with_session(&self) -> (HostClient, SessionInfo) {
        let host = self.host().await;
        let info = host
            .register_session(SessionRegister {
                label: Some("test".into()),
                cwd: Some("/tmp".into()),
                foreground: true,
                ..Default::default()
            })
            .await
            .unwrap();
        (host, info)
    }

    /// A raw provider socket, not yet authenticated.
    pub async fn provider(&self) -> Provider {
        Provider::connect(&self.url()).await
    }

    /// A provider past `auth`, with the `sessions` message consumed.
    pub async fn authed(&self) -> (Provider, Value) {
        let mut p = self.provider().await;
        p.send(json!({"type": "auth", "token": self.token()})).await;
        let sessions = p.expect("sessions").await;
        (p, sessions)
    }

    /// A provider bound to `session` with `tools`; `hello.ack` and `started` consumed.
    pub async fn bound(&self, name: &str, session: &str, tools: Value) -> Provider {
        let (mut p, _) = self.authed().await;
        p.send(json!({"type": "hello", "name": name, "protocolVersion": 2,
                      "session": session, "tools": tools}))
            .await;
        p.expect("hello.ack").await;
        let started = p.expect("session.lifecycle").await;
        assert_eq!(started["state"], "started");
        p
    }
}

/// A tool definition for tests.
pub fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("test tool {name}"),
           "parameters": {"type": "object", "properties": {}}})
}

pub struct Provider {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Provider {
    pub async fn connect(url: &str) -> Self {
        let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .unwrap();
        Self { ws }
    }

    pub async fn send(&mut self, v: Value) {
        self.ws.send(Message::text(v.to_string())).await.unwrap();
    }

    pub async fn send_raw(&mut self, text: impl Into<String>) {
        self.ws.send(Message::text(text.into())).await.unwrap();
    }

    /// Next JSON message; panics on close or after [`PATIENCE`].
    pub async fn recv(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("timed out waiting for a message")
                .expect("connection closed")
                .expect("socket error");
            match msg {
                Message::Text(t) => return serde_json::from_str(&t).unwrap(),
                Message::Close(f) => panic!("connection closed: {f:?}"),
                _ => continue,
            }
        }
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

    /// Waits until the gateway closes the socket; other messages are returned.
    pub async fn expect_closed(&mut self) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            match tokio::time::timeout(PATIENCE, self.ws.next())
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

/// Next host event matching `pred`, skipping others.
pub async fn next_host_event(
    host: &mut HostClient,
    pred: impl Fn(&HostEvent) -> bool,
) -> HostEvent {
    loop {
        let e = tokio::time::timeout(PATIENCE, host.next_event())
            .await
            .expect("timed out waiting for a host event")
            .expect("host connection closed");
        if pred(&e) {
            return e;
        }
    }
}

/// Waits for the terminal `tool.result` of an invocation started with `start_invoke`.
pub async fn result_of(rx: oneshot::Receiver<HostEvent>) -> HostToolResult {
    match tokio::time::timeout(PATIENCE, rx)
        .await
        .expect("timed out waiting for a tool.result")
        .expect("host connection closed before the result")
    {
        HostEvent::ToolResult(r) => r,
        other => panic!("expected a tool.result, got {other:?}"),
    }
}

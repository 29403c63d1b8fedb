//! A session host on `/session` that runs in the caller's task: the same `auth` and
//! `tool.invoke` → `tool.result` exchange as `tap_client::HostClient`, without its writer
//! and reader tasks. S7 measures the host socket with it next to `HostClient`, so the HTTP
//! client that runs in the caller's task (`http1.rs`) is compared with a host-socket client
//! that does the same.

use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tap_protocol::host::{HostAuth, HostEvent, HostRequest, ToolInvoke};
use tap_protocol::HOST_PROTOCOL_VERSION;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub struct HostInline {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl HostInline {
    pub async fn connect(addr: std::net::SocketAddr, token: &str) -> Result<Self, String> {
        // TCP_NODELAY as `HostClient` sets it.
        let url = format!("ws://{addr}/session");
        let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
            .await
            .map_err(|e| format!("host connect: {e}"))?;
        let mut host = Self { ws, next_id: 0 };
        let auth = HostRequest::Auth(HostAuth {
            token: token.to_string(),
            protocol_version: HOST_PROTOCOL_VERSION,
            host_name: Some("tap-bench-inline".into()),
            resume_token: None,
            pending_calls: None,
        });
        host.send(&auth).await?;
        match host.next().await? {
            HostEvent::AuthOk(_) => Ok(host),
            other => Err(format!("host auth answered {other:?}")),
        }
    }

    async fn send(&mut self, req: &HostRequest) -> Result<(), String> {
        let text = serde_json::to_string(req).map_err(|e| e.to_string())?;
        self.ws
            .send(Message::text(text))
            .await
            .map_err(|e| format!("host send: {e}"))
    }

    async fn next(&mut self) -> Result<HostEvent, String> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(t))) => {
                    // A frame this client has no type for is not an answer; skip it.
                    if let Ok(event) = serde_json::from_str::<HostEvent>(&t) {
                        return Ok(event);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("host socket: {e}")),
                None => return Err("host socket closed".into()),
            }
        }
    }

    /// `tool.invoke` of `tool` in `session` with `{"n": 1}`; the result must be
    /// `{ok: true}`. Unsolicited events (tool sets, lifecycle) are skipped.
    pub async fn call(&mut self, session: &str, tool: &str) -> Result<(), String> {
        self.next_id += 1;
        let call_id = format!("inline-{}", self.next_id);
        self.send(&HostRequest::ToolInvoke(ToolInvoke {
            call_id: call_id.clone(),
            session_id: session.to_string(),
            tool: tool.to_string(),
            args: json!({"n": 1}),
            traceparent: None,
        }))
        .await?;
        loop {
            match self.next().await? {
                HostEvent::ToolResult(r) if r.call_id == call_id => {
                    if r.data != Some(json!({"ok": true})) || r.error.is_some() {
                        return Err(format!("tool.invoke answered {r:?}"));
                    }
                    return Ok(());
                }
                HostEvent::Error(e) => return Err(format!("tool.invoke refused: {e:?}")),
                _ => {}
            }
        }
    }
}

//! MCP over the gateway's WebSocket, for `tap mcp`: the `tap` process pipes its stdin and
//! stdout to `/mcp/<session>` (one JSON-RPC message per text frame), and the MCP session
//! runs here, in the gateway, exactly as an HTTP client's does. The socket runs on the one
//! connection loop (`socket::conn`); rmcp reads and writes through two channels.

use super::handler::McpHandler;
use crate::accept::Kind;
use crate::diagnostics::Limit;
use crate::socket::conn::{Handler, Step};
use crate::socket::outbound::OutSender;
use crate::socket::upgrade::WsStream;
use crate::state::mcp_binding::Target;
use crate::state::Core;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use tap_protocol::limits::MAX_MCP_REQUEST_BYTES;
use tap_protocol::Json;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

/// Serves one `tap mcp` connection until it closes. The peer authenticated with the
/// `Authorization` header before the upgrade. Not an `async fn`, so that the socket and the
/// connection are not kept twice (see `socket::conn::run`).
pub(crate) fn serve(
    core: Arc<Core>,
    ws: WsStream,
    remote: SocketAddr,
    target: Target,
) -> impl std::future::Future<Output = ()> + Send {
    let kill = core.stopping.child_token();
    let (out, out_rx) = core.outbound_queue(Kind::Host, kill.clone());
    let (to_mcp, from_conn) = mpsc::unbounded_channel();
    let handler = McpHandler::new(core.clone(), Some(target));
    let transport = Channels {
        out: out.clone(),
        incoming: from_conn,
    };
    let mcp_stop = kill.clone();
    core.tasks.spawn(async move {
        match handler.serve_with_ct(transport, mcp_stop).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::debug!(error = %e, "MCP session over WebSocket did not start"),
        }
    });
    let mut socket = core.socket(ws, Kind::Host, remote, out_rx, kill.clone());
    // Authenticated by its `Authorization` header before the upgrade.
    socket.authed = true;
    let conn = McpConn {
        core: core.clone(),
        to_mcp,
        out,
    };
    // The MCP session ends with its socket: calls in flight are cancelled.
    futures_util::FutureExt::map(crate::socket::conn::run(socket, conn), move |()| {
        kill.cancel()
    })
}

struct McpConn {
    core: Arc<Core>,
    to_mcp: mpsc::UnboundedSender<RxJsonRpcMessage<RoleServer>>,
    out: OutSender,
}

impl McpConn {
    fn reply_error(&self, id: Json, code: i64, message: String) {
        let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let _ = self.out.send(Message::text(e.to_string()));
    }
}

impl Handler for McpConn {
    fn on_frame(&mut self, bytes: &[u8]) -> Step {
        if bytes.len() > MAX_MCP_REQUEST_BYTES {
            self.core.diagnostics.limit_hit(Limit::PayloadSize);
            self.reply_error(
                Json::Null,
                -32600,
                format!(
                    "Message of {} bytes is above the limit of {MAX_MCP_REQUEST_BYTES}",
                    bytes.len()
                ),
            );
            return Step::Continue;
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(bytes) {
            Ok(m) => {
                let _ = self.to_mcp.send(m);
            }
            Err(e) => match serde_json::from_slice::<Json>(bytes) {
                // JSON-RPC: not JSON is a parse error, JSON that is no request is invalid.
                Err(_) => self.reply_error(Json::Null, -32700, format!("Parse error: {e}")),
                Ok(v) => self.reply_error(
                    v.get("id").cloned().unwrap_or(Json::Null),
                    -32600,
                    format!("Invalid request: {e}"),
                ),
            },
        }
        Step::Continue
    }

    /// Never called: the connection is authenticated before the upgrade.
    fn on_auth_deadline(&mut self) {}
}

/// rmcp's side of the connection.
struct Channels {
    out: OutSender,
    incoming: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleServer>>,
}

impl Transport<RoleServer> for Channels {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_string(&item)
            .map_err(std::io::Error::other)
            .and_then(|text| {
                self.out
                    .send(Message::text(text))
                    .map_err(|_| std::io::Error::other("the MCP client is gone"))
            });
        std::future::ready(sent)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

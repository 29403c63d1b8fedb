//! What MCP servers the gateway runs ask of the client that made a call: an MCP client of
//! the `initialize` generation that declared `sampling` or `elicitation` is registered with
//! its session's binding for as long as its MCP session lives, and answers
//! `sampling/createMessage` and `elicitation/create` forwarded to it. (The stateless
//! generation forbids server-to-client requests.)

// Sampling is deprecated for new clients (SEP-2577); clients of the initialize generation
// still answer it, and servers still ask.
#![allow(deprecated)]

use crate::limits::MCP_CLIENT_ASK_TIMEOUT;
use crate::state::mcp_binding::{Binding, ClientAsk, ClientAsker};
use rmcp::{Peer, RoleServer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tap_protocol::Json;
use tokio_util::sync::CancellationToken;

struct PeerAsker {
    peer: Peer<RoleServer>,
    sampling: bool,
    elicitation: bool,
}

impl ClientAsker for PeerAsker {
    fn can(&self, ask: ClientAsk) -> bool {
        match ask {
            ClientAsk::Sampling => self.sampling,
            ClientAsk::Elicitation => self.elicitation,
        }
    }

    fn ask(
        &self,
        ask: ClientAsk,
        params: Json,
    ) -> Pin<Box<dyn Future<Output = Result<Json, String>> + Send>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let asked = async {
                match ask {
                    ClientAsk::Sampling => {
                        let params = serde_json::from_value(params)
                            .map_err(|e| format!("the request is not valid: {e}"))?;
                        let r = peer
                            .create_message(params)
                            .await
                            .map_err(|e| e.to_string())?;
                        serde_json::to_value(r).map_err(|e| e.to_string())
                    }
                    ClientAsk::Elicitation => {
                        let params = serde_json::from_value(params)
                            .map_err(|e| format!("the request is not valid: {e}"))?;
                        let r = peer
                            .create_elicitation(params)
                            .await
                            .map_err(|e| e.to_string())?;
                        serde_json::to_value(r).map_err(|e| e.to_string())
                    }
                }
            };
            tokio::time::timeout(MCP_CLIENT_ASK_TIMEOUT, asked)
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "the client did not answer within {} s",
                        MCP_CLIENT_ASK_TIMEOUT.as_secs()
                    ))
                })
        })
    }
}

/// Registers `peer` with `binding` when it declared either capability, until `closed`
/// (its MCP session ends) or the binding is gone.
pub(crate) fn register(
    tasks: &tokio_util::task::TaskTracker,
    binding: &Arc<Binding>,
    peer: &Peer<RoleServer>,
    closed: CancellationToken,
) {
    let Some(info) = peer.peer_info() else {
        return;
    };
    let sampling = info.capabilities.sampling.is_some();
    let elicitation = info.capabilities.elicitation.is_some();
    if !sampling && !elicitation {
        return;
    }
    let id = binding.add_asker(Arc::new(PeerAsker {
        peer: peer.clone(),
        sampling,
        elicitation,
    }));
    let binding = binding.clone();
    tasks.spawn(async move {
        tokio::select! {
            _ = closed.cancelled() => {}
            _ = binding.gone.cancelled() => {}
        }
        binding.remove_asker(id);
    });
}

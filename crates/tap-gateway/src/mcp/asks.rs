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
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, ElicitRequest, GetExtensions, RequestId, ServerNotification,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions};
use rmcp::{Peer, RoleServer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tap_protocol::Json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

struct PeerAsker {
    peer: Peer<RoleServer>,
    sampling: bool,
    elicitation: bool,
    /// The client's request the ask belongs to (its `tools/call`): a Streamable HTTP client
    /// gets the ask on that request's event stream. `None`: wherever rmcp sends it (the
    /// session's standalone stream).
    origin: Option<RequestId>,
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
        let origin = self.origin.clone();
        Box::pin(async move {
            let asked = async {
                let request = match ask {
                    ClientAsk::Sampling => {
                        let params: CreateMessageRequestParams = serde_json::from_value(params)
                            .map_err(|e| format!("the request is not valid: {e}"))?;
                        params.validate()?;
                        ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params))
                    }
                    ClientAsk::Elicitation => {
                        let params = serde_json::from_value(params)
                            .map_err(|e| format!("the request is not valid: {e}"))?;
                        ServerRequest::ElicitRequest(ElicitRequest::new(params))
                    }
                };
                let answer = send(peer, request, origin).await?;
                match answer {
                    ClientResult::CreateMessageResult(r) => {
                        serde_json::to_value(r).map_err(|e| e.to_string())
                    }
                    ClientResult::ElicitResult(r) => {
                        serde_json::to_value(r).map_err(|e| e.to_string())
                    }
                    _ => Err("the client answered something else".to_string()),
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

/// Sends `request` to the client marked as belonging to its request `origin`. On a task of
/// its own: rmcp would otherwise mark it with the request the current task serves, which
/// here is the MCP server's own request to the gateway (`mcp_servers/client.rs`), an id the
/// client never sent. Given up before the client answers (the approval was decided in the
/// tray, or timed out; the ask's own timeout), the client is told with
/// `notifications/cancelled` for that request, so it can close its dialog.
async fn send(
    peer: Peer<RoleServer>,
    mut request: ServerRequest,
    origin: Option<RequestId>,
) -> Result<ClientResult, String> {
    if let Some(origin) = &origin {
        request
            .extensions_mut()
            .insert(OriginatingRequestId(origin.clone()));
    }
    let sender = peer.clone();
    // Aborted when the ask is given up while sending.
    let handle = AbortOnDropHandle::new(tokio::spawn(async move {
        sender
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
    }))
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let mut withdraw = Withdraw {
        peer: Some(peer),
        id: handle.id.clone(),
        origin,
    };
    let answer = handle.await_response().await.map_err(|e| e.to_string());
    // Answered (or the client went away): nothing to withdraw.
    withdraw.peer = None;
    answer
}

/// Dropped while its request is unanswered: sends the client `notifications/cancelled`.
struct Withdraw {
    peer: Option<Peer<RoleServer>>,
    id: RequestId,
    origin: Option<RequestId>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut note = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("answered elsewhere, or no longer waited for".into()),
        ));
        // On the stream of the client's request, as the ask itself was.
        if let Some(origin) = self.origin.take() {
            note.extensions.insert(OriginatingRequestId(origin));
        }
        rt.spawn(async move {
            let _ = peer
                .send_notification(ServerNotification::CancelledNotification(note))
                .await;
        });
    }
}

/// Capabilities `peer` declared: (sampling, elicitation).
fn declared(peer: &Peer<RoleServer>) -> Option<(bool, bool)> {
    let info = peer.peer_info()?;
    let caps = &info.capabilities;
    let (sampling, elicitation) = (caps.sampling.is_some(), caps.elicitation.is_some());
    (sampling || elicitation).then_some((sampling, elicitation))
}

/// While it lives, what a server asks during the call of trace `trace` goes to `peer` on
/// the stream of its request `origin` (`None`: the client declared neither capability).
pub(crate) struct CallAsker<'a> {
    binding: &'a Binding,
    trace: u128,
}

impl Drop for CallAsker<'_> {
    fn drop(&mut self) {
        self.binding.remove_call_asker(self.trace);
    }
}

pub(crate) fn for_call<'a>(
    binding: &'a Binding,
    trace: u128,
    peer: &Peer<RoleServer>,
    origin: RequestId,
) -> Option<CallAsker<'a>> {
    let (sampling, elicitation) = declared(peer)?;
    binding.add_call_asker(
        trace,
        Arc::new(PeerAsker {
            peer: peer.clone(),
            sampling,
            elicitation,
            origin: Some(origin),
        }),
    );
    Some(CallAsker { binding, trace })
}

/// Registers `peer` with `binding` when it declared either capability, until `closed`
/// (its MCP session ends) or the binding is gone.
pub(crate) fn register(
    tasks: &tokio_util::task::TaskTracker,
    binding: &Arc<Binding>,
    peer: &Peer<RoleServer>,
    closed: CancellationToken,
) {
    let Some((sampling, elicitation)) = declared(peer) else {
        return;
    };
    let id = binding.add_asker(Arc::new(PeerAsker {
        peer: peer.clone(),
        sampling,
        elicitation,
        origin: None,
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

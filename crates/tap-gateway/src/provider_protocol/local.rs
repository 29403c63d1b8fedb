//! The in-process transport (spec: "Transport abstraction", LocalProviderTransport): a
//! provider inside the gateway's process speaks the same messages without a socket and
//! without authenticating, with trust **internal** (every capability: binding to `"all"`,
//! other providers' streams, hooks, transforms, context).
//!
//! Messages go through the same connection state machine as socket frames, so every rule
//! (validation, limits, ordering, acknowledgments) is the same; only the transport and the
//! trust differ. The first message received is `sessions`.

use super::ProviderConn;
use crate::socket::conn::Step;
use crate::socket::outbound::OutReceiver;
use crate::state::provider_entry::Trust;
use crate::state::Core;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tap_protocol::provider::{GatewayMessage, ProviderMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::local";

/// An in-process provider connection with internal trust; see `Gateway::connect_local`.
/// Dropping it disconnects the provider (as a closed socket would).
pub struct LocalProvider {
    provider_id: String,
    to_gateway: mpsc::UnboundedSender<Vec<u8>>,
    /// Bounded like a socket's: an embedder that stops receiving is disconnected.
    from_gateway: OutReceiver,
    kill: CancellationToken,
}

/// Sends messages for a [`LocalProvider`] from another task.
#[derive(Clone)]
pub(crate) struct LocalSender(mpsc::UnboundedSender<Vec<u8>>);

impl LocalSender {
    /// As [`LocalProvider::send`].
    pub(crate) fn send(&self, msg: &ProviderMessage) -> Result<(), LocalClosed> {
        let bytes = serde_json::to_vec(msg).expect("protocol types serialize");
        self.0.send(bytes).map_err(|_| LocalClosed)
    }
}

/// The gateway closed the local connection (after `goodbye`, a fatal error, or its stop).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the local provider connection is closed")]
pub struct LocalClosed;

/// Connects an in-process provider (trust internal). It is authenticated already: the
/// first message it receives is `sessions`; then it sends `hello` as any provider.
pub(crate) fn connect(core: &Arc<Core>) -> LocalProvider {
    let remote = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
    let (mut conn, from_gateway) = ProviderConn::new(core.clone(), remote, None);
    let kill = conn.link.kill.clone();
    let provider_id = {
        let mut state = core.state();
        conn.admit(&mut state, Trust::Internal, None, None, None)
    };
    conn.id = Some(provider_id.clone());
    tracing::info!(target: LOG_TARGET, provider = %provider_id, "local provider connected");
    let (to_gateway, mut inbound) = mpsc::unbounded_channel::<Vec<u8>>();
    let stop = kill.clone();
    core.tasks.spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => {
                    // What was sent before the drop still arrives, as a closed socket's
                    // last frames do: an MCP server's run answers its calls in flight and
                    // then drops its provider at once.
                    while let Ok(bytes) = inbound.try_recv() {
                        match conn.on_frame(&bytes) {
                            Step::Close(..) => break,
                            Step::Backpressure => conn.relieve_ledger().await,
                            _ => {}
                        }
                    }
                    break;
                }
                frame = inbound.recv() => match frame {
                    None => break,
                    Some(bytes) => match conn.on_frame(&bytes) {
                        Step::Close(..) => break,
                        Step::Backpressure => conn.relieve_ledger().await,
                        _ => {}
                    },
                },
            }
        }
        conn.disconnect();
    });
    LocalProvider {
        provider_id,
        to_gateway,
        from_gateway,
        kill,
    }
}

impl LocalProvider {
    /// The `providerId` (also in `hello.ack`).
    pub fn provider_id(&self) -> &str {
        &self.provider_id
    }

    /// Sends a message to the gateway.
    pub fn send(&self, msg: &ProviderMessage) -> Result<(), LocalClosed> {
        let bytes = serde_json::to_vec(msg).expect("protocol types serialize");
        self.to_gateway.send(bytes).map_err(|_| LocalClosed)
    }

    /// A handle that sends for this connection from other tasks (an MCP server's calls
    /// answer on their own tasks); it does not keep the connection open.
    pub(crate) fn sender(&self) -> LocalSender {
        LocalSender(self.to_gateway.clone())
    }

    /// Sends a message given as JSON, checked exactly as a socket frame would be (an
    /// invalid one is answered with `error`).
    pub fn send_json(&self, msg: &serde_json::Value) -> Result<(), LocalClosed> {
        let bytes = serde_json::to_vec(msg).expect("JSON serializes");
        self.to_gateway.send(bytes).map_err(|_| LocalClosed)
    }

    /// The next message from the gateway; `None` once the connection is closed and every
    /// message before the close was received.
    pub async fn recv(&mut self) -> Option<GatewayMessage> {
        let frame = self.from_gateway.recv().await?;
        Some(serde_json::from_slice(&frame.into_data()).expect("the gateway sends valid messages"))
    }

    /// [`LocalProvider::recv`] as JSON, the shape a socket provider sees.
    pub async fn recv_json(&mut self) -> Option<serde_json::Value> {
        let frame = self.from_gateway.recv().await?;
        Some(serde_json::from_slice(&frame.into_data()).expect("the gateway sends JSON"))
    }
}

impl Drop for LocalProvider {
    fn drop(&mut self) {
        self.kill.cancel();
    }
}

//! What handler tasks hand the connection to send: apart from `state`, so a tool's context
//! holds an outbox without importing the provider's state.

use tap_protocol::provider::ProviderMessage;
use tokio::sync::mpsc;

/// A frame a handler's task wants sent, stamped with the connection it belongs to: an
/// answer to a call from a connection that has since dropped is not sent on the next one
/// (the gateway already failed that call).
pub(crate) struct Outgoing {
    pub generation: u64,
    pub msg: ProviderMessage,
}

pub(crate) type Outbox = mpsc::UnboundedSender<Outgoing>;

//! What the rest of the gateway holds to talk to one provider connection.

use crate::hooks::gates::GateTable;
use crate::providers::activity::Activity;
use crate::tools::table::CallTable;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// What the rest of the gateway holds to talk to one provider connection.
#[derive(Clone)]
pub(crate) struct ProviderLink {
    /// Frames for the provider; the connection task writes them in order.
    pub out: mpsc::UnboundedSender<Message>,
    /// Calls in flight on this connection.
    pub calls: Arc<CallTable>,
    /// `gate.check`s awaiting this provider's `gate.result`.
    pub gates: Arc<GateTable>,
    /// Cancelling this closes the connection (after its queued frames are written).
    pub kill: CancellationToken,
    /// When the provider last sent anything (multi-instance routing).
    pub activity: Arc<Activity>,
}

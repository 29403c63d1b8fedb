//! What the rest of the gateway holds to talk to one provider connection.

use crate::socket::frame::frame;
use crate::socket::outbound::OutSender;
use crate::state::activity::Activity;
use crate::state::call_table::CallTable;
use crate::state::gates::GateTable;
use std::sync::Arc;
use tap_protocol::provider::{GatewayMessage, ToolCancel};
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

/// What the rest of the gateway holds to talk to one provider connection.
#[derive(Clone)]
pub(crate) struct ProviderLink {
    /// Frames for the provider; the connection task writes them in order. Bounded: a
    /// provider that does not take them is disconnected (its calls fail `DISCONNECTED`).
    pub out: OutSender,
    /// Calls in flight on this connection.
    pub calls: Arc<CallTable>,
    /// `gate.check`s awaiting this provider's `gate.result`.
    pub gates: Arc<GateTable>,
    /// Cancelling this closes the connection (after its queued frames are written).
    pub kill: CancellationToken,
    /// When the provider last sent anything (multi-instance routing).
    pub activity: Arc<Activity>,
}

impl ProviderLink {
    /// Queues a message for the provider; one for a closed connection, or past a full
    /// queue (the connection is then closing), is dropped.
    pub fn send(&self, msg: &GatewayMessage) {
        let _ = self.out.send(frame(msg));
    }

    /// Fails this provider's calls in `session` with `CANCELLED` (`message`) and sends it
    /// `tool.cancel` (`reason`) for each: its session ended, or it left the session.
    pub fn cancel_calls_in(&self, session: &str, message: &str, reason: &str) {
        for id in self
            .calls
            .fail_session(session, ErrorCode::Cancelled, message)
        {
            self.send(&GatewayMessage::ToolCancel(ToolCancel {
                id,
                session_id: session.to_string(),
                reason: reason.to_string(),
            }));
        }
    }
}

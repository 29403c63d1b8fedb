//! The app's log: the same setup as `tap gateway` ([`tap_gateway::logs::install_with`]:
//! `TAP_LOG`, stderr, the panel's log ring), plus the layer that picks provider failures
//! out of it for notifications.

use crate::failures::{FailureLayer, ProviderFailure};
use tap_gateway::logs::LogBuffer;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::Layer;

/// Installs the process's subscriber. Returns the ring (for the engine) and the provider
/// failures the engine logs from now on.
pub fn install() -> (LogBuffer, UnboundedReceiver<ProviderFailure>) {
    let (tx, failures) = unbounded_channel();
    let logs =
        tap_gateway::logs::install_with(FailureLayer::new(tx).with_filter(LevelFilter::WARN));
    (logs, failures)
}

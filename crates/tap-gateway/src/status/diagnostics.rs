//! The `diagnostics` answer: the counters, and every connection's state read from the
//! registry and the connection slots when asked.

use crate::limits::FAILURES_KEPT;
use crate::state::Core;
use tap_protocol::diagnostics::Diagnostics;

/// The counters since the start, the newest failures and every connection's state.
pub(crate) fn snapshot(core: &Core) -> Diagnostics {
    let connections = super::connections::states(core);
    let counted = core.diagnostics.counted();
    Diagnostics {
        since: crate::time::rfc3339(core.started_at),
        errors: counted.errors,
        limits: counted.limits,
        connections,
        recent_failures: counted.failures,
        failures_kept: FAILURES_KEPT,
        ledger: core.ledger.state(),
        otlp: core.tracer.export_stats(),
    }
}

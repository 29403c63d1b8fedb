//! A call waits for room in the ledger before it starts. Its spans are finished in code
//! that cannot wait (a span may end in a `Drop`), so they are queued with
//! [`crate::ledger::Ledger::write_detached`]; were calls not held back here, a ledger whose
//! writer falls behind (a slow disk, a flood of calls) would gather a waiting task per span
//! without bound. Held back, calls go at the writer's pace and what waits is bounded by the
//! calls in flight, as pushes are (their socket stops being read).

use crate::request::{CallError, CallRequest};
use crate::state::Core;
use tap_protocol::ErrorCode;
use tokio::time::Instant;

/// Waits while the ledger's queue is full, as long as the caller still wants the call and
/// at most until `deadline`.
pub(super) async fn wait(
    core: &Core,
    req: &CallRequest,
    deadline: Instant,
) -> Result<(), CallError> {
    // Every call passes here: the usual case costs two atomic loads, not a timer.
    if core.ledger.has_room() {
        return Ok(());
    }
    tokio::select! {
        biased;
        () = core.ledger.room() => Ok(()),
        _ = req.cancel.cancelled() => Err(CallError::new(
            ErrorCode::Cancelled,
            format!("Call to '{}' was cancelled while history was catching up", req.tool),
        )),
        _ = tokio::time::sleep_until(deadline) => Err(CallError::new(
            ErrorCode::Timeout,
            format!(
                "Call to '{}' timed out waiting for history (the ledger) to catch up",
                req.tool
            ),
        )),
    }
}

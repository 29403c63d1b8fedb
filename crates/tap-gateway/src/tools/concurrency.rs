//! Taking a tool concurrency slot (spec: "Tool concurrency"). A call takes a slot before
//! its `tool.call` is sent and gives it back on its terminal outcome. When no slot is free
//! the call waits in a FIFO queue (tokio's semaphore is fair); with `MAX_QUEUED_CALLS`
//! already waiting a new call fails `RATE_LIMITED` at once. A waiting call still honours
//! its deadline and its caller's cancellation.

use crate::request::CallError;
use crate::state::Core;
use crate::trace::OpenSpan;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tap_protocol::limits::MAX_QUEUED_CALLS;
use tap_protocol::ErrorCode;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes a slot for a call of `tool` routed to provider connection `provider_id`, waiting in
/// line if needed. `None` when the provider declared no limit. (For a shared tool the
/// instance is chosen first, so scope `instance` and `tool` count that instance's calls and
/// scope `provider` every instance's.) Fails `RATE_LIMITED` when the line is full,
/// `TIMEOUT` at `deadline`, `CANCELLED` when `cancel` fires; the provider never hears of a
/// call that did not get a slot.
pub(crate) async fn acquire(
    core: &Core,
    provider_id: &str,
    tool: &str,
    deadline: Instant,
    cancel: &CancellationToken,
    trace: &OpenSpan,
) -> Result<Option<OwnedSemaphorePermit>, CallError> {
    let gate = core.state().limits.gate(provider_id, tool);
    let Some((slots, waiting)) = gate else {
        return Ok(None);
    };
    if let Ok(permit) = slots.clone().try_acquire_owned() {
        // Only when nobody is queued ahead (the semaphore is fair, so this holds).
        return Ok(Some(permit));
    }
    if waiting.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED_CALLS {
        waiting.fetch_sub(1, Ordering::SeqCst);
        core.diagnostics
            .limit_hit(crate::diagnostics::Limit::CallQueue);
        return Err(CallError::new(
            ErrorCode::RateLimited,
            format!(
                "Tool '{tool}' is at its concurrency limit with {MAX_QUEUED_CALLS} calls queued; retry later"
            ),
        ));
    }
    let _in_line = Waiting(waiting);
    // Only a call that waits has this span: it is the queueing a waterfall should show.
    let mut span = trace.child("concurrency.wait");
    span.set("queued", waiting_now(&_in_line));
    let outcome = tokio::select! {
        permit = slots.acquire_owned() => Ok(permit.ok()),
        _ = tokio::time::sleep_until(deadline) => Err(CallError::new(
            ErrorCode::Timeout,
            format!("Tool '{tool}' did not get a concurrency slot before its timeout"),
        )),
        _ = cancel.cancelled() => Err(CallError::new(
            ErrorCode::Cancelled,
            format!("Call to '{tool}' was cancelled while queued"),
        )),
    };
    super::traced::end(span, &outcome);
    outcome
}

fn waiting_now(w: &Waiting) -> usize {
    w.0.load(Ordering::SeqCst)
}

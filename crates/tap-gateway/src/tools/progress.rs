//! A call's `tool.progress` handed on while the call runs, ahead of its outcome: what every
//! caller that shows progress needs (the session-host socket, the MCP facade, the panel's
//! playground).

use super::request::{CallError, CallRequest, ProgressSink};
use crate::state::Core;
use crate::trace::OpenSpan;
use std::future::Future;
use std::time::SystemTime;
use tap_protocol::limits::MAX_PROGRESS_EVENTS_PER_CALL;
use tap_protocol::Json;

/// Runs `request` on the call path under `root` (the caller's `tool.call` span, which the
/// caller ends), handing each progress message to `on_progress` as it arrives; each one is
/// also a `tool.progress` event on the root span. Progress is polled first: a message the
/// provider sent just before its result is already queued when the result lands, and must
/// reach the caller before it.
pub(crate) async fn call_tool_reporting<F, Fut>(
    core: &std::sync::Arc<Core>,
    mut request: CallRequest,
    root: &mut OpenSpan,
    mut on_progress: F,
) -> Result<Json, CallError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let (progress, mut progress_rx) = ProgressSink::channel();
    request.progress = Some(progress.clone());
    // The root is the call's while it runs; its progress events are added after.
    let mut seen = Vec::new();
    let mut unrecorded = 0usize;
    let outcome = {
        let run = super::call::call_tool_in(core, request, root);
        tokio::pin!(run);
        loop {
            tokio::select! {
                biased;
                Some(message) = progress_rx.recv() => {
                    if seen.len() < MAX_PROGRESS_EVENTS_PER_CALL {
                        seen.push((SystemTime::now(), message.clone()));
                    } else {
                        unrecorded += 1;
                    }
                    on_progress(message).await
                }
                outcome = &mut run => break outcome,
            }
        }
    };
    for (at, message) in seen {
        root.event_at("tool.progress", at, vec![("message", message.into())]);
    }
    // Messages that came faster than the caller took them; its peer never heard them.
    let dropped = progress.dropped();
    if dropped > 0 {
        root.event_at(
            "tool.progress.dropped",
            SystemTime::now(),
            vec![("count", (dropped as i64).into())],
        );
    }
    if unrecorded > 0 {
        root.event_at(
            "tool.progress.unrecorded",
            SystemTime::now(),
            vec![("count", unrecorded.into())],
        );
    }
    outcome
}

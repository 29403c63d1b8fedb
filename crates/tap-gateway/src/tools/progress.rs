//! A call's `tool.progress` handed on while the call runs, ahead of its outcome: what every
//! caller that shows progress needs (the session-host socket, the MCP facade, the panel's
//! playground).

use super::request::{CallError, CallRequest};
use crate::state::Core;
use std::future::Future;
use tap_protocol::Json;
use tokio::sync::mpsc;

/// Runs `request` on the call path, handing each progress message to `on_progress` as it
/// arrives. Progress is polled first: a message the provider sent just before its result is
/// already queued when the result lands, and must reach the caller before it.
pub(crate) async fn call_tool_reporting<F, Fut>(
    core: &Core,
    mut request: CallRequest,
    mut on_progress: F,
) -> Result<Json, CallError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let (progress, mut progress_rx) = mpsc::unbounded_channel();
    request.progress = Some(progress);
    let run = super::call::call_tool(core, request);
    tokio::pin!(run);
    loop {
        tokio::select! {
            biased;
            Some(message) = progress_rx.recv() => on_progress(message).await,
            outcome = &mut run => return outcome,
        }
    }
}

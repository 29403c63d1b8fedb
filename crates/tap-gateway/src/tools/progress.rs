//! A call's `tool.progress` handed on while the call runs, ahead of its outcome: what every
//! caller that shows progress needs (the session-host socket, the MCP facade, the panel's
//! playground).

use crate::request::{CallError, CallRequest, ProgressReceiver, ProgressSink};
use crate::state::Core;
use crate::trace::OpenSpan;
use std::future::Future;
use std::time::SystemTime;
use tap_protocol::limits::MAX_PROGRESS_EVENTS_PER_CALL;
use tap_protocol::Json;

/// Runs `request` on the call path under `root` (the caller's `tool.call` span, which the
/// caller ends), handing each progress message to `on_progress` as it arrives; each one is
/// also a `tool.progress` event on the root span. Every message the provider sent before
/// its result reaches the caller before the outcome (see [`relay_until_done`]).
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
    let run = super::call::call_tool_in(core, request, root);
    let outcome = relay_until_done(run, &mut progress_rx, |message| {
        if seen.len() < MAX_PROGRESS_EVENTS_PER_CALL {
            seen.push((SystemTime::now(), message.clone()));
        } else {
            unrecorded += 1;
        }
        on_progress(message)
    })
    .await;
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

/// Drives `run` to its outcome, handing each queued progress message to `on_progress` on
/// the way, and then the ones still queued when the outcome landed.
///
/// The provider's socket task queues a call's progress and then completes its result, in
/// that order. Polling progress first is not enough to keep that order here: this task can
/// find the queue empty, lose the CPU, and then find the result, with both messages
/// queued in between. So the queue is drained after the outcome, before it is returned.
async fn relay_until_done<T, F, Fut>(
    run: impl Future<Output = T>,
    progress_rx: &mut ProgressReceiver,
    mut on_progress: F,
) -> T
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    tokio::pin!(run);
    let outcome = loop {
        tokio::select! {
            biased;
            Some(message) = progress_rx.recv() => on_progress(message).await,
            outcome = &mut run => break outcome,
        }
    };
    while let Some(message) = progress_rx.try_recv() {
        on_progress(message).await;
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ProgressSink;
    use std::sync::{Arc, Mutex};

    /// The interleaving that lost progress in the MCP facade: the queue is empty when it is
    /// polled, and by the time the call is polled the provider has sent progress and result.
    #[tokio::test]
    async fn progress_queued_while_the_outcome_lands_still_comes_first() {
        let (sink, mut rx) = ProgressSink::channel();
        let run = std::future::poll_fn(move |_| {
            sink.offer("compiling".into());
            sink.offer("linking".into());
            std::task::Poll::Ready("built")
        });
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = heard.clone();
        let outcome = relay_until_done(run, &mut rx, |m| {
            log.lock().unwrap().push(m);
            async {}
        })
        .await;
        assert_eq!(outcome, "built");
        assert_eq!(*heard.lock().unwrap(), ["compiling", "linking"]);
    }

    #[tokio::test]
    async fn progress_queued_before_the_outcome_comes_in_order() {
        let (sink, mut rx) = ProgressSink::channel();
        sink.offer("one".into());
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = heard.clone();
        let mut done_tx = Some(done_tx);
        let outcome = relay_until_done(async { done_rx.await.unwrap() }, &mut rx, |m| {
            log.lock().unwrap().push(m);
            // The provider sends its second message, then its result, while the first is
            // handed on.
            if let Some(tx) = done_tx.take() {
                sink.offer("two".into());
                let _ = tx.send(7);
            }
            async {}
        })
        .await;
        assert_eq!(outcome, 7);
        assert_eq!(*heard.lock().unwrap(), ["one", "two"]);
    }
}

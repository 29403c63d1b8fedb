//! The spans of one tool call: the root every caller opens (`tool.call`, under the host's
//! `traceparent` when it sent one), and how a call's outcome ends a span. The call path
//! adds the children (`hook.precheck` → `gate.check`, `concurrency.wait`, `provider.call`).

use crate::request::CallError;
use crate::state::Core;
use crate::trace::{OpenSpan, SpanContext, CALL_SPAN, CLIENT_ATTR};

/// Opens the root span of a call of `tool` in `session_id`, made by `via` (`host`, `mcp`,
/// `playground`, `api`). A malformed `traceparent` is ignored (W3C: start a new trace) and
/// noted on the span.
pub(crate) fn open_call(
    core: &Core,
    session_id: &str,
    tool: &str,
    traceparent: Option<&str>,
    via: &'static str,
) -> OpenSpan {
    let parent = traceparent.and_then(SpanContext::parse);
    let mut root = core.tracer.start(CALL_SPAN, parent);
    root.session(session_id);
    root.tool(tool);
    root.set("via", via);
    // The session's client, for the activity rollup's `by: client` (hook rules' and
    // approvals' `match.client`): on the span, so the rollup reads it from the call itself.
    if core.ledger.rollup() {
        if let Some(client) = client_of(core, session_id) {
            root.set(CLIENT_ATTR, client);
        }
    }
    if traceparent.is_some() && parent.is_none() {
        root.set("traceparent.ignored", true);
    }
    root
}

/// The client of session `session_id`'s host (`HostEntry::client`); `None` for a session
/// that is gone.
fn client_of(core: &Core, session_id: &str) -> Option<String> {
    let state = core.state();
    let session = state.sessions.get(session_id)?;
    state
        .hosts
        .get(&session.host)
        .map(|h| h.client().to_string())
}

/// Ends `span` as `outcome` says.
pub(crate) fn end<T>(span: OpenSpan, outcome: &Result<T, CallError>) {
    match outcome {
        Ok(_) => span.ok(),
        Err(e) => span.fail(e.code.clone(), e.message.clone()),
    }
}

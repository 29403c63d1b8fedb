//! The spans of one tool call: the root every caller opens (`tool.call`, under the host's
//! `traceparent` when it sent one), and how a call's outcome ends a span. The call path
//! adds the children (`hook.precheck` → `gate.check`, `concurrency.wait`, `provider.call`).

use crate::limits::MAX_FAILURE_MESSAGE_CHARS;
use crate::request::CallError;
use crate::state::Core;
use crate::text::cut;
use crate::trace::{OpenSpan, SpanContext, CALL_SPAN, CLIENT_ATTR};
use tap_protocol::Json;

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

/// The code a call's span ends with when the tool answered but said it failed.
pub(crate) const TOOL_ERROR: &str = "TOOL_ERROR";

/// Ends a call's root span as `outcome` says, counting a result the tool itself marked
/// failed (an MCP `isError: true`, as MCP servers answer a failed API call) as an error:
/// it is a failure to the agent and the user, and the traces, the figures and the red
/// rows should say so (OpenTelemetry's MCP conventions do the same, `error.type
/// tool_error`). The message is the result's text, cut.
pub(crate) fn end_call(span: OpenSpan, outcome: &Result<Json, CallError>) {
    match outcome {
        Ok(data) if reported_failure(data) => {
            let text = failure_text(data);
            span.fail(TOOL_ERROR, cut(&text, MAX_FAILURE_MESSAGE_CHARS))
        }
        other => end(span, other),
    }
}

/// Whether a result says the tool failed (`isError: true`).
pub(crate) fn reported_failure(data: &Json) -> bool {
    data.get("isError").and_then(Json::as_bool) == Some(true)
}

/// The text blocks of a failed result, one per line.
pub(crate) fn failure_text(data: &Json) -> String {
    let texts: Vec<&str> = data
        .get("content")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Json::as_str))
        .collect();
    match texts.is_empty() {
        true => "the tool reported an error (isError), without text".to_string(),
        false => texts.join("\n"),
    }
}

/// Ends `span` as `outcome` says.
pub(crate) fn end<T>(span: OpenSpan, outcome: &Result<T, CallError>) {
    match outcome {
        Ok(_) => span.ok(),
        Err(e) => span.fail(e.code.clone(), e.message.clone()),
    }
}

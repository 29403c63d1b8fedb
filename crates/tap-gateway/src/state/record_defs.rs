//! The declarations of the agent's reading tools over what the gateway keeps of its
//! session: `tap_query_records` (the history database: events, traces and their spans,
//! emitter runs) and `tap_get_session_state` (the session as it is now). Answered by
//! `crate::builtin::record_tools` and `crate::builtin::session_state`; listed with
//! [`super::builtin_defs`]'s tools.
//!
//! The descriptions are written for a model choosing a tool: what each reads, what it
//! never shows (another workspace's sessions), and how to page.

use crate::limits::{
    DEFAULT_RECORDS_PAGE, MAX_RECORDS_ANSWER_BYTES, MAX_RECORDS_PAGE, MAX_RECORDS_QUERY_LEN,
    MAX_STREAM_ARG_LEN,
};
use serde_json::json;
use tap_protocol::provider::ToolDef;
use tap_protocol::Json;

pub(crate) const QUERY_RECORDS: &str = "tap_query_records";
pub(crate) const GET_SESSION_STATE: &str = "tap_get_session_state";

fn text(max: usize, description: &str) -> Json {
    json!({"type": "string", "minLength": 1, "maxLength": max, "description": description})
}

fn query_records() -> ToolDef {
    let description = format!(
        "Searches the gateway's history database (kept across sessions and restarts) for records of THIS session and of earlier sessions in the same workspace (working directory); other workspaces' sessions are never shown. \
'records' picks what to read: 'events' (default: lines of EventStreams — emitter output, provider pushes, your tap_post notes — newest first; 'text' searches them by words), 'traces' (one summary per traced operation: tool calls, emitter runs, session starts; newest first), 'spans' (every span of one trace: pass its 'traceId'), 'runs' (emitter runs: when each started, status, exit). \
Filters combine (all must hold). Answers hold at most 'limit' records (default {DEFAULT_RECORDS_PAGE}, at most {MAX_RECORDS_PAGE}) and about {} KiB; long texts are cut and marked 'truncated'. When 'nextCursor' is in the answer, call again with the same arguments and 'cursor' set to it for older records. \
For the newest in-memory events of a live stream tap_stream_history is quicker.",
        MAX_RECORDS_ANSWER_BYTES / 1024
    );
    ToolDef {
        name: QUERY_RECORDS.into(),
        description,
        parameters: json!({
            "type": "object",
            "properties": {
                "records": {"type": "string", "enum": ["events", "traces", "spans", "runs"],
                            "description": "What to read (default 'events')."},
                "session": {"type": "string", "minLength": 1, "maxLength": tap_protocol::limits::MAX_SESSION_ID_LEN,
                            "description": "'current' (this session only), 'workspace' (the default: this session and earlier ones in its working directory), or one session id of those (as records show in 'sessionId')."},
                "stream": text(MAX_STREAM_ARG_LEN, "events: one EventStream, 'name' or 'name@provider' (as tap_list_streams shows). runs: the emitter's name."),
                "provider": text(MAX_STREAM_ARG_LEN, "events and traces: only this provider's (by name; 'emitters' for emitter streams, 'tap' for the gateway's own)."),
                "kind": text(MAX_STREAM_ARG_LEN, "events: the filter's outcome ('keep', 'surface', 'inject', 'drop'). traces: the operation ('tool.call', 'emitter.run', 'session.start', …)."),
                "status": text(MAX_STREAM_ARG_LEN, "traces: 'ok' or 'error'. runs: the run's status ('running', 'exited', 'failed', 'stopped', …)."),
                "tool": text(MAX_STREAM_ARG_LEN, "traces: only calls of this tool."),
                "text": text(MAX_RECORDS_QUERY_LEN, "events: words that must all appear in the event's text or metadata (each matched as a word prefix, case-insensitive; punctuation and quotes are plain text, not query syntax)."),
                "since": text(64, "Only records at or after this time: RFC 3339 ('2026-11-29T08:00:00Z') or an age ('90s', '15m', '2h', '3d')."),
                "until": text(64, "Only records before this time: RFC 3339 or an age, as 'since'."),
                "traceId": text(64, "spans: the trace whose spans to read (from a trace's or an event's 'traceId')."),
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECORDS_PAGE,
                          "description": format!("Records in this answer (default {DEFAULT_RECORDS_PAGE}).")},
                "cursor": text(200, "The 'nextCursor' of the previous answer, to read on.")
            },
            "additionalProperties": false
        })
        .into(),
        timeout: None,
        ..Default::default()
    }
}

fn get_session_state() -> ToolDef {
    ToolDef {
        name: GET_SESSION_STATE.into(),
        description: "This session as the gateway sees it now (read-only): id, label, working directory, the host (its kind, whether it is busy or idle, the agent's mode and model where the host reports them, what its UI can do: confirm / elicitation dialogs, modes it can switch to), the session's emitters with their schedules, its stream injectors, the providers and MCP servers connected to it with their state, tool calls waiting for the user's approval, and pending pairing requests. Takes no arguments.".into(),
        parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}).into(),
        timeout: None,
        ..Default::default()
    }
}

/// Both tools' declarations.
pub(crate) fn all() -> Vec<ToolDef> {
    vec![query_records(), get_session_state()]
}

//! The gateway's own tools, listed to MCP clients beside the providers': an MCP client
//! that cannot read resources (most cannot yet) still gets the session's stream history.
//! Names start with `tap_`; a provider tool of the same name is shadowed (and logged).

use super::binding::Binding;
use crate::state::Core;
use serde_json::json;
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::{ErrorCode, Json};

pub(crate) const STREAM_HISTORY: &str = "tap_stream_history";
pub(crate) const STATUS: &str = "tap_status";

/// `(name, description, parameters)` of each built-in tool.
pub(crate) fn definitions() -> Vec<(&'static str, &'static str, Json)> {
    vec![
        (
            STREAM_HISTORY,
            "Recent events of this session's EventStreams (newest first), as providers pushed them.",
            json!({
                "type": "object",
                "properties": {
                    "stream": {
                        "type": "string",
                        "description": "A stream name, or 'stream@provider'; all streams when absent."
                    },
                    "last": {
                        "type": "integer", "minimum": 1, "maximum": STREAM_RETENTION,
                        "description": "Events per stream (default 20)."
                    }
                },
                "additionalProperties": false
            }),
        ),
        (
            STATUS,
            "The Tap gateway's sessions and connected providers.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
    ]
}

pub(crate) fn is_builtin(name: &str) -> bool {
    name == STREAM_HISTORY || name == STATUS
}

/// Runs a built-in tool. Arguments were checked against its schema already.
pub(crate) fn call(
    core: &Core,
    binding: &Binding,
    name: &str,
    args: &Json,
) -> Result<Json, (ErrorCode, String)> {
    match name {
        STREAM_HISTORY => {
            let last = args
                .get("last")
                .and_then(Json::as_u64)
                .map_or(20, |n| n as usize)
                .clamp(1, STREAM_RETENTION);
            let select = args.get("stream").and_then(Json::as_str);
            let streams = core.streams.history(&binding.session_id, select, last);
            Ok(json!({ "sessionId": binding.session_id, "streams": streams }))
        }
        STATUS => serde_json::to_value(crate::status::snapshot(core))
            .map_err(|e| (ErrorCode::Internal, e.to_string())),
        other => Err((
            ErrorCode::NotFound,
            format!("No built-in tool named '{other}'"),
        )),
    }
}

/// Checks a built-in tool's arguments against its schema, as provider tools' arguments
/// are checked before dispatch (same messages). Compiled per call: these calls are rare.
pub(crate) fn check_args(name: &str, args: &Json) -> Result<(), (ErrorCode, String)> {
    let Some((.., schema)) = definitions().into_iter().find(|(n, ..)| *n == name) else {
        return Ok(());
    };
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| (ErrorCode::Internal, format!("built-in schema: {e}")))?;
    crate::tools::schema::check(name, &Some(std::sync::Arc::new(validator)), args)
}

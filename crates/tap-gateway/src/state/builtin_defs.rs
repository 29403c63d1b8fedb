//! The built-in tools' declarations: names, descriptions for the model, and the JSON
//! Schemas their arguments are checked against (as a provider tool's are).
//!
//! Names and argument names are the reference extension's (`channel`, `limit`, `scope`,
//! `managedBy`…), so prompts written for it keep working; this gateway's own names
//! (`stream`, `last`, `lifespan`, `ownership`) are accepted beside them.

use super::tool_schema::ToolList;
use crate::limits::{MAX_EMITTER_NAME_LEN, MAX_EMITTER_RULES, MAX_POST_BYTES, MAX_STREAM_ARG_LEN};
use serde_json::json;
use std::sync::OnceLock;
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::provider::ToolDef;
use tap_protocol::Json;

pub(crate) const LIST_STREAMS: &str = "tap_list_streams";
pub(crate) const POST: &str = "tap_post";
pub(crate) const STREAM_HISTORY: &str = "tap_stream_history";
pub(crate) const ENABLE_INJECTOR: &str = "tap_enable_injector";
pub(crate) const DISABLE_INJECTOR: &str = "tap_disable_injector";
pub(crate) const LIST_EMITTERS: &str = "tap_list_emitters";
pub(crate) const START_EMITTER: &str = "tap_start_emitter";
pub(crate) const SET_EVENT_FILTER: &str = "tap_set_event_filter";
pub(crate) const STOP_EMITTER: &str = "tap_stop_emitter";
pub(crate) const STATUS: &str = "tap_status";

fn stream_arg(what: &str) -> Json {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_STREAM_ARG_LEN, "description": what})
}

fn lifespan_arg() -> Json {
    json!({"type": "string", "enum": ["temporary", "persistent"],
           "description": "'temporary' (this session, the default) or 'persistent' (also written to the project's tap.config.json)."})
}

fn ownership_arg() -> Json {
    json!({"type": "string", "enum": ["userOwned", "modelOwned"],
           "description": "Who manages it: 'modelOwned' (the default) or 'userOwned' (then only the user, or a call with force, may change it)."})
}

fn force_arg(what: &str) -> Json {
    json!({"type": "boolean",
           "description": format!("Needed to change a user-owned {what}.")})
}

fn delivery_arg() -> Json {
    json!({"type": "string", "enum": ["surface", "important", "inject", "all", "keep", "drop"],
           "description": "What reaches the session: 'surface' (the default: surface outcomes are shown, inject outcomes start a turn), 'important'/'inject' (only inject outcomes), 'all' (every kept line is shown, inject outcomes start a turn), 'keep'/'drop' (stored only)."})
}

fn event_filter_arg() -> Json {
    let rule = json!({
        "type": "object",
        "properties": {
            "match": {"type": "string", "description": "A regex (case-insensitive, unanchored)."},
            "outcome": {"type": "string", "enum": ["drop", "keep", "surface", "inject"]}
        },
        "required": ["match", "outcome"],
        "additionalProperties": false
    });
    json!({
        "description": "Ordered rules; the first whose regex matches a line decides its outcome; no match keeps the line. A list of rules, or {\"rules\": [...]}.",
        "anyOf": [
            {"type": "array", "items": rule, "maxItems": MAX_EMITTER_RULES},
            {"type": "object", "properties": {"rules": {"type": "array", "items": rule, "maxItems": MAX_EMITTER_RULES}},
             "required": ["rules"]}
        ]
    })
}

/// `tap_enable_injector`'s and `tap_disable_injector`'s arguments (only enabling takes a
/// delivery and a description).
fn injector_args(enable: bool) -> Json {
    let mut p = json!({
        "channel": stream_arg("EventStream name."),
        "stream": stream_arg("Same as channel."),
        "scope": lifespan_arg(),
        "lifespan": lifespan_arg(),
        "managedBy": ownership_arg(),
        "ownership": ownership_arg(),
        "force": force_arg("session injector")
    });
    if enable {
        p["delivery"] = delivery_arg();
        p["description"] = json!({"type": "string", "maxLength": 500, "description": "Optional description of the stream."});
    }
    object(p, &[])
}

fn object(properties: Json, required: &[&str]) -> Json {
    json!({"type": "object", "properties": properties, "required": required})
}

/// Every built-in tool, sorted by name.
pub(crate) fn all() -> Vec<ToolDef> {
    let def = |name: &str, description: &str, parameters: Json| ToolDef {
        name: name.to_string(),
        description: description.to_string(),
        parameters: parameters.into(),
        timeout: None,
        ..Default::default()
    };
    let mut defs = vec![
        def(
            LIST_STREAMS,
            "Lists this session's EventStreams (providers' and emitters'), with how many events each holds, the newest one's time, and each emitter stream's session injector.",
            object(json!({}), &[]),
        ),
        def(
            POST,
            "Posts a note into an EventStream of this session (created if new) for later retrieval with tap_stream_history.",
            object(
                json!({
                    "channel": stream_arg("EventStream name."),
                    "stream": stream_arg("Same as channel."),
                    "message": {"type": "string", "minLength": 1, "maxLength": MAX_POST_BYTES, "description": "Text to append."},
                    "source": {"type": "string", "maxLength": 100, "description": "Optional source label (default 'tool')."},
                    "description": {"type": "string", "maxLength": 500, "description": "Optional description of the stream."}
                }),
                &["message"],
            ),
        ),
        def(
            STREAM_HISTORY,
            "Recent events of this session's EventStreams, newest first: one stream ('name', or 'name@provider'), or all when absent.",
            object(
                json!({
                    "channel": stream_arg("EventStream name, or 'name@provider'."),
                    "stream": stream_arg("Same as channel."),
                    "limit": {"type": "integer", "minimum": 1, "maximum": STREAM_RETENTION, "description": "Events per stream (default 20)."},
                    "last": {"type": "integer", "minimum": 1, "maximum": STREAM_RETENTION, "description": "Same as limit."}
                }),
                &[],
            ),
        ),
        def(
            ENABLE_INJECTOR,
            "Turns on the session injector of an emitter EventStream: its lines reach this session as the delivery mode says.",
            injector_args(true),
        ),
        def(
            DISABLE_INJECTOR,
            "Turns off the session injector of an emitter EventStream: its lines are still kept, none reaches the session.",
            injector_args(false),
        ),
        def(
            LIST_EMITTERS,
            "Lists this session's emitters (background commands and scheduled prompts): status, schedule, stream, line counts, next run, last error.",
            object(json!({}), &[]),
        ),
        def(
            START_EMITTER,
            "Starts an emitter in this session. 'command': a shell command whose output lines go through the event filter into a stream (runs continuously, or again 'every' interval). 'prompt': a prompt sent to you as a new turn (once, 'every' interval, or every time the session is 'idle'). Replaces a running emitter of the same name.",
            object(
                json!({
                    "name": {"type": "string", "minLength": 1, "maxLength": MAX_EMITTER_NAME_LEN, "description": "Unique emitter name."},
                    "command": {"type": "string", "description": "Shell command (bash -lc) in the session's workspace."},
                    "prompt": {"type": "string", "description": "Prompt to send as a new turn."},
                    "description": {"type": "string", "maxLength": 500, "description": "Short summary."},
                    "channel": stream_arg("EventStream for its lines (default: its name)."),
                    "stream": stream_arg("Same as channel."),
                    "cwd": {"type": "string", "description": "Working directory relative to the session's; it may not leave the workspace."},
                    "every": {"type": "string", "description": "Repeat interval: 30s, 5m, 2h, 1d; 'idle' for prompts that run whenever the session goes idle. Absent: commands run continuously, prompts once."},
                    "maxRuns": {"type": "integer", "minimum": 1, "description": "Runs before it completes."},
                    "restart": {"type": "string", "enum": ["never", "on-failure"], "description": "'on-failure' restarts a continuous command that fails, with backoff."},
                    "includeStderr": {"type": "boolean", "description": "Route stderr lines too (source 'emitter:stderr')."},
                    "eventFilter": event_filter_arg(),
                    "delivery": delivery_arg(),
                    "scope": lifespan_arg(),
                    "lifespan": lifespan_arg(),
                    "managedBy": ownership_arg(),
                    "ownership": ownership_arg(),
                    "autoStart": {"type": "boolean", "description": "When persistent: start it when a session opens in this project (default true)."},
                    "force": force_arg("emitter")
                }),
                &["name"],
            ),
        ),
        def(
            SET_EVENT_FILTER,
            "Replaces the event filter of a running emitter: the next line it reads goes through the new rules (a running command is not restarted).",
            object(
                json!({
                    "name": {"type": "string", "minLength": 1, "description": "Emitter name."},
                    "eventFilter": event_filter_arg(),
                    "scope": lifespan_arg(),
                    "lifespan": lifespan_arg(),
                    "force": force_arg("emitter")
                }),
                &["name", "eventFilter"],
            ),
        ),
        def(
            STOP_EMITTER,
            "Stops an emitter (its whole process group). With lifespan 'persistent' its definition is also removed from tap.config.json.",
            object(
                json!({
                    "name": {"type": "string", "minLength": 1, "description": "Emitter name."},
                    "scope": lifespan_arg(),
                    "lifespan": lifespan_arg(),
                    "force": force_arg("emitter")
                }),
                &["name"],
            ),
        ),
        def(
            STATUS,
            "The Tap gateway's sessions and connected providers.",
            object(json!({}), &[]),
        ),
    ];
    defs.extend(super::goal_defs::all());
    defs.extend(super::record_defs::all());
    defs.extend(super::mode_defs::all());
    defs.sort_by(|a, b| a.name.cmp(&b.name));
    defs
}

/// The provider name the built-in tools are listed under.
pub(crate) const PROVIDER: &str = "tap";

/// The built-in tools with their compiled schemas, built once.
pub(crate) fn tools() -> &'static ToolList {
    static TOOLS: OnceLock<ToolList> = OnceLock::new();
    TOOLS.get_or_init(|| ToolList::build(all(), &[]).expect("the built-in schemas compile"))
}

//! The goal evidence tools' declarations (`docs/emitters.md`, "Goals"):
//! `tap_verify_goal_output` and `tap_audit_claims`, answered by `crate::builtin::goal_tools`.
//! They are built-in tools of every session, listed with [`super::builtin_defs`]'s.
//!
//! Both take the same evidence items, so what a goal expects and what a claim cites are
//! written alike; every string and list is bounded here by its schema (the handler bounds
//! what a schema cannot: all patterns of a call together, the evidence of all claims).

use crate::limits::{
    MAX_GOAL_CHECKS, MAX_GOAL_CLAIMS, MAX_GOAL_OUTPUT_LEN, MAX_GOAL_PATH_LEN,
    MAX_GOAL_STREAM_EVENTS, MAX_GOAL_TEXT_LEN, MAX_STREAM_ARG_LEN,
};
use serde_json::json;
use tap_protocol::limits::MAX_HOOK_PATTERN_BYTES;
use tap_protocol::provider::ToolDef;
use tap_protocol::Json;

pub(crate) const VERIFY_GOAL_OUTPUT: &str = "tap_verify_goal_output";
pub(crate) const AUDIT_CLAIMS: &str = "tap_audit_claims";

/// The stream both tools record their results in (`goals@emitters`).
pub(crate) const GOALS_STREAM: &str = "goals";

fn text(max: usize, description: &str) -> Json {
    json!({"type": "string", "maxLength": max, "description": description})
}

/// One evidence item: a file of the workspace, a stream of the session, or a command's
/// output as the caller saw it.
fn evidence() -> Json {
    let pattern = json!({"type": "string", "minLength": 1, "maxLength": MAX_HOOK_PATTERN_BYTES,
        "description": "A regex (Rust syntax: unanchored, case-sensitive, (?i) for case-insensitive; no lookaround or backreferences) to find: in the file's text, in one event of the stream, or in the command's output."});
    json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["file", "stream", "command"],
                     "description": "'file': a file of the session's workspace; 'stream': events of one of this session's EventStreams; 'command': output of a command YOU ran (it is never run here)."},
            "id": text(MAX_GOAL_TEXT_LEN, "Your label for this item, repeated in its result."),
            "path": {"type": "string", "minLength": 1, "maxLength": MAX_GOAL_PATH_LEN,
                     "description": "file: its path, relative to the session's working directory (absolute is fine inside it). Paths that leave the workspace, through '..' or a symlink, are refused."},
            "exists": {"type": "boolean", "description": "file: false when the file must NOT exist (default true: it must exist)."},
            "pattern": pattern,
            "absent": {"type": "boolean", "description": "true: the pattern must NOT be found (file, stream or output)."},
            "json": {
                "type": "object",
                "description": "file: it must parse as JSON with a value at 'pointer' (RFC 6901, e.g. '/status' or '/items/0/name'); with 'equals' that value must equal it; with 'pattern' its text must match (a string as it is, anything else as compact JSON).",
                "properties": {
                    "pointer": {"type": "string", "maxLength": MAX_GOAL_PATH_LEN, "description": "JSON pointer; \"\" is the whole document."},
                    "equals": {"description": "The value expected there (any JSON)."},
                    "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_HOOK_PATTERN_BYTES, "description": "A regex the value's text must match."}
                },
                "required": ["pointer"],
                "additionalProperties": false
            },
            "stream": {"type": "string", "minLength": 1, "maxLength": MAX_STREAM_ARG_LEN,
                       "description": "stream: its name ('ci', or 'ci@provider'), as tap_list_streams shows. Every event it holds is searched (the history database too), newest first."},
            "minCount": {"type": "integer", "minimum": 1, "maximum": MAX_GOAL_STREAM_EVENTS,
                         "description": "stream: events that must match 'pattern' (default 1; without a pattern, events it must hold)."},
            "command": text(MAX_GOAL_TEXT_LEN, "command: the command line you ran, for the record."),
            "output": {"type": "string", "maxLength": MAX_GOAL_OUTPUT_LEN, "description": "command: its output as you saw it (stdout and stderr), checked against 'pattern'."},
            "exitCode": {"type": "integer", "description": "command: the exit code you saw."},
            "expectExitCode": {"type": "integer", "description": "command: the exit code it must have had (needs 'exitCode')."}
        },
        "required": ["kind"],
        "additionalProperties": false
    })
}

/// The two tools.
pub(crate) fn all() -> Vec<ToolDef> {
    let def = |name: &str, description: &str, parameters: Json| ToolDef {
        name: name.to_string(),
        description: description.to_string(),
        parameters: parameters.into(),
        ..Default::default()
    };
    vec![
        def(
            VERIFY_GOAL_OUTPUT,
            "Checks a goal's expected outputs against evidence before you call the goal done: files of the workspace exist (or not), contain a pattern, or parse as JSON with a value at a pointer; this session's EventStreams hold matching events; output of a command you ran matches (pass the output: nothing is run here). Returns each expectation 'verified' or 'failed' with the reason, and 'met' when all are verified. Results are also recorded in the session's 'goals' stream.",
            json!({
                "type": "object",
                "properties": {
                    "goal": text(MAX_GOAL_TEXT_LEN, "The goal, in a sentence."),
                    "expectations": {"type": "array", "minItems": 1, "maxItems": MAX_GOAL_CHECKS,
                                     "items": evidence(), "description": "What must hold for the goal to be met."}
                },
                "required": ["expectations"],
                "additionalProperties": false
            }),
        ),
        def(
            AUDIT_CLAIMS,
            "Audits claims (yours or another agent's, e.g. 'the tests pass', 'report.json has status ok') against the evidence each cites: files of the workspace, this session's EventStreams, output of a command you ran (nothing is run here). Each claim comes back 'verified' (all its evidence holds), 'contradicted' (some evidence says otherwise) or 'unverified' (no evidence, or it could not be checked), with the reason. Results are also recorded in the session's 'goals' stream.",
            json!({
                "type": "object",
                "properties": {
                    "claims": {
                        "type": "array", "minItems": 1, "maxItems": MAX_GOAL_CLAIMS,
                        "items": {
                            "type": "object",
                            "properties": {
                                "claim": {"type": "string", "minLength": 1, "maxLength": MAX_GOAL_TEXT_LEN, "description": "The claim, in a sentence."},
                                "evidence": {"type": "array", "maxItems": MAX_GOAL_CHECKS, "items": evidence(),
                                             "description": "What it rests on (a claim citing nothing is unverified)."}
                            },
                            "required": ["claim"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["claims"],
                "additionalProperties": false
            }),
        ),
    ]
}

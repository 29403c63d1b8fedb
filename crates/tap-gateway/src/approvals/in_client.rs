//! Asking for an approval in the MCP client that made the call (`docs/approvals.md`,
//! "Answering in the client"): the `elicitation/create` form the gateway sends it, and what
//! its answer means. Only for sessions whose profile says `approvalsInClient` and a client
//! that declared elicitation; the tray, panel and CLI can answer the same call meanwhile,
//! and whoever answers first decides (`waiting.rs`).
//!
//! The form shows the tool, its provider and a short summary of the arguments, masked as
//! the panel masks them (both from `tap_protocol::masking`): the client shows it in its
//! own window, and the model's context may hold it too.

use crate::limits::{MAX_APPROVAL_PROMPT_CHARS, MAX_CLIENT_PROMPT_ARGS_CHARS};
use regex::Regex;
use serde_json::{json, Value};
use std::sync::LazyLock;
use std::time::Duration;
use tap_protocol::approvals::{AnswerScope, WaitingCall};
use tap_protocol::masking;
use tap_protocol::Json;

/// The form's one field.
pub(crate) const FIELD: &str = "answer";

/// The choices, as the form's `oneOf`, a host's `approval.ask` `choices`, and as read back:
/// (value, title).
pub(crate) const CHOICES: [(&str, &str); 5] = [
    ("once", "Approve once"),
    ("session", "Approve for this session"),
    ("hour", "Approve for 1 hour"),
    ("always", "Always approve this tool"),
    ("deny", "Deny"),
];

/// [`masking::SECRET_KEY`], compiled.
static SECRET_KEY: LazyLock<Regex> = LazyLock::new(|| {
    regex::RegexBuilder::new(masking::SECRET_KEY)
        .case_insensitive(true)
        .build()
        .expect("valid")
});

/// Every one of [`masking::SECRET_SHAPES`] in one pattern.
static SECRET_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    let alternatives: Vec<String> = masking::SECRET_SHAPES
        .iter()
        .map(|s| {
            let flags = if s.ignore_case { "i" } else { "" };
            format!("(?{flags}:{})", s.pattern)
        })
        .collect();
    Regex::new(&alternatives.join("|")).expect("valid")
});

fn masked(value: &Value) -> Value {
    let len = match value {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    };
    Value::String(masking::mask_text(len))
}

/// `args` with secret-looking values masked: by key (a number or a flag under such a key
/// is a count or a switch, kept) and by shape.
fn mask(args: &Value, secret: bool) -> Value {
    match args {
        Value::Null | Value::Bool(_) | Value::Number(_) => args.clone(),
        Value::String(s) if s.is_empty() => args.clone(),
        _ if secret => masked(args),
        Value::String(s) if SECRET_VALUE.is_match(s) => masked(args),
        Value::String(_) => args.clone(),
        Value::Array(items) => Value::Array(items.iter().map(|v| mask(v, false)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        mask(v, SECRET_KEY.is_match(&masking::key_for_matching(k))),
                    )
                })
                .collect(),
        ),
    }
}

/// The arguments as the form shows them: compact JSON, masked, cut at
/// [`MAX_CLIENT_PROMPT_ARGS_CHARS`] characters (the panel shows them all).
pub(crate) fn summary(args: &Json) -> String {
    let text = mask(args, false).to_string();
    match text.char_indices().nth(MAX_CLIENT_PROMPT_ARGS_CHARS) {
        Some((cut, _)) => format!(
            "{}… ({} more characters: the Tap panel shows them all)",
            &text[..cut],
            text[cut..].chars().count()
        ),
        None => text,
    }
}

/// What the user reads about waiting call `call` (its `id` set), in the MCP client's form
/// and in a session host's dialog (`in_host.rs`) alike: the tool, its provider, the
/// arguments' [`summary`], why it was asked, who else can answer and when it is denied;
/// cut at [`MAX_APPROVAL_PROMPT_CHARS`] (a rule's reason is the user's own text, unbounded).
pub(crate) fn prompt_text(call: &WaitingCall, timeout: Duration) -> String {
    let mut message = format!(
        "Tap: approve the call to '{}' of {}?\nArguments: {}\n",
        call.tool,
        call.provider,
        summary(&call.args)
    );
    if let Some(r) = &call.reason {
        message.push_str(&format!("Why asked: {r}\n"));
    }
    message.push_str(&format!(
        "Approval {}: the Tap tray, panel or `tap approvals approve {}` can answer it too. Denied if nobody answers within {} s.",
        call.id,
        call.id,
        timeout.as_secs()
    ));
    crate::text::cut(&message, MAX_APPROVAL_PROMPT_CHARS)
}

/// The `elicitation/create` params for waiting call `call` (its `id` set).
pub(crate) fn form(call: &WaitingCall, timeout: Duration) -> Json {
    let message = prompt_text(call, timeout);
    let choices: Vec<Value> = CHOICES
        .iter()
        .map(|(v, t)| json!({"const": v, "title": t}))
        .collect();
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                FIELD: {
                    "type": "string",
                    "title": "Your answer",
                    "oneOf": choices,
                    "default": "once",
                }
            },
            "required": [FIELD],
        },
    })
}

/// What the client's answer means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClientAnswer {
    /// Approved for this scope (`minutes` with [`AnswerScope::Minutes`]).
    Approve(AnswerScope, Option<u64>),
    /// Declined, or `deny` chosen.
    Deny,
    /// No answer (dismissed, an error, no reply in time, an answer not on the form): the
    /// call keeps waiting for the tray, panel or CLI. Why, in words.
    Left(String),
}

/// What choosing [`CHOICES`] value `value` means (`None`: not one of them).
pub(crate) fn chosen(value: &str) -> Option<ClientAnswer> {
    Some(match value {
        "once" => ClientAnswer::Approve(AnswerScope::Call, None),
        "session" => ClientAnswer::Approve(AnswerScope::Session, None),
        "hour" => ClientAnswer::Approve(AnswerScope::Minutes, Some(60)),
        "always" => ClientAnswer::Approve(AnswerScope::Always, None),
        "deny" => ClientAnswer::Deny,
        _ => return None,
    })
}

/// Reads the client's `elicitation/create` result (or why there is none).
pub(crate) fn read(result: Result<Json, String>) -> ClientAnswer {
    let result = match result {
        Ok(r) => r,
        Err(why) => return ClientAnswer::Left(format!("the client's prompt failed: {why}")),
    };
    match result.get("action").and_then(Value::as_str) {
        Some("decline") => ClientAnswer::Deny,
        Some("cancel") => ClientAnswer::Left("the client's prompt was dismissed".into()),
        Some("accept") => result
            .get("content")
            .and_then(|c| c.get(FIELD))
            .and_then(Value::as_str)
            .and_then(chosen)
            .unwrap_or_else(|| {
                ClientAnswer::Left("the client's answer is not one of the form's".into())
            }),
        _ => ClientAnswer::Left("the client answered something else".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_by_key_and_by_shape_and_long_arguments_cut() {
        let args = json!({
            "path": "/tmp/x",
            "api_key": "abc",
            "max_tokens": 5,
            "headers": {"Authorization": "Bearer abcdefghijkl"},
            "note": "use ghp_abcdefghijklmnopqrstuvwxyz please",
            "list": ["sk-abcdefghijklmnopqrstuvwxyz", "plain"],
            // Keys are read with their punctuation as `_`, as the panel reads them.
            "X-Api-Key": "k3y-value",
            "auth header": "h3ader-value",
        });
        let s = summary(&args);
        assert!(s.contains("/tmp/x") && s.contains("plain"), "{s}");
        assert!(s.contains("\"max_tokens\":5"), "{s}");
        for secret in [
            "abc\"",
            "abcdefghijkl",
            "ghp_",
            "sk-abc",
            "k3y-value",
            "h3ader-value",
        ] {
            assert!(!s.contains(secret), "{secret} in {s}");
        }
        assert_eq!(s.matches("masked").count(), 6, "{s}");
        let long = summary(&json!({"body": "x".repeat(1000)}));
        assert!(
            long.chars().count() < MAX_CLIENT_PROMPT_ARGS_CHARS + 80,
            "{long}"
        );
        assert!(long.contains("more characters"), "{long}");
    }

    #[test]
    fn answers_mean_what_the_form_says() {
        let accept = |a: &str| Ok(json!({"action": "accept", "content": {FIELD: a}}));
        assert_eq!(
            read(accept("once")),
            ClientAnswer::Approve(AnswerScope::Call, None)
        );
        assert_eq!(
            read(accept("hour")),
            ClientAnswer::Approve(AnswerScope::Minutes, Some(60))
        );
        assert_eq!(read(accept("deny")), ClientAnswer::Deny);
        assert_eq!(read(Ok(json!({"action": "decline"}))), ClientAnswer::Deny);
        for left in [
            read(accept("all")),
            read(Ok(json!({"action": "cancel"}))),
            read(Err("no".into())),
        ] {
            assert!(matches!(left, ClientAnswer::Left(_)), "{left:?}");
        }
    }
}

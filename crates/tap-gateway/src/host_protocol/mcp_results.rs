//! What a session host gets for a tool whose results are MCP results (an MCP server's:
//! `resultFormat: "mcp"`). Hosts take a value or an error, not content blocks, so:
//! - a result that is all text (no `structuredContent`) is its text, blocks joined by a
//!   newline: what a TAP provider's string result would be;
//! - `isError: true` is a failure (`TOOL_ERROR`) whose message is that text;
//! - anything else (images, audio, resources, structured content) stays the MCP result
//!   object, for the host to read as JSON.

use crate::request::CallError;
use tap_protocol::{ErrorCode, Json};

/// Whether `tool` of `session` answers MCP results.
pub(super) fn is_mcp(core: &crate::state::Core, session: &str, tool: &str) -> bool {
    let state = core.state();
    state
        .sessions
        .get(session)
        .and_then(|s| s.tools.get(tool))
        .is_some_and(|e| e.def.result_format == Some(tap_protocol::provider::ResultFormat::Mcp))
}

/// `outcome` as a host receives it.
pub(super) fn for_host(outcome: Result<Json, CallError>) -> Result<Json, CallError> {
    let data = outcome?;
    let Some(blocks) = data.get("content").and_then(Json::as_array) else {
        return Ok(data);
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Json::as_str) {
            Some("text") => b.get("text").and_then(Json::as_str),
            _ => None,
        })
        .collect();
    let is_error = crate::tools::traced::reported_failure(&data);
    let structured = data.get("structuredContent").is_some_and(|s| !s.is_null());
    match texts {
        Some(texts) if is_error => Err(CallError::new(
            ErrorCode::Other(crate::tools::traced::TOOL_ERROR.into()),
            texts.join("\n"),
        )),
        Some(texts) if !structured => Ok(Json::String(texts.join("\n"))),
        _ => Ok(data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_becomes_a_value_an_error_a_failure_and_the_rest_stays() {
        let text =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(for_host(Ok(text)).unwrap(), json!("a\nb"));
        let failed = json!({"content": [{"type": "text", "text": "it failed"}], "isError": true});
        let e = for_host(Ok(failed)).unwrap_err();
        assert_eq!(
            (e.code.to_string().as_str(), e.message.as_str()),
            ("TOOL_ERROR", "it failed")
        );
        let image =
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        assert_eq!(for_host(Ok(image.clone())).unwrap(), image);
        let structured =
            json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"n": 1}});
        assert_eq!(for_host(Ok(structured.clone())).unwrap(), structured);
    }
}

//! Each EventStream of the session is an MCP resource, `tap://streams/<provider>/<stream>`,
//! whose text is its recent events as JSON lines, oldest first.

use crate::state::mcp_binding::{split_key, stream_uri, Binding};
use crate::state::Core;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use rmcp::ErrorData as McpError;
use tap_protocol::limits::STREAM_RETENTION;

/// What the events of a stream resource are written as.
const STREAM_MIME: &str = "application/jsonl";

pub(crate) fn list(core: &Core, binding: &Binding) -> Vec<Resource> {
    core.streams
        .history(&binding.session_id, None, 1)
        .keys()
        .map(|key| {
            let (provider, stream) = split_key(key);
            Resource::new(stream_uri(provider, stream), key.clone())
                .with_description(format!("EventStream '{stream}' of provider '{provider}'"))
                .with_mime_type(STREAM_MIME)
        })
        .collect()
}

/// `stream@provider` of a stream URI, when it names one of the session's streams.
pub(crate) fn check_uri(core: &Core, binding: &Binding, uri: &str) -> Result<String, McpError> {
    let key = uri
        .strip_prefix("tap://streams/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(provider, stream)| format!("{stream}@{provider}"));
    match key {
        Some(key)
            if core
                .streams
                .history(&binding.session_id, Some(&key), 1)
                .contains_key(&key) =>
        {
            Ok(key)
        }
        _ => Err(McpError::resource_not_found(
            format!(
                "No stream resource '{uri}' in session '{}'",
                binding.session_id
            ),
            None,
        )),
    }
}

pub(crate) fn read(
    core: &Core,
    binding: &Binding,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let key = check_uri(core, binding, uri)?;
    let history = core
        .streams
        .history(&binding.session_id, Some(&key), STREAM_RETENTION);
    let mut text = String::new();
    for entry in history.get(&key).into_iter().flatten().rev() {
        if let Ok(line) = serde_json::to_string(entry) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    Ok(ReadResourceResult::new(vec![ResourceContents::text(
        text, uri,
    )
    .with_mime_type(STREAM_MIME)]))
}

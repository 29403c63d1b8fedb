//! A call's outcome as MCP content: the provider's data as text (a string as itself,
//! anything else as JSON, an object also as `structuredContent`), a file result as a
//! resource link to the gateway's copy (and the file embedded when small), a failure as an
//! `isError` result whose text starts with the error code.

use crate::limits::MAX_EMBEDDED_FILE_BYTES;
use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use tap_protocol::Json;

pub(crate) fn success(data: Json, context: Option<String>) -> CallToolResult {
    let mut blocks = match file_of(&data) {
        Some(file) => file_blocks(file),
        None => vec![ContentBlock::text(match &data {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        })],
    };
    if let Some(c) = context {
        blocks.push(ContentBlock::text(format!("Context from hook rules: {c}")));
    }
    let mut result = CallToolResult::success(blocks);
    if data.is_object() && file_of(&data).is_none() {
        result.structured_content = Some(data);
    }
    result
}

/// The result of a tool whose provider answers MCP results (an MCP server's): unchanged,
/// every content block, `structuredContent` and `isError` as the server sent them; hook
/// context is added as one more text block. Data that is not an MCP result (a transform
/// rewrote it) is shown as any provider's.
pub(crate) fn passed_through(data: Json, context: Option<String>) -> CallToolResult {
    match serde_json::from_value::<CallToolResult>(data.clone()) {
        Ok(mut result) => {
            if let Some(c) = context {
                result
                    .content
                    .push(ContentBlock::text(format!("Context from hook rules: {c}")));
            }
            result
        }
        Err(_) => success(data, context),
    }
}

pub(crate) fn failure(code: &str, message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))])
}

/// The `file` of a file result (`{"file": {"path", "mimeType", "size", "expiresAt"}}`).
fn file_of(data: &Json) -> Option<&serde_json::Map<String, Json>> {
    let obj = data.as_object()?;
    if obj.len() != 1 {
        return None;
    }
    let file = obj.get("file")?.as_object()?;
    file.get("path")?.as_str()?;
    Some(file)
}

fn file_blocks(file: &serde_json::Map<String, Json>) -> Vec<ContentBlock> {
    let path = file.get("path").and_then(Json::as_str).unwrap_or_default();
    let mime = file
        .get("mimeType")
        .and_then(Json::as_str)
        .unwrap_or("application/octet-stream");
    let size = file.get("size").and_then(Json::as_u64);
    let uri = format!("file://{path}");
    let name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    let mut link = Resource::new(uri.clone(), name).with_mime_type(mime);
    if let Some(size) = size {
        link = link.with_size(size);
    }
    let mut blocks = vec![ContentBlock::resource_link(link)];
    if size.is_some_and(|s| s <= MAX_EMBEDDED_FILE_BYTES) {
        if let Ok(bytes) = std::fs::read(path) {
            let contents = match String::from_utf8(bytes) {
                Ok(text) => ResourceContents::text(text, uri),
                Err(e) => {
                    use base64::Engine;
                    let b64 = base64::engine::general_purpose::STANDARD.encode(e.into_bytes());
                    ResourceContents::blob(b64, uri)
                }
            };
            blocks.push(ContentBlock::resource(contents.with_mime_type(mime)));
        }
    }
    blocks
}

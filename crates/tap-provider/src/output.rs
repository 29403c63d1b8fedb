//! What a handler returns: any serializable value (the result's `data`), or a file it
//! wrote into the provider's `persistDir` (the result's `file`, for answers over the 5 MB a
//! `tool.result` may carry: screenshots, archives).

use crate::errors::ToolError;
use serde::Serialize;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tap_protocol::limits::{MAX_FILE_RESULT_TTL_SECS, MAX_TOOL_RESULT_BYTES};
use tap_protocol::provider::{FileRef, ToolResult};

/// How long the gateway may take to read a file result, unless [`FileResult::ttl`] says
/// otherwise (the spec's example: 300 s). The gateway copies the file at once.
pub const DEFAULT_FILE_TTL: Duration = Duration::from_secs(300);

/// A handler's answer: made from any `Serialize` value (`Ok("text")`, `Ok(json!(…))`,
/// `Ok(my_struct)`) or from a [`FileResult`].
pub struct Output(Inner);

enum Inner {
    Data(Json),
    File(FileRef),
    /// The value did not serialize to JSON: reported as `INTERNAL`.
    NotJson(String),
}

/// Any serializable value is the result's `data`. (`Output` is not `Serialize` itself, so
/// this does not overlap `From<T> for T`.)
impl<T: Serialize> From<T> for Output {
    fn from(value: T) -> Self {
        match serde_json::to_value(value) {
            Ok(v) => Output(Inner::Data(v)),
            Err(e) => Output(Inner::NotJson(e.to_string())),
        }
    }
}

impl From<FileResult> for Output {
    fn from(f: FileResult) -> Self {
        Output(Inner::File(FileRef {
            path: f.path.display().to_string(),
            mime_type: f.mime_type,
            size: f.size,
            ttl: f.ttl.as_secs().clamp(1, MAX_FILE_RESULT_TTL_SECS),
        }))
    }
}

impl Output {
    /// The `tool.result` for call `id`, refusing what the gateway would refuse: a value that
    /// is not JSON, or inline data over the 5 MB limit (with the way out in the message).
    pub(crate) fn into_result(self, id: String, tool: &str) -> Result<ToolResult, ToolError> {
        match self.0 {
            Inner::NotJson(why) => Err(ToolError::internal(format!(
                "Tool '{tool}' returned a value that is not JSON: {why}"
            ))),
            Inner::File(file) => Ok(ToolResult {
                id,
                file: Some(file),
                ..Default::default()
            }),
            Inner::Data(data) => {
                let size = json_len(&data);
                if size > MAX_TOOL_RESULT_BYTES {
                    return Err(ToolError::new(
                        "PAYLOAD_TOO_LARGE",
                        format!("Tool '{tool}' returned {size} bytes; results over {MAX_TOOL_RESULT_BYTES} must be file results (CallContext::write_file)"),
                    ));
                }
                Ok(ToolResult {
                    id,
                    data: Some(data),
                    ..Default::default()
                })
            }
        }
    }
}

/// The length of `v` as JSON text, without building the text.
fn json_len(v: &Json) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    serde_json::to_writer(&mut c, v).expect("a Value always serializes");
    c.0
}

/// A file answering a call: it must be inside the provider's `persistDir` (see
/// [`crate::CallContext::write_file`], which writes one there). The gateway copies it when
/// the result arrives; the caller gets `{"file": {"path", "mimeType", "size", "expiresAt"}}`
/// naming the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    path: PathBuf,
    mime_type: String,
    size: u64,
    ttl: Duration,
}

impl FileResult {
    /// The file at `path` (absolute, inside `persistDir`) as it is now, of type `mime_type`.
    pub fn new(path: impl Into<PathBuf>, mime_type: impl Into<String>) -> std::io::Result<Self> {
        let path = path.into();
        let size = std::fs::metadata(&path)?.len();
        Ok(Self {
            path,
            mime_type: mime_type.into(),
            size,
            ttl: DEFAULT_FILE_TTL,
        })
    }

    /// How long the file stays (1 s to 1 h; [`DEFAULT_FILE_TTL`] unless set): the gateway
    /// must have read it by then.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_become_data_and_files_become_file_refs() {
        let r = Output::from("hi").into_result("c1".into(), "t").unwrap();
        assert_eq!(r.data, Some(json!("hi")));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shot.png");
        std::fs::write(&path, b"12345").unwrap();
        let f = FileResult::new(&path, "image/png")
            .unwrap()
            .ttl(Duration::ZERO);
        let r = Output::from(f).into_result("c2".into(), "t").unwrap();
        let file = r.file.unwrap();
        assert_eq!(
            (file.size, file.ttl, file.mime_type.as_str()),
            (5, 1, "image/png")
        );
        assert!(r.data.is_none());
    }

    #[test]
    fn oversized_data_and_non_json_values_are_errors_not_results() {
        let big = "x".repeat(MAX_TOOL_RESULT_BYTES);
        let e = Output::from(big).into_result("c".into(), "t").unwrap_err();
        assert_eq!(e.code.as_str(), "PAYLOAD_TOO_LARGE");
        let mut odd = std::collections::HashMap::new();
        odd.insert(vec![1u8], 1);
        let e = Output::from(odd).into_result("c".into(), "t").unwrap_err();
        assert_eq!(e.code.as_str(), "INTERNAL");
    }
}

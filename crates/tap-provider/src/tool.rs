//! A tool: its definition, its compiled schema and its handler.

use crate::errors::{BadSchema, ToolError};
use crate::outbox::{Outbox, Outgoing};
use crate::output::{FileResult, Output};
use futures_util::future::BoxFuture;
use serde_json::Value as Json;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::provider::{ProviderMessage, ToolDef, ToolProgress};
use tokio_util::sync::CancellationToken;

/// What a handler gets besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// The call's id.
    pub call_id: String,
    /// The session it runs in.
    pub session_id: String,
    /// Cancelled when the caller cancels (`tool.cancel`) or the tool's timeout passes; a
    /// handler doing long work should watch it.
    pub cancelled: CancellationToken,
    /// Progress goes out through the connection's outbox, in order with the result.
    pub(crate) outbox: Outbox,
    pub(crate) generation: u64,
    pub(crate) persist_dir: Option<PathBuf>,
}

impl CallContext {
    /// Sends `tool.progress` with `message` (the agent may show it).
    pub fn progress(&self, message: impl Into<String>) {
        let _ = self.outbox.send(Outgoing {
            generation: self.generation,
            msg: ProviderMessage::ToolProgress(ToolProgress {
                id: self.call_id.clone(),
                message: message.into(),
            }),
        });
    }

    /// The provider's directory for state that outlives sessions (`hello.ack.persistDir`),
    /// where file results go; `None` for providers the gateway gives none (paired ones).
    pub fn persist_dir(&self) -> Option<&Path> {
        self.persist_dir.as_deref()
    }

    /// Writes `bytes` into a new file (mode 0600) in [`CallContext::persist_dir`] and
    /// returns it as this call's answer: `return Ok(ctx.write_file(png, "image/png").await?)`.
    /// `UNAUTHORIZED` when the provider has no `persistDir`.
    pub async fn write_file(
        &self,
        bytes: impl AsRef<[u8]>,
        mime_type: &str,
    ) -> Result<FileResult, ToolError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(dir) = self.persist_dir() else {
            return Err(ToolError::new(
                "UNAUTHORIZED",
                "File results need a persistDir (local providers); the gateway gave this provider none",
            ));
        };
        // The call id is unique per gateway, the counter per process: no two results share
        // a file, and no name leaves the directory.
        let id: String = (self.call_id.chars())
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("result-{id}-{n}"));
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&path).await?;
        tokio::io::AsyncWriteExt::write_all(&mut file, bytes.as_ref()).await?;
        tokio::io::AsyncWriteExt::flush(&mut file).await?;
        Ok(FileResult::new(path, mime_type)?)
    }
}

pub(crate) type Handler =
    Arc<dyn Fn(Json, CallContext) -> BoxFuture<'static, Result<Output, ToolError>> + Send + Sync>;

/// A tool definition with its handler.
#[derive(Clone)]
pub struct Tool {
    pub(crate) def: ToolDef,
    pub(crate) handler: Handler,
    pub(crate) schema: Option<Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.def.name)
            .finish()
    }
}

impl Tool {
    /// A tool named `name`, described for the model by `description`, taking arguments
    /// that match `parameters` (a JSON Schema object), answered by `handler` with any
    /// serializable value or a [`FileResult`].
    pub fn new<F, Fut, T>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Json,
        handler: F,
    ) -> Result<Self, BadSchema>
    where
        F: Fn(Json, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
        T: Into<Output>,
    {
        let name = name.into();
        let schema = match &parameters {
            Json::Object(o) if o.is_empty() => None,
            _ => Some(Arc::new(jsonschema::validator_for(&parameters).map_err(
                |e| BadSchema {
                    tool: name.clone(),
                    why: e.to_string(),
                },
            )?)),
        };
        Ok(Self {
            def: ToolDef {
                name,
                description: description.into(),
                parameters: parameters.into(),
                timeout: None,
                ..Default::default()
            },
            handler: Arc::new(move |args, ctx| {
                let answer = handler(args, ctx);
                Box::pin(async move { answer.await.map(Into::into) })
            }),
            schema,
        })
    }

    /// The gateway cancels a call of this tool after `timeout` (and so does the SDK).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.def.timeout = Some(timeout.as_millis() as u64);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// `INVALID_JSON` naming the first failing path when `args` do not match the schema.
    pub(crate) fn check(&self, args: &Json) -> Result<(), ToolError> {
        let Some(v) = &self.schema else { return Ok(()) };
        v.validate(args).map_err(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "/".to_string()
            } else {
                path
            };
            ToolError::new(
                "INVALID_JSON",
                format!(
                    "Invalid arguments for tool '{}' at '{at}': {e}",
                    self.def.name
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed() -> Tool {
        Tool::new(
            "add",
            "Adds",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
            |args, _| async move { Ok(args) },
        )
        .unwrap()
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let t = typed();
        assert!(t.check(&json!({"a": 1})).is_ok());
        let e = t.check(&json!({"a": "one"})).unwrap_err();
        assert_eq!(e.code.as_str(), "INVALID_JSON");
        assert!(e.message.contains("at '/a'"), "{e}");
        assert!(t
            .check(&json!({}))
            .unwrap_err()
            .message
            .contains("\"a\" is a required property"));
    }

    #[test]
    fn a_schema_that_does_not_compile_is_refused_at_once() {
        let e = Tool::new("t", "", json!({"type": 12}), |a, _| async move { Ok(a) }).unwrap_err();
        assert!(e.to_string().starts_with("tool 't'"), "{e}");
    }

    #[test]
    fn errors_keep_their_code_and_anything_else_is_internal() {
        assert_eq!(ToolError::new("NOT_FOUND", "x").code.as_str(), "NOT_FOUND");
        let io: ToolError = std::io::Error::other("disk full").into();
        assert_eq!(
            (io.code.as_str(), io.message.as_str()),
            ("INTERNAL", "disk full")
        );
    }
}

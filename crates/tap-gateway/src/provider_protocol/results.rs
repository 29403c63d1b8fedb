//! `tool.result`, and frames that cannot be read: the spec's malformed-result rule, so no
//! call stays pending forever because of a broken answer.

use super::ProviderConn;
use crate::diagnostics::Limit;
use crate::request::CallError;
use crate::socket::conn::Step;
use serde::Deserialize;
use tap_protocol::limits::{MAX_MESSAGE_BYTES, MAX_TOOL_RESULT_BYTES};
use tap_protocol::provider::ToolResult;
use tap_protocol::{DecodeError, ErrorCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::malformed";

impl ProviderConn {
    pub(super) fn on_tool_result(&self, r: ToolResult) {
        let outcome = if r.error.is_some() || r.error_code.is_some() {
            let code = r.error_code.unwrap_or(ErrorCode::Internal);
            let message = r.error.unwrap_or_else(|| code.to_string());
            let mut e = CallError::new(code, message);
            // The call path may then try another instance (multi-instance providers).
            e.retryable = r.retryable == Some(true);
            Err(e)
        } else if let Some(file) = r.file {
            return self.on_file_result(r.id, file);
        } else {
            Ok(r.data.unwrap_or(serde_json::Value::Null))
        };
        if !self.link.calls.complete(&r.id, outcome) {
            tracing::debug!(target: LOG_TARGET, provider = ?self.id, id = %r.id, "late or unknown tool.result ignored");
        }
    }

    /// Bad frames from an authenticated provider. Most get an error and nothing more; the
    /// ones that might have been a `tool.result` fall under the spec's malformed-result
    /// rule so no call can stay pending forever.
    pub(super) fn on_bad_frame(&self, bytes: &[u8], e: DecodeError) -> Step {
        match &e {
            DecodeError::UnknownType(_) => {
                self.error(e.code(), e.message(), e.type_name());
                Step::Continue
            }
            DecodeError::InvalidMessage { type_name, .. } if type_name != "tool.result" => {
                self.error(e.code(), e.message(), e.type_name());
                Step::Continue
            }
            DecodeError::InvalidMessage { .. } => {
                let id = peek(bytes)
                    .and_then(|p| p.id)
                    .and_then(|v| v.as_str().map(str::to_string));
                self.malformed_result(id, e.code(), e.message())
            }
            DecodeError::InvalidJson(_) => self.malformed_result(None, e.code(), e.message()),
        }
    }

    pub(super) fn oversized(&self, bytes: &[u8]) -> Step {
        self.core.diagnostics.limit_hit(Limit::PayloadSize);
        let message = format!(
            "Message is {} bytes; tool.result is limited to {MAX_TOOL_RESULT_BYTES} and other messages to {MAX_MESSAGE_BYTES}",
            bytes.len()
        );
        match peek(bytes) {
            Some(Peek {
                kind: Some(kind),
                id,
            }) if kind == "tool.result" => {
                let id = id.and_then(|v| v.as_str().map(str::to_string));
                self.malformed_result(id, ErrorCode::PayloadTooLarge, message)
            }
            Some(Peek {
                kind: Some(kind), ..
            }) => {
                self.error(ErrorCode::PayloadTooLarge, message, Some(&kind));
                Step::Continue
            }
            _ => self.malformed_result(None, ErrorCode::PayloadTooLarge, message),
        }
    }

    /// The spec's rule for a broken frame that may have been a result: if it names a
    /// pending call, that call fails; otherwise with one call pending that call fails, and
    /// with several the provider is disconnected and all of them fail `DISCONNECTED`.
    pub(super) fn malformed_result(
        &self,
        id: Option<String>,
        code: ErrorCode,
        message: String,
    ) -> Step {
        self.error(code.clone(), message.clone(), Some("tool.result"));
        let fail = |id: &str| {
            self.link
                .calls
                .complete(id, Err(CallError::new(code.clone(), message.clone())))
        };
        if let Some(id) = id {
            if fail(&id) {
                return Step::Continue;
            }
        }
        let pending = self.link.calls.ids();
        match pending.len() {
            0 => Step::Continue,
            1 => {
                fail(&pending[0]);
                Step::Continue
            }
            n => {
                tracing::warn!(target: LOG_TARGET, provider = ?self.id, pending = n, "malformed message with several calls pending; disconnecting provider");
                Step::Close(
                    CloseCode::Protocol,
                    "malformed result with several calls pending",
                )
            }
        }
    }
}

/// Cheap look at an unparseable or oversized frame: enough to correlate it with a call.
#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<serde_json::Value>,
}

fn peek(bytes: &[u8]) -> Option<Peek> {
    serde_json::from_slice(bytes).ok()
}

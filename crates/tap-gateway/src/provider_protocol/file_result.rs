//! A `tool.result` with `file` (see [`crate::tools::file_result`]): the call is taken out
//! of the table at once (the first terminal message wins), the file is checked and copied
//! off the async threads, then the caller gets the copy, or the refusal (which the
//! provider hears too, as `error` with `replyTo: "tool.result"`).

use super::ProviderConn;
use crate::request::CallError;
use crate::socket::frame::frame;
use crate::state::provider_entry::Trust;
use crate::tools::file_result;
use tap_protocol::provider::{ErrorMessage, FileRef, GatewayMessage};
use tap_protocol::ErrorCode;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::file_result";

impl ProviderConn {
    pub(super) fn on_file_result(&self, call_id: String, file: FileRef) {
        let Some(call) = self.link.calls.take(&call_id) else {
            tracing::debug!(target: LOG_TARGET, provider = ?self.id, id = %call_id, "late or unknown tool.result ignored");
            return;
        };
        let data_dir = self.core.config.data_dir.clone();
        // The persistDir of this provider (as in `hello.ack`), or none for paired ones.
        let persist_dir = self
            .with_entry(|s, id| {
                let e = &s.providers[id];
                let name = e.name.as_deref()?;
                (e.trust != Trust::External).then(|| {
                    data_dir
                        .join("providers")
                        .join(crate::state::identity::sanitize(name))
                })
            })
            .flatten();
        let out = self.link.out.clone();
        let (provider_id, session_id) = (self.id.clone(), Some(call.session_id.clone()));
        let core = self.core.clone();
        self.core.tasks.spawn(async move {
            let id = call_id.clone();
            let taken = tokio::task::spawn_blocking(move || {
                file_result::take(&data_dir, persist_dir.as_deref(), &id, &file)
            })
            .await
            .unwrap_or_else(|e| {
                Err(CallError::new(
                    ErrorCode::Internal,
                    format!("file result: {e}"),
                ))
            });
            let outcome = match taken {
                Ok(copied) => {
                    let stopping = core.stopping.clone();
                    let copy = copied.copy.clone();
                    core.tasks.spawn(async move {
                        tokio::select! {
                            _ = tokio::time::sleep(copied.ttl) => {}
                            _ = stopping.cancelled() => {}
                        }
                        let _ = tokio::fs::remove_file(&copy).await;
                    });
                    Ok(copied.data)
                }
                Err(e) => {
                    let mut m = ErrorMessage::new(e.code.clone(), e.message.clone());
                    m.reply_to = Some("tool.result".into());
                    m.provider_id = provider_id;
                    m.session_id = session_id;
                    let _ = out.send(frame(&GatewayMessage::Error(m)));
                    Err(e)
                }
            };
            let _ = call.done.send(outcome);
        });
    }
}

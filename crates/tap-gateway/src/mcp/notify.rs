//! Notifications to a client of the `initialize` generation (and `tap mcp`), sent on its
//! own stream for as long as its MCP session lives.
//!
//! Deliveries: MCP cannot start a turn, so both `surface` and `inject` pushes become
//! `notifications/message` (level `info` and `notice`) with the event, the stream and the
//! provider as data, for clients that show server logs. While no such client is present,
//! deliveries wait in the session's queue and come when one initializes. The stateless generation has no
//! such notification (`subscriptions/listen` carries list changes and resource updates
//! only); its clients read the streams as resources or with `tap_stream_history`.

// MCP logging is deprecated for new clients (SEP-2577), but it is the only server-initiated
// message older clients show, so deliveries use it.
#![allow(deprecated)]

use crate::state::mcp_binding::{DeliveryListener, Notice};
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use tap_protocol::provider::PushLevel;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// What the client asked to hear.
pub(crate) struct Wants {
    /// Stream URIs it subscribed to.
    pub subscribed: Arc<Mutex<HashSet<String>>>,
    /// `logging/setLevel`, as `LoggingLevel as u8`.
    pub log_level: Arc<AtomicU8>,
}

/// MCP's log levels by number (`LoggingLevel as u8`).
const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

/// Sends the session's notices to one client until it or the binding goes; it shows
/// deliveries while `listening` is held (the session's queue holds them otherwise).
pub(crate) async fn forward(
    peer: Peer<RoleServer>,
    (mut notices, _listening): (broadcast::Receiver<Notice>, DeliveryListener),
    closed: CancellationToken,
    wants: Wants,
    gone: CancellationToken,
) {
    loop {
        let notice = tokio::select! {
            _ = closed.cancelled() => return,
            _ = gone.cancelled() => return,
            n = notices.recv() => n,
        };
        let sent = match notice {
            // A missed notice may have been a tool change: say so, the list is re-read.
            Ok(Notice::ToolsChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                peer.notify_tool_list_changed().await
            }
            Ok(Notice::ResourceUpdated(uri)) => {
                let wanted = wants
                    .subscribed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&uri);
                match wanted {
                    true => {
                        peer.notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                        )
                        .await
                    }
                    false => Ok(()),
                }
            }
            Ok(Notice::ResourcesChanged) => peer.notify_resource_list_changed().await,
            Ok(Notice::PromptsChanged) => peer.notify_prompt_list_changed().await,
            Ok(Notice::ServerLog(log)) => {
                if log.level < wants.log_level.load(Ordering::Relaxed) {
                    continue;
                }
                let level = LEVELS[usize::from(log.level.min(7))];
                peer.notify_logging_message(
                    LoggingMessageNotificationParam::new(level, log.data).with_logger(log.logger),
                )
                .await
            }
            Ok(Notice::Delivery(d)) => {
                let level = match d.level {
                    PushLevel::Inject => LoggingLevel::Notice,
                    _ => LoggingLevel::Info,
                };
                if (level as u8) < wants.log_level.load(Ordering::Relaxed) {
                    continue;
                }
                let data = json!({
                    "event": d.event,
                    "stream": d.stream,
                    "provider": d.provider,
                    "level": d.level,
                    "prompt": d.prompt,
                    "metadata": d.metadata,
                });
                peer.notify_logging_message(
                    LoggingMessageNotificationParam::new(level, data)
                        .with_logger(format!("tap:{}/{}", d.provider, d.stream)),
                )
                .await
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if sent.is_err() {
            // The transport is gone; the handler follows shortly.
            return;
        }
    }
}

//! A server's progress notifications and log entries, passed on in the order the server sent
//! them.
//!
//! rmcp hands each notification to its handler on a task of its own, while a call's answer
//! goes straight to the call that waits for it. A progress notification sent just before
//! the result could therefore reach the session after the result, and be dropped there: a
//! client would miss the last "100 of 100". So progress is taken off the connection where
//! messages arrive one by one ([`Ordered`], wrapped around every transport), and turned into
//! the call's `tool.progress` at once, before the message that follows it (the answer) is
//! even read. Log entries (`notifications/message`) are passed to the calling sessions' MCP
//! clients the same way, while the call they came from is still in flight.

// MCP logging is deprecated for new servers (SEP-2577), but servers of the `initialize`
// generation still log, and their entries are passed on.
#![allow(deprecated)]

use super::in_flight::InFlight;
use super::in_flight::Router;
use super::server::Server;
use crate::state::mcp_binding::{Notice, ServerLog};
use rmcp::model::{
    JsonRpcMessage, LoggingMessageNotificationParam, ProgressNotificationParam, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use std::sync::{Arc, Mutex};
use tap_protocol::provider::{ProviderMessage, ToolProgress};

/// A transport to a server whose progress notifications become `tool.progress` as they are
/// read; every message still reaches rmcp unchanged.
pub(crate) struct Ordered<T> {
    inner: T,
    server: Arc<Server>,
    in_flight: Arc<Mutex<InFlight>>,
    router: Router,
}

impl<T> Ordered<T> {
    pub fn new(inner: T, server: Arc<Server>, router: Router) -> Self {
        Self {
            inner,
            server,
            in_flight: router.in_flight.clone(),
            router,
        }
    }

    fn log(&self, p: &LoggingMessageNotificationParam) {
        let server = &self.router.server;
        self.router.tell_callers(Notice::ServerLog(ServerLog {
            logger: match &p.logger {
                Some(l) => format!("{server}/{l}"),
                None => server.clone(),
            },
            level: p.level as u8,
            data: p.data.clone(),
        }));
    }

    fn progress(&self, p: &ProgressNotificationParam) {
        let id = self
            .in_flight
            .lock()
            .unwrap()
            .progress
            .get(&p.progress_token)
            .cloned();
        // A token of no call in flight (late, or never ours) has nobody to go to.
        let (Some(id), Some(sender)) = (id, self.server.pusher.lock().unwrap().clone()) else {
            return;
        };
        let _ = sender.send(&ProviderMessage::ToolProgress(ToolProgress {
            id,
            message: message(p),
        }));
    }
}

/// What the session is told: the server's message, else how far it got.
fn message(p: &ProgressNotificationParam) -> String {
    match (&p.message, p.total) {
        (Some(m), _) => m.clone(),
        (None, Some(total)) => format!("{} of {total}", p.progress),
        (None, None) => format!("{}", p.progress),
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Ordered<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let msg = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &msg {
            match &n.notification {
                ServerNotification::ProgressNotification(p) => self.progress(&p.params),
                ServerNotification::LoggingMessageNotification(l) => self.log(&l.params),
                _ => {}
            }
        }
        Some(msg)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{NumberOrString, ProgressToken};

    #[test]
    fn the_session_hears_the_servers_message_or_how_far_it_got() {
        let token = ProgressToken(NumberOrString::Number(1));
        let mut p = ProgressNotificationParam::new(token, 50.0);
        assert_eq!(message(&p), "50");
        p.total = Some(100.0);
        assert_eq!(message(&p), "50 of 100");
        p.message = Some("halfway".into());
        assert_eq!(message(&p), "halfway");
    }
}

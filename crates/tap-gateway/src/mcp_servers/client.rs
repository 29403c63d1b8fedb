//! The gateway's side of an MCP connection to a server: what it declares in `initialize`
//! and how it answers the server's requests and notifications.
//!
//! Notifications the runner acts on (a changed tool list, a call's progress, a log entry)
//! go to it through a channel; `roots/list` is answered with the session's directory (a
//! project server) or none (a user server shared by every session). Sampling and
//! elicitation are not declared, so a server does not ask for them (and is refused with
//! "method not found" if it does).

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion, Root,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use tokio::sync::mpsc;

/// What the server told the gateway, for the runner.
#[derive(Debug)]
pub(crate) enum Note {
    ToolsChanged,
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

pub(crate) struct Client {
    notes: mpsc::UnboundedSender<Note>,
    /// `file://` URIs of the directories the server may work in.
    roots: Vec<String>,
}

impl Client {
    pub fn new(notes: mpsc::UnboundedSender<Note>, roots: Vec<String>) -> Self {
        Client { notes, roots }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_roots().build();
        ClientConfig::new(
            capabilities,
            Implementation::new("tap-gateway", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        let roots = self
            .roots
            .iter()
            .map(|uri| Root::new(uri.clone()))
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notes.send(Note::Progress(params));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notes.send(Note::Log(params));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notes.send(Note::ToolsChanged);
    }
}

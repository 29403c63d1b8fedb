//! The gateway's side of an MCP connection to a server: what it declares in `initialize`
//! and how it answers the server's requests and notifications.
//!
//! Notifications the runner acts on (a changed tool list, a log entry) go to it through a
//! channel (a call's progress does not come here: `ordered_progress.rs` takes it off the
//! connection in order); those about the server's resources and prompts go straight to
//! the MCP clients of the sessions that see it (`Router::tell`). A call's progress and the
//! log entries for the calling clients are taken off the connection in order
//! (`ordered_progress.rs`). `roots/list` is answered
//! with the session's directory (a project server) or none (a user server shared by every
//! session). Sampling and elicitation go to the calling session's MCP client
//! (`in_flight.rs`).

use super::in_flight::Router;
use crate::state::mcp_binding::{ClientAsk, Notice};
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProtocolVersion, ResourceUpdatedNotificationParam, Root,
};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use std::sync::Arc;
use tokio::sync::{mpsc, Notify};

/// What the server told the gateway, for the runner. Bounded: past
/// [`MCP_NOTES_QUEUE`](crate::limits::MCP_NOTES_QUEUE) waiting, log notes are dropped (a
/// server cannot make the gateway hold a backlog); tool-list changes are not queued but
/// coalesce in [`Client::tools_changed`].
#[derive(Debug)]
pub(crate) enum Note {
    Log(LoggingMessageNotificationParam),
}

pub(crate) struct Client {
    notes: mpsc::Sender<Note>,
    /// Notified on `notifications/tools/list_changed`: any number of them before the
    /// runner looks is one re-listing.
    tools_changed: Arc<Notify>,
    /// `file://` URIs of the directories the server may work in.
    roots: Vec<String>,
    /// Who answers the server's sampling and elicitation requests.
    router: Router,
}

impl Client {
    pub fn new(
        notes: mpsc::Sender<Note>,
        tools_changed: Arc<Notify>,
        roots: Vec<String>,
        router: Router,
    ) -> Self {
        Client {
            notes,
            tools_changed,
            roots,
            router,
        }
    }

    /// Forwards a request to the calling session's MCP client; an MCP error naming the
    /// reason when none can answer.
    async fn forward<P: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        ask: ClientAsk,
        params: P,
    ) -> Result<R, McpError> {
        let asker = self
            .router
            .asker(ask)
            .map_err(|why| McpError::invalid_request(why, None))?;
        let params = serde_json::to_value(params)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let answer = asker.ask(ask, params).await.map_err(|why| {
            McpError::internal_error(format!("the session's client: {why}"), None)
        })?;
        serde_json::from_value(answer).map_err(|e| {
            McpError::internal_error(
                format!("the session's client answered something else: {e}"),
                None,
            )
        })
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        // Sampling and elicitation are declared so servers offer the tools that use them;
        // each request is forwarded to the calling session's MCP client (`in_flight.rs`).
        let capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_sampling()
            .enable_elicitation()
            .build();
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

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        self.forward(ClientAsk::Sampling, params).await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.forward(ClientAsk::Elicitation, params).await
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // The calling clients heard it already (`ordered_progress.rs`, in order).
        let _ = self.notes.try_send(Note::Log(params));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.router
            .tell(|e| Notice::ResourceUpdated(e.shown_uri(&params.uri)));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.router.tell(|_| Notice::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.router.tell(|_| Notice::PromptsChanged);
    }
}

//! The MCP server side: one [`McpHandler`] per MCP session (the `initialize` generation
//! and `tap mcp`) or per request (the stateless 2026-07-28 generation), over the binding of
//! the gateway session the client named.

use super::sessions::{Attachment, Entered, Sessions};
use crate::state::mcp_binding::{Binding, Notice, Target};
use crate::state::Core;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, Extensions,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use tokio_util::sync::{CancellationToken, DropGuard};

pub(crate) struct McpHandler {
    core: Arc<Core>,
    /// Set for `tap mcp`; for HTTP, read from each request.
    target: Option<Target>,
    attachment: Arc<Attachment>,
    /// Over HTTP: the endpoint's record of `initialize`-generation sessions, which this
    /// handler's session enters when its client says `initialized`.
    sessions: Option<Arc<Sessions>>,
    entered: Mutex<Option<Entered>>,
    /// Stream URIs this client subscribed to (`resources/subscribe`, the `initialize`
    /// generation; the stateless one names them in each `subscriptions/listen`).
    subscribed: Arc<Mutex<HashSet<String>>>,
    /// The lowest log level the client wants (`logging/setLevel`), as `LoggingLevel as u8`;
    /// deliveries below it are not sent. Everything until the client says otherwise.
    log_level: Arc<AtomicU8>,
    /// Cancelled when the handler goes (its MCP session ended): stops its notifier.
    closed: CancellationToken,
    _closed_on_drop: DropGuard,
}

impl McpHandler {
    pub fn new(core: Arc<Core>, target: Option<Target>) -> Self {
        let closed = CancellationToken::new();
        Self {
            core,
            target,
            attachment: Arc::default(),
            sessions: None,
            entered: Mutex::new(None),
            subscribed: Arc::default(),
            log_level: Arc::default(),
            _closed_on_drop: closed.clone().drop_guard(),
            closed,
        }
    }

    /// An HTTP session's handler: its session is entered in `sessions` once initialized.
    pub fn with_sessions(mut self, sessions: Arc<Sessions>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// The binding this client uses, attaching on first use to the session the request
    /// (or `tap mcp`) names.
    pub(crate) fn binding(&self, extensions: &Extensions) -> Result<Arc<Binding>, McpError> {
        self.attachment.binding(&self.core, || {
            extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Target>().cloned())
                .or_else(|| self.target.clone())
        })
    }

    /// Lists this handler's HTTP session for the endpoint's own answers (`fast_session`),
    /// under the `Mcp-Session-Id` its `initialized` came with.
    fn enter(&self, context: &NotificationContext<RoleServer>) {
        let Some(sessions) = &self.sessions else {
            return;
        };
        let id = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        let info = context.peer.peer_info();
        let version = info.as_ref().map(|i| i.protocol_version.clone());
        let caps = info.as_ref().map(|i| &i.capabilities);
        let can_be_asked = caps.is_some_and(|c| c.sampling.is_some() || c.elicitation.is_some());
        if let (Some(id), Some(version)) = (id, version) {
            let entered = sessions.enter(id, self.attachment.clone(), version, can_be_asked);
            *self.entered.lock().unwrap_or_else(|e| e.into_inner()) = Some(entered);
        }
    }
}

impl ServerHandler for McpHandler {
    #[allow(deprecated)] // logging: how `surface`/`inject` deliveries reach older clients
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_completions()
                .enable_logging()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "tap-gateway",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Tools of the providers connected to this Tap gateway session, and the gateway's \
             own tap_* tools. Each EventStream of the session is a resource \
             (tap://streams/<provider>/<stream>).",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let binding = self.binding(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(super::tools::list(
            &self.core, &binding,
        )?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let binding = self.binding(&context.extensions)?;
        let asked = super::calls::Asked {
            meta: &context.meta,
            cancel: context.ct.clone(),
            peer: Some(&context.peer),
            path: "rmcp",
            origin: Some(context.id.clone()),
        };
        super::calls::call(&self.core, &binding, request, asked)
            .await
            .map(CallToolResponse::Complete)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let binding = self.binding(&context.extensions)?;
        let mut prompts = super::prompts::list();
        prompts.extend(super::server_items::prompts(&self.core, &binding).await);
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let binding = self.binding(&context.extensions)?;
        if request.name != super::prompts::CONTEXT_PROMPT {
            let args = request.arguments.as_ref();
            if let Some(got) =
                super::server_items::get_prompt(&self.core, &binding, &request.name, args).await
            {
                return got.map(GetPromptResponse::Complete);
            }
        }
        super::prompts::get(
            &self.core,
            &binding,
            &request.name,
            request.arguments.as_ref(),
        )
        .await
        .map(GetPromptResponse::Complete)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let binding = self.binding(&context.extensions)?;
        let mut resources = super::resources::list(&self.core, &binding);
        resources.extend(super::server_items::resources(&self.core, &binding).await);
        Ok(ListResourcesResult::with_all_items(resources))
    }

    /// The gateway has no templates of its own; the servers' are namespaced like their
    /// resources, so an expanded URI is read through `read_resource` below.
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let binding = self.binding(&context.extensions)?;
        let templates = super::server_items::resource_templates(&self.core, &binding).await;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    /// Completions of the servers' prompts and resource templates, from the server that
    /// owns them; the gateway's own prompt has nothing to complete.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let binding = self.binding(&context.extensions)?;
        match super::server_items::complete(&self.core, &binding, request).await {
            Some(answer) => answer,
            None => Ok(CompleteResult::default()),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let binding = self.binding(&context.extensions)?;
        if let Some(read) = super::server_items::read(&self.core, &binding, &request.uri).await {
            return read.map(ReadResourceResponse::Complete);
        }
        super::resources::read(&self.core, &binding, &request.uri)
            .map(ReadResourceResponse::Complete)
    }

    #[allow(deprecated)] // the `initialize` generation's way; both generations are served
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let binding = self.binding(&context.extensions)?;
        match super::server_items::subscribe(&self.core, &binding, &request.uri).await {
            Some(forwarded) => forwarded?,
            None => {
                super::resources::check_uri(&self.core, &binding, &request.uri)?;
            }
        }
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.uri);
        Ok(())
    }

    /// The `initialize` generation: notifications go to the client on its own, for as
    /// long as this MCP session lives.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.enter(&context);
        let binding = match self.binding(&context.extensions) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e.message, "MCP client initialized without a session");
                return;
            }
        };
        super::asks::register(
            &self.core.tasks,
            &binding,
            &context.peer,
            self.closed.clone(),
        );
        if let Some(info) = context.peer.peer_info() {
            crate::state::host_report::from_mcp_client(
                &self.core,
                &binding.session_id,
                &info.client_info.name,
                &info.client_info.version,
                info.capabilities.elicitation.is_some(),
            );
        }
        let notices = binding.notices.subscribe();
        // After subscribing: what waited in the session's queue comes to this client too.
        let listening = binding.listen_for_deliveries(&self.core);
        let closed = self.closed.clone();
        let subscribed = self.subscribed.clone();
        self.core.tasks.spawn(super::notify::forward(
            context.peer,
            (notices, listening),
            closed,
            super::notify::Wants {
                subscribed,
                log_level: self.log_level.clone(),
            },
            binding.gone.clone(),
        ));
    }

    #[allow(deprecated)] // logging: see `notify`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.store(request.level as u8, Ordering::Relaxed);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    /// The stateless generation: notifications for one `subscriptions/listen` stream.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let binding = self.binding(&context.request_context().extensions)?;
        let mut notices = binding.notices.subscribe();
        let accepted = context.accepted().clone();
        let wants = |uri: &str| {
            accepted
                .resource_subscriptions
                .as_ref()
                .is_some_and(|u| u.iter().any(|x| x == uri))
        };
        loop {
            let notice = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = binding.gone.cancelled() => return Ok(()),
                n = notices.recv() => n,
            };
            let sent = match notice {
                Ok(Notice::ToolsChanged) | Err(broadcast::error::RecvError::Lagged(_))
                    if accepted.tools_list_changed == Some(true) =>
                {
                    context.sink().notify_tool_list_changed().await
                }
                Ok(Notice::ResourceUpdated(uri)) if wants(&uri) => {
                    context.sink().notify_resource_updated(uri).await
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
                _ => Ok(()),
            };
            if sent.is_err() {
                // The client closed its stream.
                return Ok(());
            }
        }
    }
}

//! The public engine API: what the server, the control plane, the CLI and the desktop app
//! call. A thin façade over the engine's [`Core`]: every method hands its work to the
//! capability that owns it, so this is the one place to find what the engine offers.

use crate::auth::files::GatewayFiles;
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::hooks::decide::Decision;
use crate::provider_protocol::local::LocalProvider;
use crate::request::{CallError, CallRequest};
use crate::settings::SettingsPatch;
use crate::state::Core;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::approvals;
use tap_protocol::control::{FileLocations, StreamsHistory, UiLoginResult};
use tap_protocol::diagnostics::Diagnostics;
use tap_protocol::emitters::{
    EmitterInfo, EmitterRef, EmitterRuns, EmitterStart, EmittersList, FilterTest, FilterTestResult,
    Ownership,
};
use tap_protocol::host::GatewayStatus;
use tap_protocol::ledger::{
    EventsListParams, EventsPage, LedgerSessions, Trace, TracesList, TracesListParams,
};
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::pairing::PairingEntry;
use tap_protocol::settings::SettingsResult;
use tap_protocol::Json;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// Reading the ledger failed (the database went away under the reader, a search the
/// full-text index refuses): the gateway's failure, `INTERNAL`.
fn history(e: rusqlite::Error) -> Error {
    Error::internal(format!("reading history failed: {e}"))
}

/// A cheap, cloneable handle to a running gateway.
#[derive(Clone)]
pub struct Gateway {
    core: Arc<Core>,
    mcp_servers: Arc<crate::mcp_servers::McpHub>,
}

impl Gateway {
    pub(crate) fn new(core: Arc<Core>) -> Self {
        let mcp_servers = crate::mcp_servers::McpHub::new(core.clone());
        Self { core, mcp_servers }
    }

    /// Starts the user's MCP servers and follows sessions for their project servers;
    /// once, when the gateway listens.
    pub(crate) fn start_mcp_servers(&self) {
        self.mcp_servers.start();
    }

    /// MCP servers with their state (`mcpServers.list`).
    pub fn mcp_servers_list(&self) -> tap_protocol::mcp_servers::McpServersList {
        self.mcp_servers.list()
    }

    /// Applies `$TAP_HOME/mcp.json` again (`mcpServers.reload`).
    pub fn mcp_servers_reload(&self) -> tap_protocol::mcp_servers::McpServersList {
        self.mcp_servers.reload()
    }

    /// Restarts one MCP server (`mcpServers.restart`).
    pub fn mcp_servers_restart(
        &self,
        which: &tap_protocol::mcp_servers::McpServerRef,
    ) -> Result<tap_protocol::mcp_servers::McpServerInfo, Error> {
        self.mcp_servers.restart(which)
    }

    /// The MCP HTTP endpoint's client tokens (`clientTokens.list`).
    pub fn client_tokens_list(&self) -> tap_protocol::profiles::ClientTokensList {
        tap_protocol::profiles::ClientTokensList {
            tokens: self
                .core
                .client_tokens
                .list()
                .into_iter()
                .map(token_info)
                .collect(),
        }
    }

    /// Makes a client token (`clientTokens.create`); the token is in the answer only.
    pub fn client_tokens_create(
        &self,
        p: &tap_protocol::profiles::ClientTokenCreate,
    ) -> Result<tap_protocol::profiles::ClientTokenCreated, Error> {
        use tap_protocol::ErrorCode;
        if !crate::profiles::file::valid_name(&p.client) {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "a client's name is 1 to 64 letters, digits, '_', '-' or '.'",
            ));
        }
        if let Some(profile) = &p.profile {
            // A token for a profile that does not exist would open no session at all.
            crate::profiles::file::find(&self.core.config.data_dir, profile)
                .map_err(|why| Error::new(ErrorCode::NotFound, why))?;
        }
        let (entry, token) = self
            .core
            .client_tokens
            .create(
                &p.client,
                p.profile.as_deref(),
                crate::limits::MAX_CLIENT_TOKENS,
            )
            .map_err(|why| Error::new(ErrorCode::RateLimited, why))?;
        tracing::info!(id = %entry.id, client = %entry.client, "client token made");
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
        Ok(tap_protocol::profiles::ClientTokenCreated {
            info: token_info(entry),
            token,
        })
    }

    /// Revokes a client token (`clientTokens.revoke`).
    pub fn client_tokens_revoke(
        &self,
        id: &str,
    ) -> Result<tap_protocol::profiles::ClientTokensList, Error> {
        let gone = self
            .core
            .client_tokens
            .revoke(id)
            .map_err(|why| Error::new(tap_protocol::ErrorCode::NotFound, why))?;
        tracing::info!(id = %gone.id, client = %gone.client, "client token revoked");
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
        Ok(self.client_tokens_list())
    }

    /// MCP clients, where each stands and its recent sessions (`clients.list`).
    pub fn clients_list(&self) -> Result<tap_protocol::clients::ClientsList, Error> {
        crate::clients::client_files::list(&self.core)
    }

    /// Writes (or, dry run, shows) a client's `tap` entry (`clients.connect`).
    pub fn clients_connect(
        &self,
        p: &tap_protocol::clients::ClientConnect,
    ) -> Result<tap_protocol::clients::ClientChange, Error> {
        crate::clients::client_files::connect(&self.core, p)
    }

    /// Removes (or, dry run, shows removing) a client's `tap` entry (`clients.disconnect`).
    pub fn clients_disconnect(
        &self,
        p: &tap_protocol::clients::ClientDisconnect,
    ) -> Result<tap_protocol::clients::ClientChange, Error> {
        crate::clients::client_files::disconnect(&self.core, p)
    }

    /// Pinned tool definitions, held changes first (`pins.list`).
    pub fn pins_list(&self) -> tap_protocol::pins::PinsList {
        self.core.pins.list()
    }

    /// `pins.accept`, `pins.forget`, `pins.setEnabled`: `change` to the pins of `provider`,
    /// then every session's tool map is rebuilt (what is no longer held is offered, and
    /// hosts get the new tool set) and a `status` event sent.
    pub(crate) fn pins_change(
        &self,
        provider: &str,
        change: impl FnOnce(&crate::pins::Pins, &str) -> Result<(), Error>,
    ) -> Result<tap_protocol::pins::PinsList, Error> {
        let pins = &self.core.pins;
        let known = |name: &str| {
            pins.knows(name)
                || self
                    .core
                    .state()
                    .providers
                    .values()
                    .any(|p| p.name.as_deref() == Some(name))
        };
        // Users know an MCP server by its name; its provider is `mcp-<server>`.
        let mcp = format!("mcp-{provider}");
        let provider = match !known(provider) && known(&mcp) {
            true => mcp.as_str(),
            false => provider,
        };
        change(pins, provider)?;
        crate::state::session::Session::rebuild_all_tools(&mut self.core.state());
        self.core.events.emit(GatewayEvent::StatusChanged);
        Ok(pins.list())
    }

    /// Profiles, the tools each lets through, and what every tool costs (`profiles.list`).
    pub fn profiles_list(&self) -> tap_protocol::profiles::ProfilesList {
        crate::clients::offered_tools::list(&self.core)
    }

    /// Creates or replaces a profile (`profiles.set`).
    pub fn profiles_set(
        &self,
        p: &tap_protocol::profiles::ProfileSet,
    ) -> Result<tap_protocol::profiles::ProfilesList, Error> {
        crate::profiles::file::set(&self.core.config.data_dir, &p.name, &p.def)
            .map_err(|why| Error::new(tap_protocol::ErrorCode::InvalidJson, why))?;
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
        Ok(self.profiles_list())
    }

    /// Removes a profile (`profiles.remove`).
    pub fn profiles_remove(
        &self,
        name: &str,
    ) -> Result<tap_protocol::profiles::ProfilesList, Error> {
        crate::profiles::file::remove(&self.core.config.data_dir, name)
            .map_err(|why| Error::new(tap_protocol::ErrorCode::NotFound, why))?;
        self.core
            .events
            .emit(crate::events::GatewayEvent::StatusChanged);
        Ok(self.profiles_list())
    }

    /// Starts signing in to a remote MCP server (`mcpServers.signIn`): the page to open.
    pub async fn mcp_servers_sign_in(
        &self,
        which: &tap_protocol::mcp_servers::McpServerRef,
    ) -> Result<tap_protocol::mcp_servers::McpSignInStart, Error> {
        self.mcp_servers.sign_in(which).await
    }

    /// Signs out of a remote MCP server (`mcpServers.signOut`): revoked and forgotten.
    pub async fn mcp_servers_sign_out(
        &self,
        which: &tap_protocol::mcp_servers::McpServerRef,
    ) -> Result<tap_protocol::mcp_servers::McpServerInfo, Error> {
        self.mcp_servers.sign_out(which).await
    }

    /// The browser came back to `/oauth/callback` with `query` (its query string).
    /// `Ok`: the name of the server signed in to; `Err`: why it was refused.
    pub async fn oauth_callback(&self, query: &str) -> Result<String, String> {
        self.mcp_servers
            .finish_sign_in(&crate::oauth::Callback::from_query(query))
            .await
    }

    /// The engine behind the façade, for the socket handlers the server starts.
    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// The address the gateway serves on.
    pub fn address(&self) -> SocketAddr {
        self.core.address
    }

    /// The gateway token (`ptk-…`) Core Profile providers authenticate with.
    pub fn provider_token(&self) -> &str {
        &self.core.secrets.gateway_token
    }

    /// The token session hosts authenticate with.
    pub fn host_token(&self) -> &str {
        &self.core.secrets.host_token
    }

    /// The token the control plane (`/control`: panel, tray app, `tap pairing`)
    /// authenticates with. An embedding app hands it to its own panel directly.
    pub fn control_token(&self) -> &str {
        &self.core.secrets.control_token
    }

    /// Where this gateway wrote its token and state files.
    pub fn files(&self) -> &GatewayFiles {
        &self.core.files
    }

    /// Publishes an event to every control-plane subscriber. Never blocks; with no
    /// subscriber it is dropped.
    pub fn emit(&self, event: GatewayEvent) {
        self.core.events.emit(event);
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GatewayEvent> {
        self.core.events.subscribe()
    }

    /// A consistent snapshot of sessions and providers (`tap status --json`).
    pub fn status(&self) -> GatewayStatus {
        crate::status::snapshot(&self.core)
    }

    /// The counters since the start, the newest failures and every connection's state.
    pub fn diagnostics(&self) -> Diagnostics {
        crate::status::diagnostics::snapshot(&self.core)
    }

    /// Traces in the ledger, newest first (`traces.list`).
    pub fn traces_list(&self, p: &TracesListParams) -> Result<TracesList, Error> {
        crate::ledger::read::traces(&self.core.ledger, p).map_err(history)
    }

    /// Approval decisions from the tool calls' traces, newest first (`approvals.history`).
    pub fn approvals_history(
        &self,
        p: &tap_protocol::approvals::ApprovalsHistoryParams,
    ) -> Result<tap_protocol::approvals::ApprovalsHistory, Error> {
        crate::ledger::read::approvals_history(&self.core.ledger, p).map_err(history)
    }

    /// The tool calls' figures over a window (`activity.query`), from the ledger's rollup.
    pub fn activity(
        &self,
        p: &tap_protocol::activity::ActivityQuery,
    ) -> Result<tap_protocol::activity::ActivityReport, Error> {
        crate::ledger::figures::query(&self.core.ledger, p, std::time::SystemTime::now())
            .map_err(history)
    }

    /// Every span of one trace (`traces.get`); `None` when the ledger has none.
    pub fn trace(&self, trace_id: &str) -> Result<Option<Trace>, Error> {
        crate::ledger::read::trace(&self.core.ledger, trace_id).map_err(history)
    }

    /// Stream events in the ledger, newest first (`events.list`).
    pub fn events_list(&self, p: &EventsListParams) -> Result<EventsPage, Error> {
        crate::ledger::read::events(&self.core.ledger, p).map_err(history)
    }

    /// Emitters of live sessions (`emitters.list`).
    pub fn emitters_list(&self, session_id: Option<&str>) -> EmittersList {
        crate::emitters::api::list(&self.core, session_id)
    }

    /// Starts an emitter from the control plane (the user owns it).
    pub fn emitters_start(&self, p: &EmitterStart) -> Result<EmitterInfo, Error> {
        crate::emitters::api::start(
            &self.core,
            p,
            Ownership::UserOwned,
            crate::emitters::api::Origin::User,
        )
    }

    /// Stops an emitter (`emitters.stop`).
    pub fn emitters_stop(&self, r: &EmitterRef) -> Result<EmitterInfo, Error> {
        crate::emitters::api::stop(&self.core, r, Ownership::UserOwned)
    }

    /// An emitter's newest runs (`emitters.runs`).
    pub fn emitters_runs(&self, r: &EmitterRef) -> Result<EmitterRuns, Error> {
        crate::emitters::api::runs(&self.core, r)
    }

    /// Which rule of a filter matches a line (`emitters.testFilter`).
    pub fn emitters_test_filter(&self, t: &FilterTest) -> Result<FilterTestResult, Error> {
        crate::emitters::api::test_filter(t)
    }

    /// Sessions and providers as they came and went (`ledger.sessions`).
    pub fn ledger_sessions(&self) -> Result<LedgerSessions, Error> {
        crate::ledger::read::sessions(&self.core.ledger).map_err(history)
    }

    /// Resolves once every record queued so far is in the ledger.
    pub async fn flush_history(&self) {
        self.core.ledger.flush().await
    }

    /// Applies the history retention settings as if the time were `now`, and resolves
    /// once it is done. The gateway does this every minute with the real time; tests move
    /// time forward with it instead of waiting days.
    pub async fn trim_history(&self, now: SystemTime) {
        let trim = crate::settings::api::history_trim(&self.core, now);
        self.core.ledger.write(trim).await;
        self.core.ledger.flush().await
    }

    /// Where the gateway keeps its files (the control snapshot's `files`).
    pub fn file_locations(&self) -> FileLocations {
        let core = &self.core;
        let files = &core.files;
        let show = |p: &std::path::Path| p.display().to_string();
        let dir = &core.config.data_dir;
        FileLocations {
            data_dir: show(dir),
            provider_token: show(&files.provider_token),
            copilot_provider_token: files.copilot_provider_token.as_deref().map(show),
            host_token: show(&files.host_token),
            // An embedder that keeps the control token (the desktop app: in the keyring)
            // writes no file.
            control_token: core
                .config
                .control_token_store
                .is_none()
                .then(|| show(&files.control_token)),
            state: show(&files.state),
            settings: show(&crate::settings::path(dir)),
            paired_providers: show(&dir.join(crate::state::pairing_store::FILE_NAME)),
        }
    }

    /// The saved settings, where they are, and whether the port differs from the one
    /// this gateway listens on.
    pub fn settings(&self) -> Result<SettingsResult, Error> {
        crate::settings::api::get(&self.core)
    }

    /// Applies `patch`, saves, and tells every control client (`settings.changed`).
    pub fn set_settings(&self, patch: &SettingsPatch) -> Result<SettingsResult, Error> {
        crate::settings::api::set(&self.core, patch)
    }

    /// Whether `GET /` serves a panel (from `ui_dir`, else the embedded one).
    pub fn serves_panel(&self) -> bool {
        crate::config::panel_source::has_panel(&self.core.config)
    }

    /// A one-time login link for the panel this gateway serves
    /// (`http://127.0.0.1:PORT/#login=CODE`): the page exchanges the code for the control
    /// token with `POST /api/login`. The code works once, for 120 s
    /// (`UI_LOGIN_CODE_TTL`). The URL is a secret until used: do not log it.
    pub fn ui_login(&self) -> UiLoginResult {
        let (code, expires) = self.core.ui_logins.issue();
        let left = expires.saturating_duration_since(Instant::now());
        tracing::info!("panel login link issued");
        UiLoginResult {
            url: format!("http://{}/#login={code}", self.core.address),
            expires_at: crate::time::rfc3339(SystemTime::now() + left),
        }
    }

    /// Consumes a login code issued by [`Gateway::ui_login`] (`POST /api/login`).
    pub(crate) fn redeem_login(&self, code: &str) -> bool {
        self.core.ui_logins.redeem(code)
    }

    /// Tool calls waiting for the user's approval, oldest first (`approvals.list`).
    pub fn approvals_list(&self) -> approvals::ApprovalsList {
        approvals::ApprovalsList {
            waiting: self.core.approvals.waiting.list(),
        }
    }

    /// Approves a waiting call, remembering it for the scope asked (`approvals.approve`).
    pub fn approvals_approve(
        &self,
        p: &approvals::ApprovalApprove,
    ) -> Result<approvals::ApprovalAnswered, Error> {
        self.policy_changed_if(self.core.approvals.approve(p))
    }

    /// Denies a waiting call, remembering it if asked (`approvals.deny`).
    pub fn approvals_deny(
        &self,
        p: &approvals::ApprovalDeny,
    ) -> Result<approvals::ApprovalAnswered, Error> {
        self.policy_changed_if(self.core.approvals.deny(p))
    }

    /// Tells the control clients (`policy.changed`) when an answer was remembered.
    fn policy_changed_if(
        &self,
        answered: Result<approvals::ApprovalAnswered, Error>,
    ) -> Result<approvals::ApprovalAnswered, Error> {
        if matches!(&answered, Ok(a) if a.grant.is_some()) {
            self.core.events.emit(GatewayEvent::PolicyChanged);
        }
        answered
    }

    /// Remembered answers in force (`approvals.grants`).
    pub fn approvals_grants(&self) -> approvals::GrantsList {
        approvals::GrantsList {
            grants: self.core.approvals.grant_list(),
        }
    }

    /// Forgets a remembered answer: its calls are decided as before it (`approvals.revoke`).
    pub fn approvals_revoke(&self, grant: &str) -> Result<approvals::GrantsList, Error> {
        self.core.approvals.revoke(grant)?;
        self.core.events.emit(GatewayEvent::PolicyChanged);
        Ok(self.approvals_grants())
    }

    /// `policy.json`'s rules, read again (`policy.list`).
    pub fn policy_list(&self) -> approvals::PolicyList {
        self.core.approvals.policy_list()
    }

    /// Adds or replaces a rule of `policy.json` (`policy.set`).
    pub fn policy_set(&self, rule: approvals::PolicyRule) -> Result<approvals::PolicyList, Error> {
        let list = self.core.approvals.policy_set(rule)?;
        self.core.events.emit(GatewayEvent::PolicyChanged);
        Ok(list)
    }

    /// Removes a rule of `policy.json` (`policy.remove`).
    pub fn policy_remove(&self, id: &str) -> Result<approvals::PolicyList, Error> {
        let list = self.core.approvals.policy_remove(id)?;
        self.core.events.emit(GatewayEvent::PolicyChanged);
        Ok(list)
    }

    /// Every pairing: pending requests first, then paired providers; newest first within
    /// each. Pending entries carry their `code`.
    pub fn pairing_list(&self) -> Vec<PairingEntry> {
        crate::pairing::api::list(&self.core)
    }

    /// Refuses a pending request: its provider gets `AUTH_FAILED` and is disconnected.
    pub fn pairing_deny(&self, id: &str) -> Result<(), Error> {
        crate::pairing::api::deny(&self.core, id)
    }

    /// Denies every pending request; returns how many there were.
    pub fn pairing_deny_all(&self) -> usize {
        crate::pairing::api::deny_all(&self.core)
    }

    /// Removes a paired provider: its token stops working (also across restarts) and
    /// every connection holding it gets `AUTH_FAILED` and is closed.
    pub fn pairing_revoke(&self, id: &str) -> Result<(), Error> {
        crate::pairing::api::revoke(&self.core, id)
    }

    /// Limits a pairing to `session` (which must be registered) and/or sets whether it is
    /// remembered across restarts; `None` leaves a setting as it is. A connected provider
    /// bound to another session is unbound at once (its calls there are cancelled) and
    /// told with `error INVALID_SESSION`; it may `hello` again for the new session.
    pub fn pairing_configure(
        &self,
        id: &str,
        session: Option<String>,
        remember: Option<bool>,
    ) -> Result<PairingEntry, Error> {
        crate::pairing::api::configure(&self.core, id, session, remember)
    }

    /// A session's stored stream events, newest first: every stream, or `stream` (that
    /// stream of every provider) or `stream@provider`; the newest `last` per stream (all
    /// kept events when `None`). `Err` (`INVALID_SESSION`) for an unknown session.
    pub fn streams_history(
        &self,
        session_id: &str,
        stream: Option<&str>,
        last: Option<usize>,
    ) -> Result<StreamsHistory, Error> {
        if !self.core.state().sessions.contains_key(session_id) {
            return Err(crate::state::unknown_session(session_id));
        }
        let last = last.unwrap_or(STREAM_RETENTION);
        Ok(StreamsHistory {
            session_id: session_id.to_string(),
            streams: self.core.streams.history(session_id, stream, last),
        })
    }

    /// Closes the connection of the authenticated provider `id` (its calls in flight fail
    /// with `DISCONNECTED`, as on any disconnect). `false` when no such provider is
    /// connected.
    pub fn provider_disconnect(&self, id: &str) -> bool {
        crate::providers::registry::disconnect(&self.core, id)
    }

    /// Connects an in-process provider (trust internal). It is authenticated already: the
    /// first message it receives is `sessions`; then it sends `hello` as any provider.
    pub fn connect_local(&self) -> LocalProvider {
        crate::provider_protocol::local::connect(&self.core)
    }

    /// Runs one tool call to its single terminal outcome: the provider's result, a timeout
    /// (the provider gets `tool.cancel`), a cancellation by the caller, or the provider's
    /// disconnect. This is the in-process call path; the session-host socket is a thin
    /// adapter over it.
    ///
    /// A shared tool (multi-instance provider) goes to the instance named by `args.target`,
    /// else to the most recently active one; the generated `list_<name>_instances` is
    /// answered here. A failure the provider marks `retryable` on a call the gateway routed
    /// itself (no `target`) is retried once on another instance holding the tool.
    pub async fn call_tool(&self, req: CallRequest) -> Result<Json, CallError> {
        crate::tools::call::call_tool(&self.core, req).await
    }

    /// [`Gateway::call_tool`] under `root` (the caller's `tool.call` span), handing each
    /// `tool.progress` message to `on_progress` as it arrives, always ahead of the outcome
    /// (`req.progress` is replaced).
    pub(crate) async fn call_tool_reporting<F, Fut>(
        &self,
        req: CallRequest,
        root: &mut crate::trace::OpenSpan,
        on_progress: F,
    ) -> Result<Json, CallError>
    where
        F: FnMut(String) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        crate::tools::progress::call_tool_reporting(&self.core, req, root, on_progress).await
    }

    /// The pre-tool-use decision for `tool` with `args` in `session_id` (spec: hook rules,
    /// `onPreToolUse`). Rules are walked per bound provider in bind order, each provider's
    /// in registration order. A static `deny` decides at once (no gate is asked); otherwise
    /// every matching gate is asked concurrently (`gate.check`, answered within 5 s or
    /// denied unless the rule says `failOpen`; a provider that disconnects with a check
    /// pending denies). Any deny wins; contexts are concatenated in rule order.
    ///
    /// `tool` need not be a provider's tool: agent runtimes ask about their own tools
    /// (`shell`, `edit`) too; `match.provider` then never matches. `call_tool` does not
    /// call this: the session host asks first, as the spec's `onPreToolUse` hook does.
    ///
    /// Fails with `INVALID_SESSION` when the session does not exist or is ending.
    pub async fn pre_tool_use(
        &self,
        session_id: &str,
        tool: &str,
        args: &Json,
    ) -> Result<Decision, CallError> {
        let mut span = self.core.tracer.start("tool.precheck", None);
        span.session(session_id);
        span.tool(tool);
        let decision =
            crate::hooks::decide::pre_tool_use(&self.core, session_id, tool, args, &span).await;
        crate::tools::traced::end(span, &decision);
        decision
    }

    /// [`Gateway::pre_tool_use`] as a caller that makes the call next uses it: the context
    /// to add to the result, or the call's `DENIED` failure with the rule's reason.
    pub(crate) async fn precheck_call(
        &self,
        session_id: &str,
        tool: &str,
        args: &Json,
        root: &crate::trace::OpenSpan,
    ) -> Result<Option<String>, CallError> {
        crate::hooks::decide::precheck_call(&self.core, session_id, tool, args, root).await
    }
}

fn token_info(e: crate::auth::client_tokens::Entry) -> tap_protocol::profiles::ClientTokenInfo {
    tap_protocol::profiles::ClientTokenInfo {
        id: e.id,
        client: e.client,
        profile: e.profile,
        created: e.created,
    }
}

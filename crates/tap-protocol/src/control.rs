//! The control plane (`ws://127.0.0.1:9400/control`), spoken by the panel, the tray app
//! and `tap pairing`. `docs/control-protocol.md` is the prose version of this module.
//!
//! Three frames, in the style of a JSON-RPC-like request/response protocol with events:
//!
//! - client → gateway: [`ClientFrame::Request`] `{"type":"request","id","method","params"}`;
//! - gateway → client: [`ServerFrame::Response`] `{"type":"response","id","result"}` or
//!   `{"type":"response","id","error":{"code","message"}}`, and [`ServerFrame::Event`]
//!   `{"type":"event","seq","event":{"kind",…}}`.
//!
//! The first request must be `auth` with the control token; its result is a [`Snapshot`].
//! Events are numbered per connection (1, 2, 3, …) so a client can tell it missed one;
//! [`Snapshot::seq`] is the number of the last event sent before the snapshot was taken.
//!
//! These types are the one definition of the protocol: with the `ts` feature they derive
//! `ts_rs::TS`, and the panel's TypeScript (`ui/src/generated/`) is generated from them
//! (`tests/generated_typescript.rs` fails when the committed files are stale).
//!
//! This file holds the method list; the rest is one file per concern, re-exported from
//! here: the `frames` and their `decode`, the `events`, and the params and results of
//! `auth` (with `ui.login`), `pairing` and `streams`.

use crate::host::GatewayStatus;
use crate::logs::LogsParams;
use crate::settings::SettingsPatch;
use serde::{Deserialize, Serialize};

mod auth;
mod decode;
mod events;
mod frames;
mod pairing;
mod playground;
mod streams;

pub use auth::*;
pub use decode::*;
pub use events::*;
pub use frames::*;
pub use pairing::*;
pub use playground::*;
pub use streams::*;

/// The version of this protocol; bumped on an incompatible change.
pub const CONTROL_PROTOCOL_VERSION: u32 = 1;

/// How long a `ui.login` code may be exchanged for the control token; defined with the
/// other limits.
pub use crate::limits::UI_LOGIN_CODE_TTL;

/// Declares every method once: its wire name, its params type and its result type. From
/// this one list come [`ControlCall`], [`ControlCall::METHODS`] and (feature `ts`) the
/// TypeScript `ControlMethods` map the panel's typed `rpc()` is built on.
///
/// `-> @later T` marks a method whose answer may take long (a tool call): its handler
/// returns [`Later<T>`] after starting the work, and answers with a `T` itself when the
/// work ends, so the connection keeps answering other requests meanwhile.
macro_rules! control_methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($handler:ident) = $name:literal ($params:ty) -> $(@$later:ident)? $result:ty;
    )*) => {
        /// A method and its params, as one request carries them
        /// (`{"method": "…", "params": {…}}`).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[serde(tag = "method", content = "params")]
        pub enum ControlCall {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant($params),
            )*
        }

        impl ControlCall {
            /// Every method name this gateway knows.
            pub const METHODS: &'static [&'static str] = &[$($name),*];

            /// The wire name of this call's method.
            pub fn method(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }

            /// Runs this call on `handler` and serializes the method's result; `None` when
            /// the handler answers later (`@later` methods). The handler returns each
            /// method's own result type, so the compiler checks that every method answers
            /// with what this list (and the panel's TypeScript) says.
            pub fn dispatch(self, handler: &mut impl ControlHandler) -> Result<Option<crate::Json>, ControlError> {
                match self {
                    $(Self::$variant(params) => answer!($($later)?, handler.$handler(params)?),)*
                }
            }
        }

        /// What answers the control methods: one function per method, with the method's
        /// params and result types.
        pub trait ControlHandler {
            $(
                $(#[doc = $doc])*
                fn $handler(&mut self, params: $params) -> Result<handler_result!($($later)?, $result), ControlError>;
            )*
        }

        /// The TypeScript `ControlMethods` type (each method's params and result type) and
        /// the types it imports. `visitor` is shown every params and result type, so a
        /// generator can export them too.
        #[cfg(feature = "ts")]
        pub fn typescript_method_map(
            cfg: &ts_rs::Config,
            visitor: &mut impl ts_rs::TypeVisitor,
        ) -> (String, Vec<ts_rs::Dependency>) {
            use ts_rs::TS;
            let mut body = String::new();
            let mut deps = Vec::new();
            $(
                body.push_str(&format!(
                    "  {:?}: {{ params: {}; result: {} }};\n",
                    $name,
                    <$params as TS>::name(cfg),
                    <$result as TS>::name(cfg),
                ));
                visitor.visit::<$params>();
                visitor.visit::<$result>();
                deps.extend(ts_rs::Dependency::from_ty::<$params>(cfg));
                deps.extend(ts_rs::Dependency::from_ty::<$result>(cfg));
            )*
            (format!("export type ControlMethods = {{\n{body}}};\n"), deps)
        }
    };
}

/// What a handler returns for a method: its result, or [`Later`] for an `@later` method.
macro_rules! handler_result {
    (later, $result:ty) => { Later<$result> };
    (, $result:ty) => { $result };
}

/// How `dispatch` answers: serialized now, or `None` for an `@later` method.
macro_rules! answer {
    (later, $value:expr) => {{
        let _: Later<_> = $value;
        Ok(None)
    }};
    (, $value:expr) => {
        to_json($value).map(Some)
    };
}

fn to_json(value: impl Serialize) -> Result<crate::Json, ControlError> {
    serde_json::to_value(value)
        .map_err(|e| ControlError::new(crate::ErrorCode::Internal, e.to_string()))
}

control_methods! {
    /// Authenticate with the control token. Must be the first request; the result is a
    /// snapshot, and events start flowing after it.
    Auth(auth) = "auth" (AuthParams) -> Snapshot;
    /// Everything the panel shows, with the seq of the last event sent before it.
    Snapshot(snapshot) = "snapshot" (Empty) -> Snapshot;
    /// The gateway status (sessions, providers), as `tap status --json` prints it.
    Status(status) = "status" (Empty) -> GatewayStatus;
    /// Pending pairing requests (newest first), then paired providers (newest first).
    PairingList(pairing_list) = "pairing.list" (Empty) -> PairingList;
    /// Deny a pending request: its provider gets `AUTH_FAILED` and is disconnected.
    PairingDeny(pairing_deny) = "pairing.deny" (PairingId) -> Empty;
    /// Deny every pending request.
    PairingDenyAll(pairing_deny_all) = "pairing.denyAll" (Empty) -> PairingDenyAllResult;
    /// Revoke a paired provider: its connection closes and its token stops working.
    PairingRevoke(pairing_revoke) = "pairing.revoke" (PairingId) -> Empty;
    /// Change a pairing's session binding or whether it is remembered across restarts.
    PairingConfigure(pairing_configure) = "pairing.configure" (PairingConfigure) -> PairingConfigureResult;
    /// Tool calls waiting for the user's approval, oldest first, with everything a prompt
    /// shows (`approval.waiting` and `approval.resolved` events announce changes).
    ApprovalsList(approvals_list) = "approvals.list" (Empty) -> crate::approvals::ApprovalsList;
    /// Approves a waiting call: for this call, this session, some minutes or always
    /// (optionally only for arguments matching `argsPattern`). `NOT_FOUND` once it was
    /// answered, timed out or its caller left.
    ApprovalsApprove(approvals_approve) = "approvals.approve" (crate::approvals::ApprovalApprove) -> crate::approvals::ApprovalAnswered;
    /// Denies a waiting call (it never reaches the provider), remembering the deny if asked.
    ApprovalsDeny(approvals_deny) = "approvals.deny" (crate::approvals::ApprovalDeny) -> crate::approvals::ApprovalAnswered;
    /// Remembered answers in force (`$TAP_HOME/grants.json`), oldest first.
    ApprovalsGrants(approvals_grants) = "approvals.grants" (Empty) -> crate::approvals::GrantsList;
    /// Forgets a remembered answer: its calls are decided by the rules again.
    ApprovalsRevoke(approvals_revoke) = "approvals.revoke" (crate::approvals::GrantRef) -> crate::approvals::GrantsList;
    /// Decisions the ledger kept (from each tool call's trace), newest first: every call a
    /// rule, a grant or the user decided, asked or not; the defaults' silent allows are left out.
    ApprovalsHistory(approvals_history) = "approvals.history" (crate::approvals::ApprovalsHistoryParams) -> crate::approvals::ApprovalsHistory;
    /// The rules of `$TAP_HOME/policy.json` (read again), or why the file cannot be used.
    PolicyList(policy_list) = "policy.list" (Empty) -> crate::approvals::PolicyList;
    /// Adds a rule at the end, or replaces the rule of its id in place (checked first).
    PolicySet(policy_set) = "policy.set" (crate::approvals::PolicySet) -> crate::approvals::PolicyList;
    /// Removes a rule.
    PolicyRemove(policy_remove) = "policy.remove" (crate::approvals::PolicyRuleRef) -> crate::approvals::PolicyList;
    /// A one-time login link for the panel this gateway serves: `url` carries a single-use
    /// code (valid 120 s) in its fragment, which the page exchanges for the control token
    /// with `POST /api/login`.
    UiLogin(ui_login) = "ui.login" (Empty) -> UiLoginResult;
    /// A session's stored stream events, newest first.
    StreamsHistory(streams_history) = "streams.history" (StreamsHistoryParams) -> StreamsHistory;
    /// Close one provider's connection (its pending calls fail with `DISCONNECTED`).
    ProviderDisconnect(provider_disconnect) = "provider.disconnect" (ProviderId) -> Empty;
    /// Errors sent to providers by code, limits hit, connection states, recent failures.
    Diagnostics(diagnostics) = "diagnostics" (Empty) -> crate::diagnostics::Diagnostics;
    /// `diagnostics`, and from now on `diagnostics.changed` events on this connection.
    DiagnosticsFollow(diagnostics_follow) = "diagnostics.follow" (Empty) -> crate::diagnostics::Diagnostics;
    /// The newest records of the gateway's log, oldest first.
    LogsRecent(logs_recent) = "logs.recent" (LogsParams) -> crate::logs::LogsRecent;
    /// `logs.recent`, and from now on a `log` event per new record on this connection.
    LogsFollow(logs_follow) = "logs.follow" (LogsParams) -> crate::logs::LogsRecent;
    /// A session's stored stream events (as `streams.history`), and from now on a
    /// `stream.entry` event per event stored in that session. Replaces an earlier
    /// `streams.follow` of this connection.
    StreamsFollow(streams_follow) = "streams.follow" (StreamsFollowParams) -> StreamsHistory;
    /// Stops the events a `*.follow` method started on this connection.
    Unfollow(unfollow) = "unfollow" (UnfollowParams) -> Empty;
    /// The user's settings (`$TAP_HOME/settings.json`).
    SettingsGet(settings_get) = "settings.get" (Empty) -> crate::settings::SettingsResult;
    /// Changes and saves settings; unknown keys are refused (`INVALID_JSON`).
    SettingsSet(settings_set) = "settings.set" (SettingsPatch) -> crate::settings::SettingsResult;
    /// Traces in the ledger, newest first, filtered and paged.
    TracesList(traces_list) = "traces.list" (crate::ledger::TracesListParams) -> crate::ledger::TracesList;
    /// Every span of one trace (`NOT_FOUND` when the ledger has none).
    TracesGet(traces_get) = "traces.get" (crate::ledger::TraceRef) -> crate::ledger::Trace;
    /// From now on `traces.changed` events on this connection (call `traces.list` after it,
    /// and again on each event).
    TracesFollow(traces_follow) = "traces.follow" (Empty) -> Empty;
    /// Tool calls over a window (15m, 1h, 24h, 7d) in time buckets: calls, errors, p50
    /// and p95 latency, in total and grouped by provider, tool or client. Counted from the
    /// ledger's per-minute rollup; refresh it on `traces.changed`.
    ActivityQuery(activity_query) = "activity.query" (crate::activity::ActivityQuery) -> crate::activity::ActivityReport;
    /// Stream events in the ledger (any session, live or ended, across restarts), newest
    /// first, filtered, searched and paged.
    EventsList(events_list) = "events.list" (crate::ledger::EventsListParams) -> crate::ledger::EventsPage;
    /// Sessions and providers as they came and went, ended ones included.
    LedgerSessions(ledger_sessions) = "ledger.sessions" (Empty) -> crate::ledger::LedgerSessions;
    /// Emitters of live sessions, with status, schedule, counters and warnings.
    EmittersList(emitters_list) = "emitters.list" (crate::emitters::EmittersListParams) -> crate::emitters::EmittersList;
    /// From now on `emitters.changed` events on this connection (call `emitters.list` after
    /// it, and again on each event).
    EmittersFollow(emitters_follow) = "emitters.follow" (Empty) -> Empty;
    /// Starts an emitter in a live session (replacing one of the same name).
    EmittersStart(emitters_start) = "emitters.start" (crate::emitters::EmitterStart) -> crate::emitters::EmitterInfo;
    /// Stops an emitter: its process group gets SIGTERM, then SIGKILL after 2 s.
    EmittersStop(emitters_stop) = "emitters.stop" (crate::emitters::EmitterRef) -> crate::emitters::EmitterInfo;
    /// An emitter's runs, newest first.
    EmittersRuns(emitters_runs) = "emitters.runs" (crate::emitters::EmitterRef) -> crate::emitters::EmitterRuns;
    /// Which rule of an EventFilter matches a line, and the outcome.
    EmittersTestFilter(emitters_test_filter) = "emitters.testFilter" (crate::emitters::FilterTest) -> crate::emitters::FilterTestResult;
    /// MCP servers: the user's (`$TAP_HOME/mcp.json`) and the project servers of live
    /// sessions, with state, pid, tools and last error.
    McpServersList(mcp_servers_list) = "mcpServers.list" (Empty) -> crate::mcp_servers::McpServersList;
    /// Reads `$TAP_HOME/mcp.json` again: starts added servers, stops removed and disabled
    /// ones, restarts changed ones. `tap mcp add|remove|enable|disable` call it.
    McpServersReload(mcp_servers_reload) = "mcpServers.reload" (Empty) -> crate::mcp_servers::McpServersList;
    /// Restarts one server now (a parked one too), resetting its failure count.
    McpServersRestart(mcp_servers_restart) = "mcpServers.restart" (crate::mcp_servers::McpServerRef) -> crate::mcp_servers::McpServerInfo;
    /// Starts signing in to a remote server (OAuth authorization code with PKCE): the page
    /// to open in the user's browser, which comes back to the gateway's `/oauth/callback`.
    /// A sign-in started before for the server is replaced. The server's `signIn.pending`
    /// says when it has ended (a `status` event announces each change).
    McpServersSignIn(mcp_servers_sign_in) = "mcpServers.signIn" (crate::mcp_servers::McpServerRef) -> @later crate::mcp_servers::McpSignInStart;
    /// Signs out of a remote server: revokes its tokens where the authorization server
    /// offers revocation, forgets them, and leaves it waiting for a new sign-in.
    McpServersSignOut(mcp_servers_sign_out) = "mcpServers.signOut" (crate::mcp_servers::McpServerRef) -> @later crate::mcp_servers::McpServerInfo;
    /// Profiles (`$TAP_HOME/profiles.json`) with the tools each lets through now, and what
    /// every tool's definition costs in a client's context (tokens and bytes).
    ProfilesList(profiles_list) = "profiles.list" (Empty) -> crate::profiles::ProfilesList;
    /// Creates or replaces one profile (checked first; the file keeps its other profiles
    /// and keys). Sessions opened after it use the new definition.
    ProfilesSet(profiles_set) = "profiles.set" (crate::profiles::ProfileSet) -> crate::profiles::ProfilesList;
    /// Removes one profile from the file.
    ProfilesRemove(profiles_remove) = "profiles.remove" (crate::profiles::ProfileRef) -> crate::profiles::ProfilesList;
    /// Client tokens of the MCP HTTP endpoint (never the tokens themselves).
    ClientTokensList(client_tokens_list) = "clientTokens.list" (Empty) -> crate::profiles::ClientTokensList;
    /// Makes a client token (kept across restarts; only its hash is stored); the token is in
    /// this answer only.
    ClientTokensCreate(client_tokens_create) = "clientTokens.create" (crate::profiles::ClientTokenCreate) -> crate::profiles::ClientTokenCreated;
    /// Revokes a client token: requests carrying it are refused from now on.
    ClientTokensRevoke(client_tokens_revoke) = "clientTokens.revoke" (crate::profiles::ClientTokenRef) -> crate::profiles::ClientTokensList;
    /// Pinned tool definitions (`$TAP_HOME/pins.json`): held changes first, each with the
    /// pinned and the offered text and their diff; then every pin.
    PinsList(pins_list) = "pins.list" (Empty) -> crate::pins::PinsList;
    /// Accepts a held definition (one tool, or every held tool of the provider): it is
    /// pinned, offered to sessions again, and their hosts get the new tool set.
    PinsAccept(pins_accept) = "pins.accept" (crate::pins::PinRef) -> crate::pins::PinsList;
    /// Forgets pins (one tool, or every tool of the provider): the next definition seen
    /// is pinned as new.
    PinsForget(pins_forget) = "pins.forget" (crate::pins::PinRef) -> crate::pins::PinsList;
    /// Turns pinning on or off for one provider (kept in `pins.json`).
    PinsSetEnabled(pins_set_enabled) = "pins.setEnabled" (crate::pins::PinsEnabled) -> crate::pins::PinsList;
    /// MCP clients on this machine (the gateway's `HOME`): each one's state, file, entry's
    /// profile, why it drifted, and its recent sessions.
    ClientsList(clients_list) = "clients.list" (Empty) -> crate::clients::ClientsList;
    /// Writes (or repairs) the `tap` entry in a client's file, keeping every other byte, with
    /// a backup; `dryRun`: the diff only, nothing written.
    ClientsConnect(clients_connect) = "clients.connect" (crate::clients::ClientConnect) -> crate::clients::ClientChange;
    /// Removes the `tap` entry (and only it) from a client's file; `dryRun`: the diff only.
    ClientsDisconnect(clients_disconnect) = "clients.disconnect" (crate::clients::ClientDisconnect) -> crate::clients::ClientChange;
    /// The agent skills (served as MCP prompts), each with where it is installed as a
    /// client's own skill (the Copilot CLI's).
    SkillsList(skills_list) = "skills.list" (Empty) -> crate::clients::SkillsList;
    /// Opens a playground session: joins the session with this id or label, or registers
    /// one labelled `name`. Held until `playground.close` or until this connection closes.
    PlaygroundOpen(playground_open) = "playground.open" (PlaygroundOpenParams) -> PlaygroundSession;
    /// Releases a session `playground.open` holds (a registered one ends once no other
    /// client holds it for the session hosts' resume window).
    PlaygroundClose(playground_close) = "playground.close" (PlaygroundSessionRef) -> Empty;
    /// A live session's tools, with their descriptions and JSON Schemas.
    PlaygroundTools(playground_tools) = "playground.tools" (PlaygroundSessionRef) -> PlaygroundTools;
    /// Calls a tool as a session host would (hook precheck, argument check, gates,
    /// concurrency, timeout). Answered when the call ends; meanwhile its progress arrives
    /// as `playground.progress` events and other requests are answered as usual.
    PlaygroundCall(playground_call) = "playground.call" (PlaygroundCallParams) -> @later PlaygroundCallResult;
    /// Cancels a call in flight: its provider gets `tool.cancel`, the call ends `CANCELLED`.
    PlaygroundCancel(playground_cancel) = "playground.cancel" (PlaygroundCallRef) -> Empty;
}

/// Params of methods that take none, and the result of methods that return nothing.
/// Sent as `{}` (or omitted, for params).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Empty {}

/// Params naming one provider connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProviderId {
    /// The provider's id (`ProviderStatus.id` in `status`).
    pub id: String,
}

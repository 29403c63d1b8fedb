//! The Tap session-host protocol (ours), spoken on `ws://127.0.0.1:9400/session`.
//!
//! A session host turns an agent runtime's session into a gateway session: it registers
//! and ends sessions, receives each session's tool set whenever it changes, invokes tools,
//! receives deliveries, and reports busy/idle and session events. `docs/session-host-protocol.md`
//! is the prose version of this module.
//!
//! Requests that expect an answer carry a host-chosen `requestId` (or `callId` for tool
//! invocations) that the answer echoes.

use crate::provider::{PushLevel, SessionInfo, StreamEntry};
use crate::wire::wire_messages;
use crate::{ErrorCode, Json, JsonObject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

wire_messages! {
    /// A message a session host sends to the gateway.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum HostRequest {
        /// First message: the host token, optionally a resume token.
        "auth" => Auth(HostAuth),
        /// Register a session.
        "session.register" => SessionRegister(SessionRegister),
        /// End a session.
        "session.end" => SessionEnd(SessionEnd),
        /// Report busy / idle.
        "session.state" => SessionState(SessionStateReport),
        /// Report a session event (user message, assistant message, tool completion, intent).
        "session.event" => SessionEvent(HostSessionEvent),
        /// Invoke a tool in a session.
        "tool.invoke" => ToolInvoke(ToolInvoke),
        /// Cancel an invocation this connection made.
        "tool.cancel" => ToolCancel(HostToolCancel),
        /// Ask for the gateway's status.
        "status.get" => StatusGet(RequestRef),
        /// Read a session's stream history.
        "streams.history" => StreamsHistory(StreamsHistoryRequest),
        /// Apply the session's prompt transforms and collect its ambient context.
        "prompt.apply" => PromptApply(PromptApply),
        /// Ask for the pre-tool-use decision (hook rules) before using a tool.
        "tool.precheck" => ToolPrecheck(ToolPrecheck),
    }
}

impl HostRequest {
    /// The `requestId` or `callId` an answer would echo, if any.
    pub fn correlation_id(&self) -> Option<&str> {
        match self {
            Self::SessionRegister(m) => Some(&m.request_id),
            Self::SessionEnd(m) => Some(&m.request_id),
            Self::ToolInvoke(m) => Some(&m.call_id),
            Self::ToolCancel(m) => Some(&m.call_id),
            Self::StatusGet(m) => Some(&m.request_id),
            Self::StreamsHistory(m) => Some(&m.request_id),
            Self::PromptApply(m) => Some(&m.request_id),
            Self::ToolPrecheck(m) => Some(&m.request_id),
            Self::Auth(_) | Self::SessionState(_) | Self::SessionEvent(_) => None,
        }
    }
}

wire_messages! {
    /// A message the gateway sends to a session host.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum HostEvent {
        /// Authenticated.
        "auth.ok" => AuthOk(HostAuthOk),
        /// A session was registered.
        "session.registered" => SessionRegistered(SessionRegistered),
        /// A session ended (asked for, or its host never came back).
        "session.ended" => SessionEnded(SessionEnded),
        /// The full tool set of a session, sent whenever it changes (debounced).
        "session.tools" => SessionTools(SessionTools),
        /// Progress of an invocation.
        "tool.progress" => ToolProgress(HostToolProgress),
        /// The one terminal outcome of an invocation.
        "tool.result" => ToolResult(HostToolResult),
        /// A pushed event at `surface` or `inject` level for a session this host owns.
        "delivery" => Delivery(Delivery),
        /// Answer to `status.get`.
        "status" => Status(StatusReply),
        /// Answer to `streams.history`.
        "streams.history" => StreamsHistory(StreamsHistoryReply),
        /// Answer to `prompt.apply`.
        "prompt.applied" => PromptApplied(PromptApplied),
        /// A bound provider's `startup_context`, sent once when it binds to the session.
        "session.context" => SessionContext(SessionContext),
        /// Answer to `tool.precheck`: the one pre-tool-use decision.
        "tool.decision" => ToolDecision(ToolDecision),
        /// Something about the session the user should see: its `tap.config.json` could not be
        /// used, or one of its project providers failed for good.
        "session.warning" => SessionWarning(SessionWarning),
        /// A request was refused.
        "error" => Error(HostError),
    }
}

/// `auth` (host).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostAuth {
    /// The host token from `$TAP_HOME/host-token`.
    pub token: String,
    /// Must be 1.
    pub protocol_version: u32,
    /// A name for logs and the panel, e.g. `tap-cli` or `copilot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// The `resumeToken` of an earlier connection, to take its sessions back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_token: Option<String>,
}

/// `auth.ok`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostAuthOk {
    /// Always 1.
    pub protocol_version: u32,
    /// This host's id.
    pub host_id: String,
    /// Send this in `auth.resumeToken` on a reconnect within 30 s to take this host's
    /// sessions back.
    pub resume_token: String,
    /// Sessions taken back by the resume (empty on a fresh connection).
    #[serde(default)]
    pub resumed: Vec<String>,
}

/// `session.register`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRegister {
    /// Echoed in the answer.
    pub request_id: String,
    /// The session id to use; the gateway makes one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Human label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Whether this is the session the user is looking at.
    #[serde(default)]
    pub foreground: bool,
}

/// `session.registered`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRegistered {
    /// The request's id.
    pub request_id: String,
    /// The registered session.
    pub session: SessionInfo,
}

/// `session.end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnd {
    /// Echoed in `session.ended`.
    pub request_id: String,
    /// The session to end.
    pub session_id: String,
}

/// `session.ended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnded {
    /// The `session.end` request's id, when it answers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The ended session.
    pub session_id: String,
    /// Why it ended.
    pub reason: String,
}

/// `session.state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStateReport {
    /// The session.
    pub session_id: String,
    /// Busy or idle.
    pub state: BusyState,
}

/// Whether a session is working on a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum BusyState {
    /// A turn is running.
    Busy,
    /// Nothing in flight.
    Idle,
}

/// `session.event` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostSessionEvent {
    /// The session.
    pub session_id: String,
    /// `user.message`, `assistant.message`, `tool.execution_complete`, `assistant.intent`.
    pub event: String,
    /// The payload, shaped as the Provider Interface's `session.event` table says.
    #[serde(default)]
    pub data: Json,
}

/// `session.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTools {
    /// The session.
    pub session_id: String,
    /// Increases with every change of this session's tool set.
    pub revision: u64,
    /// The complete tool set.
    pub tools: Vec<HostTool>,
}

/// A tool as a session host sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostTool {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Json,
    /// The provider's name.
    pub provider: String,
    /// The provider's debug id.
    pub provider_id: String,
    /// Call timeout in milliseconds the gateway enforces.
    pub timeout_ms: u64,
}

/// `tool.invoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvoke {
    /// Host-chosen id, unique on this connection; echoed in progress and result.
    pub call_id: String,
    /// The session the call runs in.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    #[serde(default = "empty_object")]
    pub args: Json,
}

fn empty_object() -> Json {
    Json::Object(JsonObject::new())
}

/// `tool.cancel` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolCancel {
    /// The invocation's `callId`.
    pub call_id: String,
}

/// `tool.progress` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolProgress {
    /// The invocation's `callId`.
    pub call_id: String,
    /// Status text from the provider.
    pub message: String,
}

/// `tool.result` (host): `data` on success, `error` + `errorCode` on failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolResult {
    /// The invocation's `callId`.
    pub call_id: String,
    /// Success payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Json>,
    /// Failure message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failure code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
}

/// `delivery`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The session.
    pub session_id: String,
    /// `surface` = show in the timeline; `inject` = start a turn with it.
    pub level: PushLevel,
    /// Stream name.
    pub stream: String,
    /// The pushing provider's name.
    pub provider: String,
    /// Event text.
    pub event: String,
    /// A prompt for a full AI turn, when the provider sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Metadata pushed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// RFC 3339 time the gateway accepted it.
    pub ts: String,
}

/// A request that carries nothing but its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRef {
    /// Echoed in the answer.
    pub request_id: String,
}

/// `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReply {
    /// The request's id.
    pub request_id: String,
    /// The snapshot.
    pub status: GatewayStatus,
}

/// A snapshot of the gateway, as `tap status --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    /// `ws://127.0.0.1:PORT`.
    pub address: String,
    /// Gateway version.
    pub version: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Milliseconds since start.
    pub uptime_ms: u64,
    /// Registered sessions.
    pub sessions: Vec<SessionStatus>,
    /// Provider connections past authentication.
    pub providers: Vec<ProviderStatus>,
}

/// One session in [`GatewayStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// Session id.
    pub id: String,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Foreground flag.
    pub foreground: bool,
    /// Busy or idle.
    pub state: BusyState,
    /// The owning host's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
    /// The owning host's name (`hostName` in its `auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Whether the owning host is disconnected and may still resume.
    pub host_detached: bool,
    /// Current tool-set revision.
    pub tool_revision: u64,
    /// Names of all tools in the session.
    pub tools: Vec<String>,
}

/// One provider in [`GatewayStatus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    /// Debug id.
    pub id: String,
    /// Provider name (`null` before `hello`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Instance id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// `internal`, `project` or `external`.
    pub trust: String,
    /// Connection state: `awaitAuth`, `awaitHello`, `bound`, `unbound`.
    pub state: String,
    /// The bound session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Declared tools.
    pub tools: Vec<String>,
    /// Calls in flight.
    pub in_flight: usize,
    /// Remote address.
    pub remote: String,
    /// RFC 3339 connection time.
    pub connected_at: String,
}

/// `streams.history` (request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryRequest {
    /// Echoed in the answer.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// `stream` (every provider's stream of that name) or `stream@provider`; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Newest N per stream (all kept events when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

/// `streams.history` (answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryReply {
    /// The request's id.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// `stream@provider` → newest-first events.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

/// `tool.precheck`: what the session host is about to do, asked before it does it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPrecheck {
    /// Echoed in `tool.decision`.
    pub request_id: String,
    /// The session about to use the tool.
    pub session_id: String,
    /// Tool name (a provider's tool or one of the agent runtime's own, e.g. `shell`).
    pub tool: String,
    /// The arguments the tool would get.
    #[serde(default = "empty_object")]
    pub args: Json,
}

/// `tool.decision`: the combined outcome of every matching hook rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDecision {
    /// The `tool.precheck`'s `requestId`.
    pub request_id: String,
    /// `allow`, `deny` or `context` (allow, adding `context`).
    pub decision: PrecheckDecision,
    /// Why the use is denied (with `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Context to add to the conversation (with `context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// The decision of a `tool.precheck`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrecheckDecision {
    /// Go ahead.
    Allow,
    /// Do not use the tool; tell the model `reason`.
    Deny,
    /// Go ahead, and add `context`.
    Context,
}

/// `error` (host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostError {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human explanation.
    pub message: String,
    /// The `type` of the refused request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The refused request's `requestId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `prompt.apply`: the host is about to submit a prompt (Copilot's
/// `onUserPromptSubmitted`) and asks for the session's transforms and context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptApply {
    /// Echoed in `prompt.applied`.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// The user's prompt text (returned unchanged; transforms act on sections).
    #[serde(default)]
    pub prompt: String,
    /// Prompt sections the host can place: name → current text. Transforms apply to
    /// these only; a transform for a section not listed here is skipped.
    #[serde(default)]
    pub sections: BTreeMap<String, String>,
}

/// `prompt.applied`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptApplied {
    /// The request's id.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// The prompt, unchanged.
    pub prompt: String,
    /// Every section the host sent, transformed. `safety` and `identity` were
    /// transformed last and belong after the others in the assembled prompt.
    pub sections: BTreeMap<String, String>,
    /// The ambient `context` of every bound provider, in bind order (empty ones left out).
    pub context: Vec<String>,
}

/// `session.context`: one provider's `startup_context`, sent once per bind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The session.
    pub session_id: String,
    /// The provider's name.
    pub provider: String,
    /// The provider's `startup_context`, for the session's start context.
    pub startup_context: String,
}

/// `session.warning`: a problem with the session's project providers (its `tap.config.json`
/// is invalid, a provider cannot start, or keeps crashing and was given up). The session
/// itself is unaffected; show `message` to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionWarning {
    /// The session.
    pub session_id: String,
    /// What went wrong, for the user.
    pub message: String,
    /// The `tap.config.json` concerned (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The project provider concerned (its `name` in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

//! The TAP Provider Interface v2: every message in both directions.
//!
//! Field names follow the spec exactly (camelCase, except `startup_context`). Optional
//! fields are skipped when absent so the gateway never sends `null` where the spec
//! shows nothing.

use crate::wire::wire_messages;
use crate::{ErrorCode, Json, JsonObject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

wire_messages! {
    /// A message a provider sends to the gateway.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum ProviderMessage {
        /// First message on connect: a token, or `mode: "pair"`.
        "auth" => Auth(Auth),
        /// The pairing code the user typed.
        "auth.confirm" => AuthConfirm(AuthConfirm),
        /// Register: identity, session binding, tools, hooks, context.
        "hello" => Hello(Box<Hello>),
        /// Graceful disconnect.
        "goodbye" => Goodbye(Goodbye),
        /// An `"all"`-bound provider is ready for a new session.
        "session.ready" => SessionReady(SessionRef),
        /// The answer to a `tool.call` (or to a `tool.cancel`).
        "tool.result" => ToolResult(ToolResult),
        /// Incremental status of a slow tool call.
        "tool.progress" => ToolProgress(ToolProgress),
        /// The answer to a `gate.check`.
        "gate.result" => GateResult(GateResult),
        /// The answer to a `transform.request`.
        "transform.result" => TransformResult(TransformResult),
        /// An event for a stream (and maybe the session).
        "push" => Push(Push),
        /// Replace (or amend) the provider's tool list.
        "tools.update" => ToolsUpdate(ToolsUpdate),
        /// Change hook rules or transforms.
        "hooks.update" => HooksUpdate(HooksUpdate),
        /// Change ambient context.
        "context.update" => ContextUpdate(ContextUpdate),
        /// Set the gateway-side filter of one of the provider's streams.
        "filter.set" => FilterSet(FilterSet),
        /// Read stream history.
        "stream.query" => StreamQuery(StreamQuery),
        /// Async cleanup after `shutdown.pending` is done.
        "shutdown.ready" => ShutdownReady(SessionRef),
    }
}

wire_messages! {
    /// A message the gateway sends to a provider.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum GatewayMessage {
        /// Pairing started; the code is shown to the user, never sent here.
        "auth.pairing" => AuthPairing(AuthPairing),
        /// Active sessions, after successful auth.
        "sessions" => Sessions(Sessions),
        /// The session list changed.
        "sessions.updated" => SessionsUpdated(Sessions),
        /// Registration accepted; the provider is Bound.
        "hello.ack" => HelloAck(HelloAck),
        /// A state update was applied.
        "ack" => Ack(Ack),
        /// Something the provider sent was refused.
        "error" => Error(ErrorMessage),
        /// Run a tool.
        "tool.call" => ToolCall(ToolCall),
        /// Abort a tool call.
        "tool.cancel" => ToolCancel(ToolCancel),
        /// A gate rule matched; decide.
        "gate.check" => GateCheck(GateCheck),
        /// A callback transform is needed for a prompt section.
        "transform.request" => TransformRequest(TransformRequest),
        /// A session event the provider subscribed to.
        "session.event" => SessionEvent(SessionEvent),
        /// The session's state changed.
        "session.lifecycle" => SessionLifecycle(SessionLifecycle),
        /// The answer to a `stream.query`.
        "stream.history" => StreamHistory(StreamHistory),
    }
}

// ---------------------------------------------------------------- provider → gateway

/// `auth`: either `token` or `mode: "pair"`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Auth {
    /// Gateway token, per-provider token, or a token issued by pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `"pair"` to start the pairing flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Extension (pairing only): a name to show the user with the pairing request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Extension (pairing only): details to show the user with the pairing request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

/// `auth.confirm`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthConfirm {
    /// The 6-digit code the user typed.
    pub code: String,
}

/// `hello`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// Stable provider identity.
    pub name: String,
    /// Must be 2.
    pub protocol_version: u32,
    /// Session id to bind to, or `"all"`; omitted by gateway-spawned providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Instance id for multi-instance providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Token from a previous `hello.ack`, to restore a binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_token: Option<String>,
    /// Injected once into the session's start context.
    #[serde(
        default,
        rename = "startup_context",
        skip_serializing_if = "Option::is_none"
    )]
    pub startup_context: Option<String>,
    /// Provider-specific information shown for routing decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tool definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDef>>,
    /// Hook rules and transforms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Hooks>,
    /// Session event types to receive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<Vec<String>>,
    /// Ambient context added to every prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Concurrency limit for tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
}

/// A tool definition, as in `hello.tools` and `tools.update.tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name, unique within the session.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (an object schema; `{}` means "no arguments").
    #[serde(default = "empty_object")]
    pub parameters: Json,
    /// Per-call timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

fn empty_object() -> Json {
    Json::Object(JsonObject::new())
}

/// `hello.concurrency`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concurrency {
    /// Maximum concurrent in-flight calls.
    pub max: u32,
    /// What the limit applies to.
    #[serde(default)]
    pub scope: ConcurrencyScope,
}

/// The scope of a concurrency limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConcurrencyScope {
    /// Per `name` + `instance`.
    #[default]
    Instance,
    /// Across all instances of the provider.
    Provider,
    /// Per tool name.
    Tool,
}

/// `hello.hooks`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hooks {
    /// Rules evaluated before each tool use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_pre_tool_use: Option<Vec<HookRule>>,
    /// Prompt-section transforms; `null` removes one (in `hooks.update`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transforms: Option<BTreeMap<String, Option<Transform>>>,
}

/// An `onPreToolUse` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRule {
    /// What the rule matches.
    #[serde(rename = "match", default)]
    pub matcher: HookMatch,
    /// `deny`, `context` or `gate`.
    pub action: HookAction,
    /// Why (for `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Added context (for `context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Gate id echoed in `gate.check` (for `gate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// Allow instead of deny when the gate does not answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_open: bool,
}

/// `match` of a hook rule. Unknown keys (the spec's example shows `file`) are kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HookMatch {
    /// Tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Regex over `JSON.stringify(args)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
    /// Only this provider's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Matcher keys this gateway does not interpret.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The action of a hook rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookAction {
    /// Block the call with `reason`.
    Deny,
    /// Allow, adding `content` as context.
    Context,
    /// Ask the provider with `gate.check`.
    Gate,
}

/// A prompt-section transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    /// How the section changes.
    pub action: TransformAction,
    /// Static content for append / prepend / replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// How a transform changes a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransformAction {
    /// Add content after the section.
    Append,
    /// Add content before the section.
    Prepend,
    /// Replace the section.
    Replace,
    /// Ask the provider with `transform.request`.
    Callback,
}

/// `goodbye`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Goodbye {
    /// Why the provider leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `session.ready` and `shutdown.ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    /// The session concerned.
    pub session_id: String,
}

/// `tool.result`. Exactly one of `data`, `error` or `file` should be present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The `tool.call` id.
    pub id: String,
    /// Success payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Json>,
    /// Failure message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failure code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Whether the gateway may retry on another instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// A large result written to `persistDir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileRef>,
}

/// `tool.result.file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRef {
    /// Absolute path inside the provider's `persistDir`.
    pub path: String,
    /// MIME type of the file.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// Seconds until the provider may delete it.
    pub ttl: u64,
}

/// `tool.progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// The `tool.call` id.
    pub id: String,
    /// Human-readable status.
    pub message: String,
}

/// `gate.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateResult {
    /// The rule's gate id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// The `gate.check` call id.
    pub call_id: String,
    /// The decision.
    pub decision: GateDecision,
    /// Why (denial reason or added context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateDecision {
    /// Proceed.
    Allow,
    /// Block.
    Deny,
    /// Proceed, adding `reason` as context.
    Context,
}

/// `transform.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransformResult {
    /// The `transform.request` call id.
    pub call_id: String,
    /// The new section content.
    pub content: String,
}

/// `push`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Push {
    /// `keep`, `surface` or `inject`.
    pub level: PushLevel,
    /// Event text (required unless `prompt` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// A prompt that starts a full AI turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Stream name; defaults to the provider name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Target session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Push to every bound session (`"all"`-bound providers).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broadcast: bool,
    /// Stored with the stream entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

/// Delivery level of a pushed event (and a filter outcome, with `Drop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PushLevel {
    /// Store in the stream only.
    Keep,
    /// Store and show in the session timeline.
    Surface,
    /// Store, show, and start a turn.
    Inject,
}

/// `tools.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsUpdate {
    /// Correlates the `ack` (required by v2; optional in the Core Profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The new tool list (or the tools to add, with `remove`).
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    /// Tool names to remove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
}

/// `hooks.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HooksUpdate {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// New pre-tool-use rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_pre_tool_use: Option<Vec<HookRule>>,
    /// Transform changes; `null` removes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transforms: Option<BTreeMap<String, Option<Transform>>>,
}

/// `context.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUpdate {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The new ambient context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// `filter.set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterSet {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The provider's own stream.
    pub stream: String,
    /// Rules, first match wins.
    #[serde(default)]
    pub rules: Vec<FilterRule>,
}

/// One `filter.set` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterRule {
    /// Regex over the event text.
    #[serde(rename = "match")]
    pub pattern: String,
    /// `drop`, `keep`, `surface` or `inject`.
    pub outcome: FilterOutcome,
}

/// What a filter rule does with a matching event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterOutcome {
    /// Discard the event.
    Drop,
    /// Store only.
    Keep,
    /// Store and show.
    Surface,
    /// Store, show, start a turn.
    Inject,
}

/// `stream.query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamQuery {
    /// Echoed in `stream.history`.
    pub query_id: String,
    /// Which session's streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `stream` (own) or `stream@provider` keys; all own streams when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<String>>,
    /// Newest N events per stream (at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

// ---------------------------------------------------------------- gateway → provider

/// `auth.pairing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthPairing {
    /// What the provider should ask the user.
    pub prompt: String,
}

/// `sessions` and `sessions.updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sessions {
    /// Token for reconnecting, after pairing only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Active sessions.
    pub active: Vec<SessionInfo>,
}

/// One entry of `sessions.active`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Globally unique session id.
    pub id: String,
    /// Human label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Working directory (only where the provider is authorized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Whether this is the foreground session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground: Option<bool>,
}

/// `hello.ack`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelloAck {
    /// Always 2.
    pub protocol_version: u32,
    /// Stable debug id.
    pub provider_id: String,
    /// The bound session (`"all"` for broadcast binding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Include in a later `hello` to restore this binding (valid 30 s after disconnect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_token: Option<String>,
    /// A directory for the provider's cross-session state (local providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persist_dir: Option<String>,
}

/// `ack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ack {
    /// The update's `requestId`.
    pub request_id: String,
    /// The session the revision applies to.
    pub session_id: String,
    /// Revision per (provider, session), monotonically increasing.
    pub revision: u64,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorMessage {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human explanation.
    pub message: String,
    /// The `type` of the message being answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The `requestId` of the failed update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The provider's debug id, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// The session concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl ErrorMessage {
    /// An error with just a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            reply_to: None,
            request_id: None,
            provider_id: None,
            session_id: None,
        }
    }
}

/// `tool.call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Globally unique call id.
    pub id: String,
    /// The calling session.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Json,
}

/// `tool.cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCancel {
    /// The call id.
    pub id: String,
    /// The calling session.
    pub session_id: String,
    /// Why: `timeout`, `cancelled` (by the caller), `session ended`, `rebind`.
    pub reason: String,
}

/// `gate.check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateCheck {
    /// The rule's gate id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// Globally unique check id.
    pub call_id: String,
    /// The session about to use the tool.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Tool arguments.
    pub args: Json,
}

/// `transform.request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransformRequest {
    /// Globally unique request id.
    pub call_id: String,
    /// The session whose prompt is being built.
    pub session_id: String,
    /// Section name.
    pub section: String,
    /// The section's content so far.
    pub current: String,
}

/// `session.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    /// The session.
    pub session_id: String,
    /// `user.message`, `assistant.message`, `tool.execution_complete`, `assistant.intent`.
    pub event: String,
    /// The event payload.
    pub data: Json,
}

/// `session.lifecycle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionLifecycle {
    /// The session.
    pub session_id: String,
    /// The new state.
    pub state: LifecycleState,
    /// Milliseconds left before teardown (`shutdown.pending` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
}

/// A `session.lifecycle` state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LifecycleState {
    /// The session is ready.
    #[serde(rename = "started")]
    Started,
    /// The session has no work in flight.
    #[serde(rename = "idle")]
    Idle,
    /// The session is ending; clean up before the deadline.
    #[serde(rename = "shutdown.pending")]
    ShutdownPending,
}

/// `stream.history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamHistory {
    /// The query's id.
    pub query_id: String,
    /// `stream@provider` → newest-first events.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

/// One event of a stream, as stored and as returned by queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct StreamEntry {
    /// RFC 3339 time the gateway accepted it.
    pub ts: String,
    /// Event text.
    pub event: String,
    /// Level it was delivered at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<PushLevel>,
    /// Metadata pushed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

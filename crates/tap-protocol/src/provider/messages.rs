//! The two message enums, one per direction: every message's wire `type` and payload.

use super::{
    Ack, Auth, AuthConfirm, AuthPairing, ContextUpdate, ErrorMessage, FilterSet, GateCheck,
    GateResult, Goodbye, Hello, HelloAck, HooksUpdate, Push, SessionEvent, SessionLifecycle,
    SessionRef, Sessions, StreamHistory, StreamQuery, ToolCall, ToolCancel, ToolProgress,
    ToolResult, ToolsUpdate, TransformRequest, TransformResult,
};
use crate::wire::wire_messages;
use serde::{Deserialize, Serialize};

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

//! The two message enums, one per direction: every message's wire `type` and payload.

use super::{
    ApprovalAnswer, ApprovalAsk, ApprovalWithdrawn, Delivery, HostAuth, HostAuthOk, HostError,
    HostSessionEvent, HostToolCancel, HostToolProgress, HostToolResult, PromptApplied, PromptApply,
    RequestRef, SessionContext, SessionEnd, SessionEnded, SessionModeResult, SessionModeSet,
    SessionRegister, SessionRegistered, SessionStateReport, SessionTools, SessionWarning,
    StatusReply, StreamsHistoryReply, StreamsHistoryRequest, ToolDecision, ToolInvoke,
    ToolPrecheck,
};
use crate::wire::wire_messages;
use serde::{Deserialize, Serialize};

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
        /// The user's answer to an `approval.ask`.
        "approval.answer" => ApprovalAnswer(ApprovalAnswer),
        /// Whether the host switched the mode a `session.mode.set` asked for.
        "session.mode.result" => SessionModeResult(SessionModeResult),
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
            Self::SessionModeResult(m) => Some(&m.request_id),
            Self::ApprovalAnswer(_) => None,
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
        /// A call of a session this host owns waits for the user's approval: ask them.
        "approval.ask" => ApprovalAsk(ApprovalAsk),
        /// An asked approval was decided elsewhere or its wait ended.
        "approval.withdrawn" => ApprovalWithdrawn(ApprovalWithdrawn),
        /// The user approved switching the session's mode: switch it.
        "session.mode.set" => SessionModeSet(SessionModeSet),
        /// A request was refused.
        "error" => Error(HostError),
    }
}

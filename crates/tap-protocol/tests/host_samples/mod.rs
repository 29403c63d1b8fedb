//! Sample messages of every kind for `host_messages.rs`: one value per variant, in a fixed
//! order the shape tests index into.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use tap_protocol::host::*;
use tap_protocol::provider::{PushLevel, SessionInfo, StreamEntry};
use tap_protocol::{ErrorCode, JsonObject};

pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

pub fn all_requests() -> Vec<HostRequest> {
    vec![
        HostRequest::Auth(HostAuth {
            token: "htk-1".into(),
            protocol_version: 1,
            host_name: Some("tap-cli".into()),
            resume_token: Some("rt-9".into()),
            pending_calls: Some(vec!["call-1".into(), "call-2".into()]),
        }),
        HostRequest::Auth(HostAuth {
            token: "htk-1".into(),
            protocol_version: 1,
            ..HostAuth::default()
        }),
        HostRequest::SessionRegister(SessionRegister {
            request_id: "r-1".into(),
            session_id: Some("abc123".into()),
            label: Some("PR #42".into()),
            cwd: Some("/code/foo".into()),
            foreground: true,
            profile: None,
            mode: None,
            model: None,
            capabilities: None,
        }),
        HostRequest::SessionEnd(SessionEnd {
            request_id: "r-2".into(),
            session_id: "abc123".into(),
        }),
        HostRequest::SessionState(SessionStateReport {
            session_id: "abc123".into(),
            state: BusyState::Busy,
            mode: None,
            model: None,
            capabilities: None,
        }),
        HostRequest::SessionState(SessionStateReport {
            session_id: "abc123".into(),
            state: BusyState::Idle,
            mode: Some("autopilot".into()),
            model: Some("claude-sonnet-4.5".into()),
            capabilities: Some(HostCapabilities::default()),
        }),
        HostRequest::SessionEvent(HostSessionEvent {
            session_id: "abc123".into(),
            event: "tool.execution_complete".into(),
            data: json!({ "tool": "greet", "args": {}, "result": { "type": "success" }, "durationMs": 12 }),
        }),
        HostRequest::ToolInvoke(ToolInvoke {
            call_id: "c-1".into(),
            session_id: "abc123".into(),
            tool: "greet".into(),
            args: json!({ "name": "Alice" }),
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
        }),
        HostRequest::ToolCancel(HostToolCancel {
            call_id: "c-1".into(),
        }),
        HostRequest::StatusGet(RequestRef {
            request_id: "r-3".into(),
        }),
        HostRequest::StreamsHistory(StreamsHistoryRequest {
            request_id: "r-4".into(),
            session_id: "abc123".into(),
            stream: Some("ci-watch@ci-watcher".into()),
            last: Some(10),
        }),
        HostRequest::ToolPrecheck(ToolPrecheck {
            request_id: "r-6".into(),
            session_id: "abc123".into(),
            tool: "shell".into(),
            args: json!({ "command": "git push origin main" }),
        }),
        HostRequest::PromptApply(PromptApply {
            request_id: "r-7".into(),
            session_id: "abc123".into(),
            prompt: "fix the bug".into(),
            sections: BTreeMap::from([("instructions".into(), "Use pnpm.".into())]),
        }),
    ]
}

pub fn entry(ts: &str, event: &str) -> StreamEntry {
    StreamEntry {
        ts: ts.into(),
        event: event.into(),
        level: Some(PushLevel::Surface),
        metadata: Some(obj(json!({ "runId": 1 }))),
    }
}

pub fn all_events() -> Vec<HostEvent> {
    let mut streams = BTreeMap::new();
    streams.insert(
        "ci-watch@ci-watcher".to_string(),
        vec![
            entry("2026-04-26T14:01:00Z", "failed"),
            entry("2026-04-26T14:00:00Z", "running"),
        ],
    );
    vec![
        HostEvent::AuthOk(HostAuthOk {
            protocol_version: 1,
            host_id: "h-1".into(),
            resume_token: "rt-9".into(),
            resumed: vec!["abc123".into()],
        }),
        HostEvent::SessionRegistered(SessionRegistered {
            request_id: "r-1".into(),
            session: SessionInfo {
                id: "abc123".into(),
                label: Some("PR #42".into()),
                cwd: Some("/code/foo".into()),
                foreground: Some(true),
            },
            tools_pending: false,
        }),
        HostEvent::SessionEnded(SessionEnded {
            request_id: Some("r-2".into()),
            session_id: "abc123".into(),
            reason: "ended by host".into(),
        }),
        HostEvent::SessionEnded(SessionEnded {
            request_id: None,
            session_id: "abc123".into(),
            reason: "host did not resume".into(),
        }),
        HostEvent::SessionTools(SessionTools {
            session_id: "abc123".into(),
            revision: 4,
            tools: vec![HostTool {
                name: "greet".into(),
                description: "Say hello".into(),
                parameters:
                    json!({ "type": "object", "properties": { "name": { "type": "string" } } })
                        .into(),
                provider: "my-provider".into(),
                provider_id: "p-8f3a".into(),
                timeout_ms: 120_000,
            }],
        }),
        HostEvent::ToolProgress(HostToolProgress {
            call_id: "c-1".into(),
            message: "Capturing... 60%".into(),
        }),
        HostEvent::ToolResult(HostToolResult {
            call_id: "c-1".into(),
            data: Some(json!("Hello, Alice!")),
            error: None,
            error_code: None,
        }),
        HostEvent::ToolResult(HostToolResult {
            call_id: "c-2".into(),
            data: None,
            error: Some("Provider disconnected".into()),
            error_code: Some(ErrorCode::Disconnected),
        }),
        HostEvent::Delivery(Delivery {
            session_id: "abc123".into(),
            level: PushLevel::Inject,
            stream: "ci-watch".into(),
            provider: "ci-watcher".into(),
            event: "CI failed".into(),
            prompt: Some("Fix it".into()),
            metadata: Some(obj(json!({ "kind": "ci-failure" }))),
            ts: "2026-04-26T14:01:00Z".into(),
        }),
        HostEvent::Status(StatusReply {
            request_id: "r-3".into(),
            status: GatewayStatus {
                address: "ws://127.0.0.1:9400".into(),
                version: "0.1.0".into(),
                started_at: "2026-04-26T14:00:00Z".into(),
                uptime_ms: 60_000,
                sessions: vec![SessionStatus {
                    id: "abc123".into(),
                    label: Some("PR #42".into()),
                    cwd: Some("/code/foo".into()),
                    foreground: true,
                    state: BusyState::Idle,
                    host_id: Some("h-1".into()),
                    host_name: Some("copilot".into()),
                    host_detached: false,
                    tool_revision: 4,
                    tools: vec!["greet".into()],
                }],
                providers: vec![ProviderStatus {
                    id: "p-8f3a".into(),
                    name: Some("my-provider".into()),
                    instance: Some("tab-a3f8".into()),
                    trust: "project".into(),
                    state: "bound".into(),
                    session: Some("abc123".into()),
                    tools: vec!["greet".into()],
                    in_flight: 2,
                    remote: "127.0.0.1:51234".into(),
                    connected_at: "2026-04-26T14:00:01Z".into(),
                }],
                history: None,
            },
        }),
        HostEvent::StreamsHistory(StreamsHistoryReply {
            request_id: "r-4".into(),
            session_id: "abc123".into(),
            streams,
        }),
        HostEvent::ToolDecision(ToolDecision {
            request_id: "r-6".into(),
            decision: PrecheckDecision::Deny,
            reason: Some("CI is failing".into()),
            context: None,
        }),
        HostEvent::SessionWarning(SessionWarning {
            session_id: "abc123".into(),
            message: "tap.config.json: providers[0]: 'command' is missing".into(),
            config: Some("/code/foo/tap.config.json".into()),
            provider: None,
        }),
        HostEvent::Error(HostError {
            code: ErrorCode::InvalidSession,
            message: "Session def456 does not exist".into(),
            reply_to: Some("tool.invoke".into()),
            request_id: Some("r-5".into()),
        }),
        HostEvent::PromptApplied(PromptApplied {
            request_id: "r-7".into(),
            session_id: "abc123".into(),
            prompt: "fix the bug".into(),
            sections: BTreeMap::from([("safety".into(), "Be safe.".into())]),
            context: vec!["CI is passing.".into()],
        }),
        HostEvent::SessionContext(SessionContext {
            session_id: "abc123".into(),
            provider: "ci".into(),
            startup_context: "Provider loaded.".into(),
        }),
    ]
}

/// Exhaustive: adding a variant without covering it here fails to build.
pub fn event_type(e: &HostEvent) -> &'static str {
    match e {
        HostEvent::AuthOk(_) => "auth.ok",
        HostEvent::SessionRegistered(_) => "session.registered",
        HostEvent::SessionEnded(_) => "session.ended",
        HostEvent::SessionTools(_) => "session.tools",
        HostEvent::ToolProgress(_) => "tool.progress",
        HostEvent::ToolResult(_) => "tool.result",
        HostEvent::Delivery(_) => "delivery",
        HostEvent::Status(_) => "status",
        HostEvent::StreamsHistory(_) => "streams.history",
        HostEvent::ToolDecision(_) => "tool.decision",
        HostEvent::PromptApplied(_) => "prompt.applied",
        HostEvent::SessionContext(_) => "session.context",
        HostEvent::SessionWarning(_) => "session.warning",
        HostEvent::Error(_) => "error",
        HostEvent::ApprovalAsk(_) => "approval.ask",
        HostEvent::ApprovalWithdrawn(_) => "approval.withdrawn",
        HostEvent::SessionModeSet(_) => "session.mode.set",
    }
}

/// What the gateway asks of a host's user, and the host's answers (`host/asks.rs`).
pub fn ask_requests() -> Vec<HostRequest> {
    vec![
        HostRequest::ApprovalAnswer(ApprovalAnswer {
            approval_id: "a-1".into(),
            answer: HostApprovalAnswer::Session,
        }),
        HostRequest::SessionModeResult(SessionModeResult {
            request_id: "m-1".into(),
            ok: true,
            mode: Some("plan".into()),
            message: None,
        }),
        HostRequest::SessionModeResult(SessionModeResult {
            request_id: "m-2".into(),
            ok: false,
            mode: None,
            message: Some("not now".into()),
        }),
    ]
}

pub fn ask_events() -> Vec<HostEvent> {
    vec![
        HostEvent::ApprovalAsk(ApprovalAsk {
            session_id: "abc123".into(),
            approval_id: "a-1".into(),
            tool: "delete_file".into(),
            provider: "files".into(),
            message: "Tap: approve the call to 'delete_file' of files?".into(),
            args: r#"{"path":"/tmp/x"}"#.into(),
            choices: vec![
                ApprovalChoice {
                    value: HostApprovalAnswer::Once,
                    title: "Approve once".into(),
                },
                ApprovalChoice {
                    value: HostApprovalAnswer::Deny,
                    title: "Deny".into(),
                },
            ],
        }),
        HostEvent::ApprovalWithdrawn(ApprovalWithdrawn {
            approval_id: "a-1".into(),
            outcome: WithdrawnOutcome::TimedOut,
        }),
        HostEvent::SessionModeSet(SessionModeSet {
            request_id: "m-1".into(),
            session_id: "abc123".into(),
            mode: "plan".into(),
        }),
    ]
}

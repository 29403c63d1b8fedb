//! Gateway → provider: every JSON example of the two spec documents deserializes as
//! [`GatewayMessage`] into the expected value, and serializing the typed value gives JSON
//! equal to the spec example. That pins field names and casing (`replyTo`, `providerId`,
//! `sessionId`, ...) and that absent optional fields are omitted rather than sent as `null`.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use tap_protocol::provider::*;
use tap_protocol::ErrorCode;

/// `spec` parses as `expected`, and `expected` serializes back to exactly `spec`.
fn assert_wire(spec: &str, expected: GatewayMessage) {
    let spec_value: Value =
        serde_json::from_str(spec).unwrap_or_else(|e| panic!("spec example is not JSON: {e}"));
    let decoded: GatewayMessage = serde_json::from_str(spec)
        .unwrap_or_else(|e| panic!("spec example failed to deserialize: {e}\n{spec}"));
    assert_eq!(decoded, expected, "decoded value differs\n{spec}");
    let serialized = serde_json::to_value(&expected).unwrap();
    assert_eq!(
        serialized, spec_value,
        "serialized value differs from the spec example"
    );
    // And the decoded value serializes identically (nothing lost in between).
    assert_eq!(serde_json::to_value(&decoded).unwrap(), spec_value);
}

fn session(id: &str, label: Option<&str>, cwd: Option<&str>) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        label: label.map(Into::into),
        cwd: cwd.map(Into::into),
        foreground: None,
    }
}

fn no_nulls(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => a.iter().all(no_nulls),
        Value::Object(o) => o.values().all(no_nulls),
        _ => true,
    }
}

// ------------------------------------------------------------------ auth.pairing, sessions

#[test]
fn auth_pairing() {
    // v2 "auth.pairing — pairing initiated for external providers".
    assert_wire(
        r#"{
"type": "auth.pairing",
"prompt": "Enter the pairing code shown in your Copilot session"
}"#,
        GatewayMessage::AuthPairing(AuthPairing {
            prompt: "Enter the pairing code shown in your Copilot session".into(),
        }),
    );
}

#[test]
fn sessions_with_token_after_pairing() {
    // v2 "External providers" step 6.
    assert_wire(
        r#"{
"type": "sessions",
"token": "ext-tok-9f2b...",
"active": [
{ "id": "abc123", "label": "PR #42 review" }
]
}"#,
        GatewayMessage::Sessions(Sessions {
            token: Some("ext-tok-9f2b...".into()),
            active: vec![session("abc123", Some("PR #42 review"), None)],
        }),
    );
}

#[test]
fn sessions_with_token_and_cwd() {
    // v2 "sessions — active session list".
    assert_wire(
        r#"{
"type": "sessions",
"token": "ext-tok-9f2b...",
"active": [
{ "id": "abc123", "label": "PR #42 review", "cwd": "/code/foo" },
{ "id": "def456", "label": "feature/auth", "cwd": "/code/bar" }
]
}"#,
        GatewayMessage::Sessions(Sessions {
            token: Some("ext-tok-9f2b...".into()),
            active: vec![
                session("abc123", Some("PR #42 review"), Some("/code/foo")),
                session("def456", Some("feature/auth"), Some("/code/bar")),
            ],
        }),
    );
}

#[test]
fn sessions_core_without_token() {
    // core "sessions — Gateway → Provider": no `token` for project providers.
    assert_wire(
        r#"{ "type": "sessions", "active": [{ "id": "abc123", "label": "PR #42", "cwd": "/code/foo" }] }"#,
        GatewayMessage::Sessions(Sessions {
            token: None,
            active: vec![session("abc123", Some("PR #42"), Some("/code/foo"))],
        }),
    );
}

#[test]
fn sessions_empty() {
    assert_wire(
        r#"{ "type": "sessions", "active": [] }"#,
        GatewayMessage::Sessions(Sessions::default()),
    );
}

#[test]
fn sessions_updated_same_shape_as_sessions() {
    // v2 "sessions.updated — Same shape as `sessions`", with the registry's `foreground`.
    assert_wire(
        r#"{
"type": "sessions.updated",
"active": [
{ "id": "abc", "label": "PR #42 review", "cwd": "/code/foo", "foreground": true },
{ "id": "def", "label": "feature/auth", "cwd": "/code/bar", "foreground": false }
]
}"#,
        GatewayMessage::SessionsUpdated(Sessions {
            token: None,
            active: vec![
                SessionInfo {
                    foreground: Some(true),
                    ..session("abc", Some("PR #42 review"), Some("/code/foo"))
                },
                SessionInfo {
                    foreground: Some(false),
                    ..session("def", Some("feature/auth"), Some("/code/bar"))
                },
            ],
        }),
    );
}

#[test]
fn session_registry_entries() {
    // v2 "Session registry".
    let json = r#"[
{ "id": "abc", "label": "PR #42 review", "cwd": "/code/foo", "foreground": true },
{ "id": "def", "label": "feature/auth", "cwd": "/code/bar", "foreground": false }
]"#;
    let entries: Vec<SessionInfo> = serde_json::from_str(json).unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].id, "abc");
    assert_eq!(entries[0].foreground, Some(true));
    assert_eq!(entries[1].cwd.as_deref(), Some("/code/bar"));
    assert_eq!(entries[1].foreground, Some(false));
    assert_eq!(
        serde_json::to_value(&entries).unwrap(),
        serde_json::from_str::<Value>(json).unwrap()
    );
}

// ------------------------------------------------------------------ hello.ack, ack, error

#[test]
fn hello_ack_full() {
    // v2 "hello.ack — registration acknowledged".
    assert_wire(
        r#"{
"type": "hello.ack",
"protocolVersion": 2,
"providerId": "p-8f3a",
"reconnectToken": "tok-xyz789",
"persistDir": "/home/user/.copilot/providers/my-provider/"
}"#,
        GatewayMessage::HelloAck(HelloAck {
            protocol_version: 2,
            provider_id: "p-8f3a".into(),
            session_id: None,
            reconnect_token: Some("tok-xyz789".into()),
            persist_dir: Some("/home/user/.copilot/providers/my-provider/".into()),
        }),
    );
}

#[test]
fn hello_ack_core() {
    // core "hello.ack — Gateway → Provider".
    assert_wire(
        r#"{ "type": "hello.ack", "protocolVersion": 2, "providerId": "p-8f3a", "sessionId": "abc123" }"#,
        GatewayMessage::HelloAck(HelloAck {
            protocol_version: 2,
            provider_id: "p-8f3a".into(),
            session_id: Some("abc123".into()),
            ..HelloAck::default()
        }),
    );
}

#[test]
fn hello_ack_omits_absent_optional_fields() {
    let v = serde_json::to_value(GatewayMessage::HelloAck(HelloAck {
        protocol_version: 2,
        provider_id: "p-1".into(),
        ..HelloAck::default()
    }))
    .unwrap();
    assert_eq!(
        v,
        json!({ "type": "hello.ack", "protocolVersion": 2, "providerId": "p-1" })
    );
    assert!(no_nulls(&v));
}

#[test]
fn ack() {
    // v2 "Update acknowledgments".
    assert_wire(
        r#"{ "type": "ack", "requestId": "req-42", "sessionId": "abc123", "revision": 3 }"#,
        GatewayMessage::Ack(Ack {
            request_id: "req-42".into(),
            session_id: "abc123".into(),
            revision: 3,
        }),
    );
}

#[test]
fn error_with_reply_to() {
    // v2 "Error responses".
    assert_wire(
        r#"{
"type": "error",
"code": "INVALID_SESSION",
"message": "Session def456 does not exist",
"replyTo": "hello"
}"#,
        GatewayMessage::Error(ErrorMessage {
            reply_to: Some("hello".into()),
            ..ErrorMessage::new(ErrorCode::InvalidSession, "Session def456 does not exist")
        }),
    );
}

#[test]
fn error_with_provider_and_session() {
    // v2 "Errors include providerId and sessionId when applicable".
    assert_wire(
        r#"{
"type": "error",
"code": "TOOL_CONFLICT",
"message": "Tool 'screenshot' already registered by provider 'browser-tab-a'",
"replyTo": "tools.update",
"providerId": "p-8f3a",
"sessionId": "abc123"
}"#,
        GatewayMessage::Error(ErrorMessage {
            code: ErrorCode::ToolConflict,
            message: "Tool 'screenshot' already registered by provider 'browser-tab-a'".into(),
            reply_to: Some("tools.update".into()),
            request_id: None,
            provider_id: Some("p-8f3a".into()),
            session_id: Some("abc123".into()),
        }),
    );
}

#[test]
fn error_core_with_provider_id() {
    // core "error — Gateway → Provider".
    assert_wire(
        r#"{ "type": "error", "code": "INVALID_SESSION", "message": "Session def456 does not exist",
"replyTo": "hello", "providerId": "p-8f3a" }"#,
        GatewayMessage::Error(ErrorMessage {
            reply_to: Some("hello".into()),
            provider_id: Some("p-8f3a".into()),
            ..ErrorMessage::new(ErrorCode::InvalidSession, "Session def456 does not exist")
        }),
    );
}

#[test]
fn error_with_request_id() {
    // v2: "On failure, the gateway sends `error` with the same `requestId` instead of `ack`."
    assert_wire(
        r#"{ "type": "error", "code": "RATE_LIMITED", "message": "update in flight", "replyTo": "tools.update", "requestId": "req-43" }"#,
        GatewayMessage::Error(ErrorMessage {
            reply_to: Some("tools.update".into()),
            request_id: Some("req-43".into()),
            ..ErrorMessage::new(ErrorCode::RateLimited, "update in flight")
        }),
    );
}

#[test]
fn error_new_serializes_only_code_and_message() {
    let v = serde_json::to_value(GatewayMessage::Error(ErrorMessage::new(
        ErrorCode::UnknownType,
        "Unknown message type 'x'",
    )))
    .unwrap();
    assert_eq!(
        v,
        json!({ "type": "error", "code": "UNKNOWN_TYPE", "message": "Unknown message type 'x'" })
    );
}

// ------------------------------------------------------------------ tool.call, tool.cancel

#[test]
fn tool_call() {
    // v2 "tool.call — Copilot invoked a provider's tool".
    assert_wire(
        r#"{
"type": "tool.call",
"id": "call-123",
"sessionId": "abc123",
"tool": "my_tool",
"args": { "query": "find active users" }
}"#,
        GatewayMessage::ToolCall(ToolCall {
            id: "call-123".into(),
            session_id: "abc123".into(),
            tool: "my_tool".into(),
            args: json!({ "query": "find active users" }),
            traceparent: None,
        }),
    );
}

#[test]
fn tool_call_core() {
    // core "tool.call — Gateway → Provider".
    assert_wire(
        r#"{ "type": "tool.call", "id": "call-123", "sessionId": "abc123", "tool": "greet", "args": { "name": "Alice" } }"#,
        GatewayMessage::ToolCall(ToolCall {
            id: "call-123".into(),
            session_id: "abc123".into(),
            tool: "greet".into(),
            args: json!({ "name": "Alice" }),
            traceparent: None,
        }),
    );
}

#[test]
fn tool_call_with_traceparent() {
    // Ours: the gateway's span for the call, so a provider may continue the trace.
    assert_wire(
        r#"{ "type": "tool.call", "id": "call-123", "sessionId": "abc123", "tool": "greet", "args": {}, "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }"#,
        GatewayMessage::ToolCall(ToolCall {
            id: "call-123".into(),
            session_id: "abc123".into(),
            tool: "greet".into(),
            args: json!({}),
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
        }),
    );
}

#[test]
fn tool_cancel() {
    // v2 "tool.cancel — abort an in-flight tool call".
    let expected = GatewayMessage::ToolCancel(ToolCancel {
        id: "call-123".into(),
        session_id: "abc123".into(),
        reason: "timeout".into(),
    });
    assert_wire(
        r#"{
"type": "tool.cancel",
"id": "call-123",
"sessionId": "abc123",
"reason": "timeout"
}"#,
        expected.clone(),
    );
    // core one-liner.
    assert_wire(
        r#"{ "type": "tool.cancel", "id": "call-123", "sessionId": "abc123", "reason": "timeout" }"#,
        expected,
    );
}

// ------------------------------------------------------------------ gate.check, transform.request

#[test]
fn gate_check() {
    // v2 "gate.check — a hook rule matched, provider evaluates".
    assert_wire(
        r#"{
"type": "gate.check",
"gateId": "check-before-push",
"callId": "gate-456",
"sessionId": "abc123",
"tool": "shell",
"args": { "command": "git push origin main" }
}"#,
        GatewayMessage::GateCheck(GateCheck {
            gate_id: Some("check-before-push".into()),
            call_id: "gate-456".into(),
            session_id: "abc123".into(),
            tool: "shell".into(),
            args: json!({ "command": "git push origin main" }),
        }),
    );
}

#[test]
fn transform_request() {
    // v2 "transform.request — dynamic transform callback".
    assert_wire(
        r#"{
"type": "transform.request",
"callId": "tx-789",
"sessionId": "abc123",
"section": "custom_instructions",
"current": "...existing section content..."
}"#,
        GatewayMessage::TransformRequest(TransformRequest {
            call_id: "tx-789".into(),
            session_id: "abc123".into(),
            section: "custom_instructions".into(),
            current: "...existing section content...".into(),
        }),
    );
}

// ------------------------------------------------------------------ session.event, session.lifecycle

#[test]
fn session_event() {
    // v2 "session.event — forwarded session events".
    assert_wire(
        r#"{
"type": "session.event",
"sessionId": "abc123",
"event": "user.message",
"data": { "content": "fix the auth bug" }
}"#,
        GatewayMessage::SessionEvent(SessionEvent {
            session_id: "abc123".into(),
            event: "user.message".into(),
            data: json!({ "content": "fix the auth bug" }),
        }),
    );
}

#[test]
fn session_lifecycle_all_three_states() {
    // v2 and core "session.lifecycle" (identical in both documents).
    let lifecycle = |state, deadline| {
        GatewayMessage::SessionLifecycle(SessionLifecycle {
            session_id: "abc123".into(),
            state,
            deadline,
        })
    };
    assert_wire(
        r#"{ "type": "session.lifecycle", "sessionId": "abc123", "state": "started" }"#,
        lifecycle(LifecycleState::Started, None),
    );
    assert_wire(
        r#"{ "type": "session.lifecycle", "sessionId": "abc123", "state": "idle" }"#,
        lifecycle(LifecycleState::Idle, None),
    );
    assert_wire(
        r#"{ "type": "session.lifecycle", "sessionId": "abc123", "state": "shutdown.pending", "deadline": 10000 }"#,
        lifecycle(LifecycleState::ShutdownPending, Some(10_000)),
    );
}

// ------------------------------------------------------------------ stream.history

#[test]
fn stream_history() {
    // v2 "stream.history — response to stream query".
    let entry = |ts: &str, event: &str| StreamEntry {
        ts: ts.into(),
        event: event.into(),
        level: None,
        metadata: None,
    };
    let mut streams = BTreeMap::new();
    streams.insert(
        "ci-watch@ci-watcher".to_string(),
        vec![
            entry("2026-04-26T14:01:00Z", "failure on test/auth.spec.ts"),
            entry("2026-04-26T14:00:00Z", "running"),
        ],
    );
    streams.insert(
        "git-watch@guardian".to_string(),
        vec![entry("2026-04-26T14:00:30Z", "behind=2")],
    );
    assert_wire(
        r#"{
"type": "stream.history",
"queryId": "q-1",
"streams": {
"ci-watch@ci-watcher": [
{ "ts": "2026-04-26T14:01:00Z", "event": "failure on test/auth.spec.ts" },
{ "ts": "2026-04-26T14:00:00Z", "event": "running" }
],
"git-watch@guardian": [
{ "ts": "2026-04-26T14:00:30Z", "event": "behind=2" }
]
}
}"#,
        GatewayMessage::StreamHistory(StreamHistory {
            query_id: "q-1".into(),
            streams,
        }),
    );
}

#[test]
fn stream_history_entry_with_level_and_metadata() {
    let json = r#"{ "type": "stream.history", "queryId": "q-2", "streams": { "ci-watch@ci-watcher": [
{ "ts": "2026-04-26T14:01:00Z", "event": "CI failed", "level": "inject", "metadata": { "runId": 12345 } } ] } }"#;
    let GatewayMessage::StreamHistory(h) = serde_json::from_str(json).unwrap() else {
        panic!("expected StreamHistory")
    };
    let e = &h.streams["ci-watch@ci-watcher"][0];
    assert_eq!(e.level, Some(PushLevel::Inject));
    assert_eq!(e.metadata.as_ref().unwrap()["runId"], json!(12345));
    assert_eq!(
        serde_json::to_value(GatewayMessage::StreamHistory(h)).unwrap(),
        serde_json::from_str::<Value>(json).unwrap()
    );
}

// ------------------------------------------------------------------ casing

#[test]
fn gateway_messages_use_camel_case_and_no_nulls() {
    let messages = [
        GatewayMessage::HelloAck(HelloAck {
            protocol_version: 2,
            provider_id: "p".into(),
            session_id: Some("s".into()),
            reconnect_token: Some("r".into()),
            persist_dir: Some("/d".into()),
        }),
        GatewayMessage::Error(ErrorMessage {
            code: ErrorCode::Unauthorized,
            message: "m".into(),
            reply_to: Some("push".into()),
            request_id: Some("q".into()),
            provider_id: Some("p".into()),
            session_id: Some("s".into()),
        }),
        GatewayMessage::GateCheck(GateCheck {
            gate_id: Some("g".into()),
            call_id: "c".into(),
            session_id: "s".into(),
            tool: "t".into(),
            args: json!({}),
        }),
    ];
    for m in messages {
        let v = serde_json::to_value(&m).unwrap();
        assert!(no_nulls(&v), "null in {v}");
        for key in v.as_object().unwrap().keys() {
            assert!(!key.contains('_'), "snake_case key {key} in {v}");
        }
    }
}

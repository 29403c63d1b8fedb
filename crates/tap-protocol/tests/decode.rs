//! [`tap_protocol::decode`]: forward compatibility (unknown fields ignored everywhere),
//! the three failure classes (`InvalidJson`, `UnknownType`, `InvalidMessage`) and their
//! error codes, and that the `TYPES` constants list exactly the enum variants.

mod fixtures;
use fixtures::{HOST_MINIMAL, PROVIDER_EXAMPLES, PROVIDER_MINIMAL};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tap_protocol::host::{self, HostRequest};
use tap_protocol::provider::*;
use tap_protocol::{decode, DecodeError, ErrorCode};

fn decode_provider(frame: &str) -> Result<ProviderMessage, DecodeError> {
    decode::<ProviderMessage>(frame.as_bytes(), ProviderMessage::TYPES)
}

fn decode_host(frame: &str) -> Result<HostRequest, DecodeError> {
    decode::<HostRequest>(frame.as_bytes(), HostRequest::TYPES)
}

/// The JSON with `"futureField": 1` added at the top level.
fn with_future_field(json: &str) -> String {
    let mut v: Value = serde_json::from_str(json).unwrap();
    v.as_object_mut()
        .unwrap()
        .insert("futureField".into(), json!(1));
    v.to_string()
}

// ------------------------------------------------------------------ forward compatibility

#[test]
fn provider_examples_cover_every_type() {
    let covered: BTreeSet<&str> = PROVIDER_EXAMPLES
        .iter()
        .map(|j| decode_provider(j).unwrap().type_name())
        .collect();
    let all: BTreeSet<&str> = ProviderMessage::TYPES.iter().copied().collect();
    assert_eq!(covered, all);
}

#[test]
fn unknown_top_level_field_is_ignored_in_every_provider_message() {
    for json in PROVIDER_EXAMPLES {
        let plain = decode_provider(json).unwrap();
        let extended = decode_provider(&with_future_field(json))
            .unwrap_or_else(|e| panic!("unknown field rejected: {e:?}\n{json}"));
        assert_eq!(extended, plain, "{json}");
    }
}

#[test]
fn unknown_fields_in_nested_objects_are_ignored() {
    // Tool defs, concurrency, hook rules, transforms inside `hello`.
    let with = r#"{ "type": "hello", "name": "p", "protocolVersion": 2, "futureField": 1,
        "tools": [ { "name": "t", "description": "d", "parameters": {}, "futureField": 1 } ],
        "concurrency": { "max": 2, "scope": "tool", "futureField": 1 },
        "hooks": { "futureField": 1,
            "onPreToolUse": [ { "match": { "tool": "shell" }, "action": "deny", "reason": "no", "futureField": 1 } ],
            "transforms": { "s": { "action": "prepend", "content": "x", "futureField": 1 } } } }"#;
    let without = r#"{ "type": "hello", "name": "p", "protocolVersion": 2,
        "tools": [ { "name": "t", "description": "d", "parameters": {} } ],
        "concurrency": { "max": 2, "scope": "tool" },
        "hooks": {
            "onPreToolUse": [ { "match": { "tool": "shell" }, "action": "deny", "reason": "no" } ],
            "transforms": { "s": { "action": "prepend", "content": "x" } } } }"#;
    assert_eq!(
        decode_provider(with).unwrap(),
        decode_provider(without).unwrap()
    );

    // File refs in `tool.result`.
    let with = r#"{ "type": "tool.result", "id": "c", "file": { "path": "/p", "mimeType": "image/png", "size": 1, "ttl": 2, "futureField": 1 } }"#;
    let without = r#"{ "type": "tool.result", "id": "c", "file": { "path": "/p", "mimeType": "image/png", "size": 1, "ttl": 2 } }"#;
    assert_eq!(
        decode_provider(with).unwrap(),
        decode_provider(without).unwrap()
    );

    // Filter rules in `filter.set`.
    let with = r#"{ "type": "filter.set", "stream": "s", "rules": [ { "match": "x", "outcome": "drop", "futureField": 1 } ] }"#;
    let without = r#"{ "type": "filter.set", "stream": "s", "rules": [ { "match": "x", "outcome": "drop" } ] }"#;
    assert_eq!(
        decode_provider(with).unwrap(),
        decode_provider(without).unwrap()
    );

    // Tool defs in `tools.update`, hook rules in `hooks.update`.
    let with =
        r#"{ "type": "tools.update", "tools": [ { "name": "t", "futureField": { "a": [1] } } ] }"#;
    let without = r#"{ "type": "tools.update", "tools": [ { "name": "t" } ] }"#;
    assert_eq!(
        decode_provider(with).unwrap(),
        decode_provider(without).unwrap()
    );
    let with = r#"{ "type": "hooks.update", "onPreToolUse": [ { "action": "gate", "gateId": "g", "futureField": 1 } ] }"#;
    let without =
        r#"{ "type": "hooks.update", "onPreToolUse": [ { "action": "gate", "gateId": "g" } ] }"#;
    assert_eq!(
        decode_provider(with).unwrap(),
        decode_provider(without).unwrap()
    );
}

#[test]
fn unknown_matcher_keys_are_kept_not_rejected() {
    let ProviderMessage::HooksUpdate(u) = decode_provider(
        r#"{ "type": "hooks.update", "onPreToolUse": [ { "match": { "tool": "edit", "futureField": 1 }, "action": "deny" } ] }"#,
    )
    .unwrap() else {
        panic!("expected HooksUpdate")
    };
    let m = &u.on_pre_tool_use.unwrap()[0].matcher;
    assert_eq!(m.tool.as_deref(), Some("edit"));
    assert_eq!(m.other.get("futureField"), Some(&json!(1)));
}

#[test]
fn unknown_fields_are_ignored_in_gateway_messages() {
    // A provider SDK built on these types must tolerate newer gateways too.
    let examples = [
        r#"{ "type": "auth.pairing", "prompt": "Enter the pairing code shown in your Copilot session" }"#,
        r#"{ "type": "sessions", "token": "ext-tok-9f2b...", "active": [ { "id": "abc123", "label": "PR #42 review", "cwd": "/code/foo" } ] }"#,
        r#"{ "type": "sessions.updated", "active": [] }"#,
        r#"{ "type": "hello.ack", "protocolVersion": 2, "providerId": "p-8f3a", "sessionId": "abc123" }"#,
        r#"{ "type": "ack", "requestId": "req-42", "sessionId": "abc123", "revision": 3 }"#,
        r#"{ "type": "error", "code": "INVALID_SESSION", "message": "Session def456 does not exist", "replyTo": "hello" }"#,
        r#"{ "type": "tool.call", "id": "call-123", "sessionId": "abc123", "tool": "my_tool", "args": { "query": "find active users" } }"#,
        r#"{ "type": "tool.cancel", "id": "call-123", "sessionId": "abc123", "reason": "timeout" }"#,
        r#"{ "type": "gate.check", "gateId": "check-before-push", "callId": "gate-456", "sessionId": "abc123", "tool": "shell", "args": { "command": "git push origin main" } }"#,
        r#"{ "type": "transform.request", "callId": "tx-789", "sessionId": "abc123", "section": "custom_instructions", "current": "...existing section content..." }"#,
        r#"{ "type": "session.event", "sessionId": "abc123", "event": "user.message", "data": { "content": "fix the auth bug" } }"#,
        r#"{ "type": "session.lifecycle", "sessionId": "abc123", "state": "shutdown.pending", "deadline": 10000 }"#,
        r#"{ "type": "stream.history", "queryId": "q-1", "streams": { "git-watch@guardian": [ { "ts": "2026-04-26T14:00:30Z", "event": "behind=2" } ] } }"#,
    ];
    let mut seen = BTreeSet::new();
    for json in examples {
        let plain: GatewayMessage = serde_json::from_str(json).unwrap();
        let extended: GatewayMessage = serde_json::from_str(&with_future_field(json))
            .unwrap_or_else(|e| panic!("unknown field rejected: {e}\n{json}"));
        assert_eq!(extended, plain);
        let v: Value = serde_json::from_str(json).unwrap();
        seen.insert(v["type"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), 13, "the spec has 13 gateway→provider types");

    // Nested: session entries and stream entries.
    let a: GatewayMessage = serde_json::from_str(
        r#"{ "type": "sessions", "active": [ { "id": "a", "futureField": 1 } ] }"#,
    )
    .unwrap();
    let b: GatewayMessage =
        serde_json::from_str(r#"{ "type": "sessions", "active": [ { "id": "a" } ] }"#).unwrap();
    assert_eq!(a, b);
}

#[test]
fn unknown_fields_are_ignored_in_host_requests() {
    let examples = [
        r#"{ "type": "auth", "token": "htk", "protocolVersion": 1 }"#,
        r#"{ "type": "session.register", "requestId": "r1", "label": "x" }"#,
        r#"{ "type": "session.end", "requestId": "r2", "sessionId": "s" }"#,
        r#"{ "type": "session.state", "sessionId": "s", "state": "busy" }"#,
        r#"{ "type": "session.event", "sessionId": "s", "event": "user.message", "data": { "content": "hi" } }"#,
        r#"{ "type": "tool.invoke", "callId": "c", "sessionId": "s", "tool": "t", "args": {} }"#,
        r#"{ "type": "tool.cancel", "callId": "c" }"#,
        r#"{ "type": "status.get", "requestId": "r3" }"#,
        r#"{ "type": "streams.history", "requestId": "r4", "sessionId": "s", "last": 5 }"#,
    ];
    for json in examples {
        let plain = decode_host(json).unwrap();
        let extended = decode_host(&with_future_field(json))
            .unwrap_or_else(|e| panic!("unknown field rejected: {e:?}\n{json}"));
        assert_eq!(extended, plain);
    }
}

// ------------------------------------------------------------------ failure classes

#[test]
fn unknown_type_is_unknown_type() {
    for t in [
        "tool.resultz",
        "Auth",
        "hello.ack",
        "sessions",
        "",
        "future.message",
    ] {
        let frame = json!({ "type": t, "id": "x" }).to_string();
        let err = decode_provider(&frame).unwrap_err();
        assert_eq!(err, DecodeError::UnknownType(t.to_string()), "{frame}");
        assert_eq!(err.code(), ErrorCode::UnknownType);
        assert_eq!(err.type_name(), Some(t));
        assert!(
            err.message().contains(&format!("'{t}'")),
            "{}",
            err.message()
        );
        assert!(!err.code().is_fatal());
    }
}

#[test]
fn unknown_type_even_when_other_fields_are_garbage() {
    let err = decode_provider(r#"{"type":"nope","id":5,"data":[1,2}"#).unwrap_err();
    // Not JSON at all: that takes precedence.
    assert!(matches!(err, DecodeError::InvalidJson(_)), "{err:?}");
    let err = decode_provider(r#"{"type":"nope","id":5,"tools":"not-a-list"}"#).unwrap_err();
    assert_eq!(err, DecodeError::UnknownType("nope".into()));
}

#[test]
fn a_host_only_or_provider_only_type_is_unknown_to_the_other_protocol() {
    assert_eq!(
        decode_host(r#"{"type":"hello","name":"p","protocolVersion":2}"#).unwrap_err(),
        DecodeError::UnknownType("hello".into())
    );
    assert_eq!(
        decode_provider(r#"{"type":"tool.invoke","callId":"c","sessionId":"s","tool":"t"}"#)
            .unwrap_err(),
        DecodeError::UnknownType("tool.invoke".into())
    );
}

#[test]
fn non_json_is_invalid_json() {
    let frames: &[&[u8]] = &[
        b"",
        b"not json",
        b"{",
        br#"{"type":"auth""#,
        br#"{"type":"auth"} trailing"#,
        br#"{'type':'auth'}"#,
        b"\xff\xfe\x00",
    ];
    for frame in frames {
        let err = decode::<ProviderMessage>(frame, ProviderMessage::TYPES).unwrap_err();
        assert!(
            matches!(err, DecodeError::InvalidJson(_)),
            "{:?} -> {err:?}",
            String::from_utf8_lossy(frame)
        );
        assert_eq!(err.code(), ErrorCode::InvalidJson);
        assert_eq!(err.type_name(), None);
        assert!(err.message().starts_with("Malformed message: "));
    }
}

#[test]
fn non_object_or_missing_or_non_string_type_is_invalid_json() {
    for frame in [
        r#"[{"type":"auth","token":"t"}]"#,
        r#"[]"#,
        r#""auth""#,
        "42",
        "null",
        "true",
        r#"{}"#,
        r#"{"token":"t"}"#,
        r#"{"Type":"auth","token":"t"}"#,
        r#"{"type":5}"#,
        r#"{"type":null}"#,
        r#"{"type":["auth"]}"#,
        r#"{"type":{"name":"auth"}}"#,
        r#"{"type":true,"token":"t"}"#,
    ] {
        let err = decode_provider(frame).unwrap_err();
        assert!(
            matches!(err, DecodeError::InvalidJson(_)),
            "{frame} -> {err:?}"
        );
        assert_eq!(err.code(), ErrorCode::InvalidJson, "{frame}");
        assert_eq!(err.type_name(), None);
    }
}

#[track_caller]
fn assert_invalid_message(frame: &str, type_name: &str, needle: &str) {
    let err = decode_provider(frame).unwrap_err();
    let DecodeError::InvalidMessage {
        type_name: t,
        detail,
    } = &err
    else {
        panic!("expected InvalidMessage for {frame}, got {err:?}")
    };
    assert_eq!(t, type_name, "{frame}");
    assert!(
        detail.contains(needle),
        "detail {detail:?} should mention {needle:?}"
    );
    assert!(!detail.contains(" at line "), "position leaked: {detail:?}");
    assert!(!detail.contains("column"), "position leaked: {detail:?}");
    let message = err.message();
    assert!(message.contains(needle), "{message}");
    assert!(message.contains(&format!("'{type_name}'")), "{message}");
    assert!(!message.contains(" at line "), "{message}");
    assert_eq!(err.code(), ErrorCode::InvalidJson);
    assert_eq!(err.type_name(), Some(type_name));
}

#[test]
fn missing_required_field_is_invalid_message_naming_the_field() {
    let cases = [
        (
            r#"{"type":"tool.result","data":"x"}"#,
            "tool.result",
            "`id`",
        ),
        (r#"{"type":"hello","protocolVersion":2}"#, "hello", "`name`"),
        (
            r#"{"type":"hello","name":"p"}"#,
            "hello",
            "`protocolVersion`",
        ),
        (r#"{"type":"auth.confirm"}"#, "auth.confirm", "`code`"),
        (
            r#"{"type":"session.ready"}"#,
            "session.ready",
            "`sessionId`",
        ),
        (
            r#"{"type":"shutdown.ready"}"#,
            "shutdown.ready",
            "`sessionId`",
        ),
        (
            r#"{"type":"tool.progress","id":"c"}"#,
            "tool.progress",
            "`message`",
        ),
        (
            r#"{"type":"gate.result","decision":"allow"}"#,
            "gate.result",
            "`callId`",
        ),
        (
            r#"{"type":"gate.result","callId":"g"}"#,
            "gate.result",
            "`decision`",
        ),
        (
            r#"{"type":"transform.result","callId":"t"}"#,
            "transform.result",
            "`content`",
        ),
        (r#"{"type":"push","event":"e"}"#, "push", "`level`"),
        (
            r#"{"type":"filter.set","rules":[]}"#,
            "filter.set",
            "`stream`",
        ),
        (
            r#"{"type":"stream.query","last":3}"#,
            "stream.query",
            "`queryId`",
        ),
        // Nested: a tool def without a name, a file ref without a size.
        (
            r#"{"type":"hello","name":"p","protocolVersion":2,"tools":[{"description":"d"}]}"#,
            "hello",
            "`name`",
        ),
        (
            r#"{"type":"tool.result","id":"c","file":{"path":"/p","mimeType":"a/b","ttl":1}}"#,
            "tool.result",
            "`size`",
        ),
        (
            r#"{"type":"hooks.update","onPreToolUse":[{"match":{"tool":"x"}}]}"#,
            "hooks.update",
            "`action`",
        ),
    ];
    for (frame, type_name, needle) in cases {
        assert_invalid_message(frame, type_name, needle);
    }
}

#[test]
fn duplicate_type_key_is_invalid_message_without_position() {
    // serde_json reports this one while parsing, so its error carries "at line 1 column N";
    // the decoder must strip it. (Missing/mistyped fields of tagged enums are reported
    // without a position, so this is the case that exercises the stripping.)
    let frame = r#"{"type":"auth","type":"auth","token":"t"}"#;
    let raw = serde_json::from_str::<ProviderMessage>(frame)
        .unwrap_err()
        .to_string();
    assert!(raw.contains(" at line "), "precondition: {raw}");
    assert_invalid_message(frame, "auth", "duplicate field `type`");
}

#[test]
fn mistyped_field_is_invalid_message() {
    assert_invalid_message(
        r#"{"type":"hello","name":"p","protocolVersion":"2"}"#,
        "hello",
        "invalid type",
    );
    assert_invalid_message(
        r#"{"type":"tool.result","id":7}"#,
        "tool.result",
        "invalid type",
    );
    assert_invalid_message(
        r#"{"type":"push","level":"loud","event":"e"}"#,
        "push",
        "unknown variant `loud`",
    );
    assert_invalid_message(
        r#"{"type":"gate.result","callId":"g","decision":"maybe"}"#,
        "gate.result",
        "unknown variant `maybe`",
    );
    assert_invalid_message(
        r#"{"type":"hello","name":"p","protocolVersion":2,"metadata":"not-an-object"}"#,
        "hello",
        "invalid type",
    );
    assert_invalid_message(
        r#"{"type":"stream.query","queryId":"q","last":-1}"#,
        "stream.query",
        "invalid value",
    );
}

#[test]
fn host_request_failures() {
    assert_eq!(
        decode_host(r#"{"type":"session.destroy","requestId":"r"}"#).unwrap_err(),
        DecodeError::UnknownType("session.destroy".into())
    );
    assert!(matches!(
        decode_host("[]").unwrap_err(),
        DecodeError::InvalidJson(_)
    ));
    let err = decode_host(r#"{"type":"tool.invoke","callId":"c","tool":"t"}"#).unwrap_err();
    let DecodeError::InvalidMessage { type_name, detail } = &err else {
        panic!("expected InvalidMessage, got {err:?}")
    };
    assert_eq!(type_name, "tool.invoke");
    assert!(detail.contains("`sessionId`"), "{detail}");
    assert!(!detail.contains(" at line "), "{detail}");
}

#[test]
fn decode_error_messages() {
    assert_eq!(
        DecodeError::UnknownType("x.y".into()).message(),
        "Unknown message type 'x.y'"
    );
    assert_eq!(
        DecodeError::InvalidMessage {
            type_name: "hello".into(),
            detail: "missing field `name`".into()
        }
        .message(),
        "Invalid 'hello' message: missing field `name`"
    );
    assert_eq!(
        DecodeError::InvalidJson("expected a JSON object".into()).message(),
        "Malformed message: expected a JSON object"
    );
}

// ------------------------------------------------------------------ TYPES

/// Exhaustive over the variants: adding a variant without updating the tests fails to build.
fn provider_variant_type(m: &ProviderMessage) -> &'static str {
    match m {
        ProviderMessage::Auth(_) => "auth",
        ProviderMessage::AuthConfirm(_) => "auth.confirm",
        ProviderMessage::Hello(_) => "hello",
        ProviderMessage::Goodbye(_) => "goodbye",
        ProviderMessage::SessionReady(_) => "session.ready",
        ProviderMessage::ToolResult(_) => "tool.result",
        ProviderMessage::ToolProgress(_) => "tool.progress",
        ProviderMessage::GateResult(_) => "gate.result",
        ProviderMessage::TransformResult(_) => "transform.result",
        ProviderMessage::Push(_) => "push",
        ProviderMessage::ToolsUpdate(_) => "tools.update",
        ProviderMessage::HooksUpdate(_) => "hooks.update",
        ProviderMessage::ContextUpdate(_) => "context.update",
        ProviderMessage::FilterSet(_) => "filter.set",
        ProviderMessage::StreamQuery(_) => "stream.query",
        ProviderMessage::ShutdownReady(_) => "shutdown.ready",
    }
}

#[test]
fn provider_types_list_exactly_the_variants() {
    let types: BTreeSet<&str> = ProviderMessage::TYPES.iter().copied().collect();
    assert_eq!(
        types.len(),
        ProviderMessage::TYPES.len(),
        "duplicate in TYPES"
    );
    let minimal: BTreeSet<&str> = PROVIDER_MINIMAL.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, minimal);
    // The v2 "Provider → Gateway" table lists these 16 types.
    assert_eq!(types.len(), 16);

    let mut decoded_types = BTreeSet::new();
    for (t, json) in PROVIDER_MINIMAL {
        let msg = decode_provider(json).unwrap_or_else(|e| panic!("{t}: {e:?}"));
        assert_eq!(msg.type_name(), *t);
        assert_eq!(provider_variant_type(&msg), *t);
        // The serialized tag agrees with type_name().
        assert_eq!(serde_json::to_value(&msg).unwrap()["type"], json!(t));
        decoded_types.insert(provider_variant_type(&msg));
    }
    // Every variant was reached (16 distinct variants from 16 types).
    assert_eq!(decoded_types, types);
}

fn host_variant_type(m: &HostRequest) -> &'static str {
    match m {
        HostRequest::Auth(_) => "auth",
        HostRequest::SessionRegister(_) => "session.register",
        HostRequest::SessionEnd(_) => "session.end",
        HostRequest::SessionState(_) => "session.state",
        HostRequest::SessionEvent(_) => "session.event",
        HostRequest::ToolInvoke(_) => "tool.invoke",
        HostRequest::ToolCancel(_) => "tool.cancel",
        HostRequest::StatusGet(_) => "status.get",
        HostRequest::StreamsHistory(_) => "streams.history",
        HostRequest::ToolPrecheck(_) => "tool.precheck",
        HostRequest::PromptApply(_) => "prompt.apply",
        HostRequest::ApprovalAnswer(_) => "approval.answer",
        HostRequest::SessionModeResult(_) => "session.mode.result",
    }
}

#[test]
fn host_types_list_exactly_the_variants() {
    let types: BTreeSet<&str> = HostRequest::TYPES.iter().copied().collect();
    assert_eq!(types.len(), HostRequest::TYPES.len(), "duplicate in TYPES");
    let minimal: BTreeSet<&str> = HOST_MINIMAL.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, minimal);

    let mut decoded_types = BTreeSet::new();
    for (t, json) in HOST_MINIMAL {
        let msg = decode_host(json).unwrap_or_else(|e| panic!("{t}: {e:?}"));
        assert_eq!(msg.type_name(), *t);
        assert_eq!(host_variant_type(&msg), *t);
        assert_eq!(serde_json::to_value(&msg).unwrap()["type"], json!(t));
        decoded_types.insert(host_variant_type(&msg));
    }
    assert_eq!(decoded_types, types);
}

#[test]
fn host_minimal_defaults() {
    let HostRequest::ToolInvoke(inv) = decode_host(HOST_MINIMAL[5].1).unwrap() else {
        panic!("expected ToolInvoke")
    };
    assert_eq!(
        inv.args,
        json!({}),
        "absent args default to an empty object"
    );
    let HostRequest::SessionRegister(reg) = decode_host(HOST_MINIMAL[1].1).unwrap() else {
        panic!("expected SessionRegister")
    };
    assert_eq!(
        reg,
        host::SessionRegister {
            request_id: "r".into(),
            ..Default::default()
        }
    );
}

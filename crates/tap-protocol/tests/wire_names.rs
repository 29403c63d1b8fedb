//! `TYPES` and `type_name()` of the gateway→peer enums agree with what serde puts on the
//! wire, for every variant. (The peer→gateway enums are checked the same way in
//! `tests/decode.rs`.) The expected names come from a hand-written match per enum, not from
//! the `wire_messages!` list, so a typo in that list fails here.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt::Debug;
use tap_protocol::host::{HostEvent, HostRequest};
use tap_protocol::provider::{GatewayMessage, ProviderMessage};
use tap_protocol::{decode, DecodeError};

/// Every fixture decodes (through [`decode`] with `types`), to a variant whose expected
/// name, `type_name()` and serialized `type` all equal the fixture's type; the fixtures
/// cover `types` exactly, and `types` has no duplicates.
fn check<T: DeserializeOwned + Serialize + Debug>(
    types: &[&str],
    fixtures: &[(&str, &str)],
    type_name: fn(&T) -> &'static str,
    expected: fn(&T) -> &'static str,
) {
    let listed: BTreeSet<&str> = types.iter().copied().collect();
    assert_eq!(listed.len(), types.len(), "duplicate in TYPES: {types:?}");
    let covered: BTreeSet<&str> = fixtures.iter().map(|(t, _)| *t).collect();
    assert_eq!(covered, listed, "fixtures and TYPES differ");

    let mut reached = BTreeSet::new();
    for (t, frame) in fixtures {
        let msg: T = decode(frame.as_bytes(), types).unwrap_or_else(|e| panic!("{t}: {e:?}"));
        assert_eq!(expected(&msg), *t, "{frame} decoded to {msg:?}");
        assert_eq!(type_name(&msg), *t);
        assert_eq!(serde_json::to_value(&msg).unwrap()["type"], json!(t));
        reached.insert(expected(&msg));
    }
    assert_eq!(reached, listed, "some variant was not reached");

    let unknown = decode::<T>(br#"{"type":"no.such.type"}"#, types).unwrap_err();
    assert_eq!(unknown, DecodeError::UnknownType("no.such.type".into()));
}

fn gateway_expected(m: &GatewayMessage) -> &'static str {
    match m {
        GatewayMessage::AuthPairing(_) => "auth.pairing",
        GatewayMessage::Sessions(_) => "sessions",
        GatewayMessage::SessionsUpdated(_) => "sessions.updated",
        GatewayMessage::HelloAck(_) => "hello.ack",
        GatewayMessage::Ack(_) => "ack",
        GatewayMessage::Error(_) => "error",
        GatewayMessage::ToolCall(_) => "tool.call",
        GatewayMessage::ToolCancel(_) => "tool.cancel",
        GatewayMessage::GateCheck(_) => "gate.check",
        GatewayMessage::TransformRequest(_) => "transform.request",
        GatewayMessage::SessionEvent(_) => "session.event",
        GatewayMessage::SessionLifecycle(_) => "session.lifecycle",
        GatewayMessage::StreamHistory(_) => "stream.history",
    }
}

const GATEWAY_MINIMAL: &[(&str, &str)] = &[
    ("auth.pairing", r#"{"type":"auth.pairing","prompt":"p"}"#),
    ("sessions", r#"{"type":"sessions","active":[]}"#),
    (
        "sessions.updated",
        r#"{"type":"sessions.updated","active":[]}"#,
    ),
    (
        "hello.ack",
        r#"{"type":"hello.ack","protocolVersion":2,"providerId":"p"}"#,
    ),
    (
        "ack",
        r#"{"type":"ack","requestId":"r","sessionId":"s","revision":1}"#,
    ),
    (
        "error",
        r#"{"type":"error","code":"INVALID_JSON","message":"m"}"#,
    ),
    (
        "tool.call",
        r#"{"type":"tool.call","id":"c","sessionId":"s","tool":"t","args":{}}"#,
    ),
    (
        "tool.cancel",
        r#"{"type":"tool.cancel","id":"c","sessionId":"s","reason":"timeout"}"#,
    ),
    (
        "gate.check",
        r#"{"type":"gate.check","callId":"c","sessionId":"s","tool":"t","args":{}}"#,
    ),
    (
        "transform.request",
        r#"{"type":"transform.request","callId":"c","sessionId":"s","section":"x","current":""}"#,
    ),
    (
        "session.event",
        r#"{"type":"session.event","sessionId":"s","event":"user.message","data":{}}"#,
    ),
    (
        "session.lifecycle",
        r#"{"type":"session.lifecycle","sessionId":"s","state":"idle"}"#,
    ),
    (
        "stream.history",
        r#"{"type":"stream.history","queryId":"q","streams":{}}"#,
    ),
];

#[test]
fn gateway_message_names_agree_with_serde() {
    check(
        GatewayMessage::TYPES,
        GATEWAY_MINIMAL,
        GatewayMessage::type_name,
        gateway_expected,
    );
}

fn host_event_expected(m: &HostEvent) -> &'static str {
    match m {
        HostEvent::AuthOk(_) => "auth.ok",
        HostEvent::SessionRegistered(_) => "session.registered",
        HostEvent::SessionEnded(_) => "session.ended",
        HostEvent::SessionTools(_) => "session.tools",
        HostEvent::ToolProgress(_) => "tool.progress",
        HostEvent::ToolResult(_) => "tool.result",
        HostEvent::Delivery(_) => "delivery",
        HostEvent::Status(_) => "status",
        HostEvent::StreamsHistory(_) => "streams.history",
        HostEvent::PromptApplied(_) => "prompt.applied",
        HostEvent::SessionContext(_) => "session.context",
        HostEvent::ToolDecision(_) => "tool.decision",
        HostEvent::SessionWarning(_) => "session.warning",
        HostEvent::Error(_) => "error",
    }
}

const HOST_EVENT_MINIMAL: &[(&str, &str)] = &[
    (
        "auth.ok",
        r#"{"type":"auth.ok","protocolVersion":1,"hostId":"h","resumeToken":"r"}"#,
    ),
    (
        "session.registered",
        r#"{"type":"session.registered","requestId":"r","session":{"id":"s"}}"#,
    ),
    (
        "session.ended",
        r#"{"type":"session.ended","sessionId":"s","reason":"x"}"#,
    ),
    (
        "session.tools",
        r#"{"type":"session.tools","sessionId":"s","revision":1,"tools":[]}"#,
    ),
    (
        "tool.progress",
        r#"{"type":"tool.progress","callId":"c","message":"m"}"#,
    ),
    ("tool.result", r#"{"type":"tool.result","callId":"c"}"#),
    (
        "delivery",
        r#"{"type":"delivery","sessionId":"s","level":"surface","stream":"x","provider":"p","event":"e","ts":"t"}"#,
    ),
    (
        "status",
        r#"{"type":"status","requestId":"r","status":{"address":"a","version":"v","startedAt":"t","uptimeMs":0,"sessions":[],"providers":[]}}"#,
    ),
    (
        "streams.history",
        r#"{"type":"streams.history","requestId":"r","sessionId":"s","streams":{}}"#,
    ),
    (
        "prompt.applied",
        r#"{"type":"prompt.applied","requestId":"r","sessionId":"s","prompt":"p","sections":{},"context":[]}"#,
    ),
    (
        "session.context",
        r#"{"type":"session.context","sessionId":"s","provider":"p","startupContext":"c"}"#,
    ),
    (
        "tool.decision",
        r#"{"type":"tool.decision","requestId":"r","decision":"allow"}"#,
    ),
    (
        "session.warning",
        r#"{"type":"session.warning","sessionId":"s","message":"m"}"#,
    ),
    (
        "error",
        r#"{"type":"error","code":"INVALID_JSON","message":"m"}"#,
    ),
];

#[test]
fn host_event_names_agree_with_serde() {
    check(
        HostEvent::TYPES,
        HOST_EVENT_MINIMAL,
        HostEvent::type_name,
        host_event_expected,
    );
}

/// The peer→gateway lists keep the order they were written in before the macro (the
/// gateway does not depend on it, but a reorder should be a deliberate change).
#[test]
fn peer_to_gateway_types_keep_their_order() {
    assert_eq!(
        ProviderMessage::TYPES,
        [
            "auth",
            "auth.confirm",
            "hello",
            "goodbye",
            "session.ready",
            "tool.result",
            "tool.progress",
            "gate.result",
            "transform.result",
            "push",
            "tools.update",
            "hooks.update",
            "context.update",
            "filter.set",
            "stream.query",
            "shutdown.ready",
        ]
    );
    assert_eq!(
        HostRequest::TYPES,
        [
            "auth",
            "session.register",
            "session.end",
            "session.state",
            "session.event",
            "tool.invoke",
            "tool.cancel",
            "status.get",
            "streams.history",
            "prompt.apply",
            "tool.precheck",
        ]
    );
}

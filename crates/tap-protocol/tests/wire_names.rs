//! `TYPES` and `type_name()` of the gateway→peer enums agree with what serde puts on the
//! wire, for every variant. (The peer→gateway enums are checked the same way in
//! `tests/decode.rs`.) The expected names come from a hand-written match per enum, not from
//! the `wire_messages!` list, so a typo in that list fails here.

mod fixtures;
use fixtures::{GATEWAY_MINIMAL, HOST_EVENT_MINIMAL};
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
        HostEvent::ApprovalAsk(_) => "approval.ask",
        HostEvent::ApprovalWithdrawn(_) => "approval.withdrawn",
        HostEvent::SessionModeSet(_) => "session.mode.set",
    }
}

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
            "approval.answer",
            "session.mode.result",
        ]
    );
}

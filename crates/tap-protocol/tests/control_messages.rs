//! The control protocol's frames (`tap_protocol::control`): exact wire shapes both ways,
//! and how `ControlRequest::decode` classifies bad frames.

mod fixtures;
use fixtures::control_params;
use serde_json::{json, Value};
use tap_protocol::control::{
    AuthParams, ClientFrame, ControlCall, ControlError, ControlEvent, ControlRequest, Empty,
    EventFrame, PairingConfigure, PairingId, ServerFrame,
};
use tap_protocol::ErrorCode;

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

fn decode(v: Value) -> Result<ControlRequest, (Option<String>, ErrorCode, String)> {
    ControlRequest::decode(v.to_string().as_bytes())
        .map_err(|e| (e.id, e.error.code, e.error.message))
}

#[test]
fn requests_serialize_as_type_id_method_params() {
    let frame = ClientFrame::Request(ControlRequest {
        id: "r1".into(),
        call: ControlCall::PairingDeny(PairingId { id: "pr-1".into() }),
    });
    assert_eq!(
        to_json(&frame),
        json!({"type": "request", "id": "r1", "method": "pairing.deny", "params": {"id": "pr-1"}})
    );
    let frame = ClientFrame::Request(ControlRequest {
        id: "r2".into(),
        call: ControlCall::Status(Empty {}),
    });
    assert_eq!(
        to_json(&frame),
        json!({"type": "request", "id": "r2", "method": "status", "params": {}})
    );
    let configure = ControlCall::PairingConfigure(PairingConfigure {
        id: "pr-1".into(),
        session: None,
        remember: Some(true),
    });
    assert_eq!(
        to_json(&configure),
        json!({"method": "pairing.configure", "params": {"id": "pr-1", "remember": true}})
    );
}

#[test]
fn every_method_decodes_and_reports_its_name() {
    for m in ControlCall::METHODS {
        let req =
            decode(json!({"type": "request", "id": "x", "method": m, "params": control_params(m)}))
                .unwrap_or_else(|e| panic!("{m}: {e:?}"));
        assert_eq!(req.id, "x");
        assert_eq!(req.call.method(), *m);
    }
    assert_eq!(ControlCall::METHODS.len(), 64);
}

#[test]
fn a_playground_call_answers_with_its_outcome_and_reports_progress_as_events() {
    use tap_protocol::control::{PlaygroundCallError, PlaygroundCallResult};
    let failed = ServerFrame::result(
        "r9",
        PlaygroundCallResult {
            call_id: "c1".into(),
            duration_ms: 42,
            data: None,
            error: Some(PlaygroundCallError {
                code: ErrorCode::Denied,
                message: "A hook rule denied 'shell': CI is red.".into(),
            }),
            context: None,
            trace_id: None,
        },
    );
    assert_eq!(
        to_json(&failed),
        json!({"type": "response", "id": "r9", "result": {"callId": "c1", "durationMs": 42,
               "error": {"code": "DENIED", "message": "A hook rule denied 'shell': CI is red."}}})
    );
    let progress = ControlEvent::PlaygroundProgress {
        call_id: "c1".into(),
        message: "compiling".into(),
    };
    assert_eq!(
        to_json(&progress),
        json!({"kind": "playground.progress", "callId": "c1", "message": "compiling"})
    );
}

#[test]
fn params_may_be_omitted_or_null_and_unknown_fields_are_ignored() {
    for frame in [
        json!({"type": "request", "id": "a", "method": "pairing.list"}),
        json!({"type": "request", "id": "a", "method": "pairing.list", "params": null}),
        json!({"type": "request", "id": "a", "method": "pairing.list", "params": {"x": 1}, "y": 2}),
    ] {
        let req = decode(frame.clone()).unwrap_or_else(|e| panic!("{frame}: {e:?}"));
        assert_eq!(req.call, ControlCall::PairingList(Empty {}), "{frame}");
    }
}

#[test]
fn bad_frames_are_classified_with_the_id_when_there_is_one() {
    let cases = [
        (
            json!({"type": "request", "id": "a", "method": "nope"}),
            Some("a"),
            ErrorCode::UnknownType,
        ),
        (
            json!({"type": "response", "id": "a"}),
            Some("a"),
            ErrorCode::UnknownType,
        ),
        (
            json!({"id": "a", "method": "status"}),
            Some("a"),
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "method": "status"}),
            None,
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "id": 7, "method": "status"}),
            None,
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "id": "a"}),
            Some("a"),
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "id": "a", "method": "pairing.deny", "params": {}}),
            Some("a"),
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "id": "a", "method": "pairing.deny", "params": {"id": 1}}),
            Some("a"),
            ErrorCode::InvalidJson,
        ),
        (
            json!({"type": "request", "id": "a", "method": "auth", "params": []}),
            Some("a"),
            ErrorCode::InvalidJson,
        ),
        (json!([1, 2]), None, ErrorCode::InvalidJson),
    ];
    for (frame, id, code) in cases {
        let (got_id, got_code, message) = decode(frame.clone()).expect_err(&frame.to_string());
        assert_eq!(got_id.as_deref(), id, "{frame}");
        assert_eq!(got_code, code, "{frame}: {message}");
        assert!(!message.is_empty());
    }
    let e = ControlRequest::decode(b"{not json").unwrap_err();
    assert_eq!((e.id, e.error.code), (None, ErrorCode::InvalidJson));
    let (_, _, message) =
        decode(json!({"type": "request", "id": "a", "method": "pairing.approve"})).unwrap_err();
    assert!(message.contains("pairing.approve"), "{message}");
}

#[test]
fn responses_carry_either_result_or_error() {
    let ok = ServerFrame::result("r1", json!({"denied": 2}));
    assert_eq!(
        to_json(&ok),
        json!({"type": "response", "id": "r1", "result": {"denied": 2}})
    );
    let err = ServerFrame::error(
        None,
        ControlError::new(ErrorCode::InvalidJson, "Malformed frame"),
    );
    assert_eq!(
        to_json(&err),
        json!({"type": "response", "id": null,
               "error": {"code": "INVALID_JSON", "message": "Malformed frame"}})
    );
    for f in [ok, err] {
        let back: ServerFrame = serde_json::from_str(&f.to_text()).unwrap();
        assert_eq!(back, f);
    }
}

#[test]
fn events_are_numbered_and_tagged_by_kind() {
    let cases = [
        (
            ControlEvent::StatusChanged,
            json!({"kind": "status.changed"}),
        ),
        (
            ControlEvent::PairingRemoved {
                id: "pr-1".into(),
                reason: "denied".into(),
            },
            json!({"kind": "pairing.removed", "id": "pr-1", "reason": "denied"}),
        ),
        (
            ControlEvent::Resync {
                reason: "lagged".into(),
            },
            json!({"kind": "resync", "reason": "lagged"}),
        ),
        (
            ControlEvent::PolicyChanged,
            json!({"kind": "policy.changed"}),
        ),
    ];
    for (event, want) in cases {
        let frame = ServerFrame::Event(EventFrame { seq: 3, event });
        assert_eq!(
            to_json(&frame),
            json!({"type": "event", "seq": 3, "event": want})
        );
        let back: ServerFrame = serde_json::from_str(&frame.to_text()).unwrap();
        assert_eq!(back, frame);
    }
}

#[test]
fn debug_output_never_shows_the_token() {
    let call = ControlCall::Auth(AuthParams {
        token: "ctk-secret-value".into(),
    });
    let shown = format!("{call:?}");
    assert!(!shown.contains("ctk-secret-value"), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
}

#[test]
fn panel_methods_have_camel_case_shapes() {
    use tap_protocol::control::{StreamsHistory, StreamsHistoryParams, UiLoginResult};
    let req = decode(
        json!({"type": "request", "id": "h", "method": "streams.history",
                            "params": {"sessionId": "s-1", "stream": "log@p", "last": 5}}),
    )
    .unwrap();
    assert_eq!(
        req.call,
        ControlCall::StreamsHistory(StreamsHistoryParams {
            session_id: "s-1".into(),
            stream: Some("log@p".into()),
            last: Some(5),
        })
    );
    let (_, code, _) = decode(
        json!({"type": "request", "id": "h", "method": "streams.history",
                                     "params": {"session": "s-1"}}),
    )
    .unwrap_err();
    assert_eq!(code, ErrorCode::InvalidJson);
    let login = UiLoginResult {
        url: "http://127.0.0.1:9400/#login=abc".into(),
        expires_at: "2026-01-01T00:00:00.000Z".into(),
    };
    assert_eq!(
        to_json(&login),
        json!({"url": "http://127.0.0.1:9400/#login=abc", "expiresAt": "2026-01-01T00:00:00.000Z"})
    );
    assert!(
        !format!("{login:?}").contains("abc"),
        "Debug must not show the code"
    );
    let history = StreamsHistory {
        session_id: "s-1".into(),
        streams: Default::default(),
    };
    assert_eq!(
        to_json(&history),
        json!({"sessionId": "s-1", "streams": {}})
    );
}

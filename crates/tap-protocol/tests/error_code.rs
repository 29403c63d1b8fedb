//! [`ErrorCode`]: the wire spelling of every code the spec names, unknown codes kept
//! verbatim, and which codes are fatal.

use serde_json::json;
use tap_protocol::provider::{GatewayMessage, ProviderMessage};
use tap_protocol::ErrorCode;

/// Every named code with its wire spelling: the spec's `error.code` values, its
/// `tool.result.errorCode` values, and our `DENIED`.
const ALL: &[(ErrorCode, &str)] = &[
    (ErrorCode::AuthFailed, "AUTH_FAILED"),
    (ErrorCode::UnsupportedVersion, "UNSUPPORTED_VERSION"),
    (ErrorCode::InvalidSession, "INVALID_SESSION"),
    (ErrorCode::DuplicateInstance, "DUPLICATE_INSTANCE"),
    (ErrorCode::ToolConflict, "TOOL_CONFLICT"),
    (ErrorCode::RateLimited, "RATE_LIMITED"),
    (ErrorCode::PayloadTooLarge, "PAYLOAD_TOO_LARGE"),
    (ErrorCode::Unauthorized, "UNAUTHORIZED"),
    (ErrorCode::InvalidJson, "INVALID_JSON"),
    (ErrorCode::UnknownType, "UNKNOWN_TYPE"),
    (ErrorCode::NotFound, "NOT_FOUND"),
    (ErrorCode::Timeout, "TIMEOUT"),
    (ErrorCode::Cancelled, "CANCELLED"),
    (ErrorCode::Disconnected, "DISCONNECTED"),
    (ErrorCode::Internal, "INTERNAL"),
    (ErrorCode::Denied, "DENIED"),
];

/// v2 "Error responses": `error.code` values.
const SPEC_ERROR_CODES: &[&str] = &[
    "INVALID_JSON",
    "UNKNOWN_TYPE",
    "INVALID_SESSION",
    "AUTH_FAILED",
    "DUPLICATE_INSTANCE",
    "TOOL_CONFLICT",
    "RATE_LIMITED",
    "PAYLOAD_TOO_LARGE",
    "UNSUPPORTED_VERSION",
    "UNAUTHORIZED",
];

/// v2 "tool.result": `errorCode` values (plus `RATE_LIMITED` from "Tool concurrency").
const SPEC_TOOL_RESULT_CODES: &[&str] = &[
    "NOT_FOUND",
    "TIMEOUT",
    "CANCELLED",
    "DISCONNECTED",
    "UNAUTHORIZED",
    "INTERNAL",
    "RATE_LIMITED",
];

/// Exhaustive: a new variant must be added to `ALL`.
fn spelled(code: &ErrorCode) -> Option<&'static str> {
    Some(match code {
        ErrorCode::AuthFailed => "AUTH_FAILED",
        ErrorCode::UnsupportedVersion => "UNSUPPORTED_VERSION",
        ErrorCode::InvalidSession => "INVALID_SESSION",
        ErrorCode::DuplicateInstance => "DUPLICATE_INSTANCE",
        ErrorCode::ToolConflict => "TOOL_CONFLICT",
        ErrorCode::RateLimited => "RATE_LIMITED",
        ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        ErrorCode::Unauthorized => "UNAUTHORIZED",
        ErrorCode::InvalidJson => "INVALID_JSON",
        ErrorCode::UnknownType => "UNKNOWN_TYPE",
        ErrorCode::NotFound => "NOT_FOUND",
        ErrorCode::Timeout => "TIMEOUT",
        ErrorCode::Cancelled => "CANCELLED",
        ErrorCode::Disconnected => "DISCONNECTED",
        ErrorCode::Internal => "INTERNAL",
        ErrorCode::Denied => "DENIED",
        ErrorCode::Other(_) => return None,
    })
}

#[test]
fn every_named_code_round_trips_with_its_wire_spelling() {
    for (code, wire) in ALL {
        assert_eq!(spelled(code), Some(*wire));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(wire));
        let back: ErrorCode = serde_json::from_value(json!(wire)).unwrap();
        assert_eq!(&back, code, "{wire}");
        assert_eq!(code.as_str(), *wire);
        assert_eq!(code.to_string(), *wire);
    }
}

#[test]
fn every_code_the_spec_names_is_a_named_variant() {
    for wire in SPEC_ERROR_CODES.iter().chain(SPEC_TOOL_RESULT_CODES) {
        let code: ErrorCode = serde_json::from_value(json!(wire)).unwrap();
        assert!(
            !matches!(code, ErrorCode::Other(_)),
            "{wire} fell through to Other"
        );
        assert_eq!(code.as_str(), *wire);
        assert_eq!(serde_json::to_value(&code).unwrap(), json!(wire));
    }
}

#[test]
fn unknown_code_is_kept_verbatim() {
    let code: ErrorCode = serde_json::from_value(json!("MY_CODE")).unwrap();
    assert_eq!(code, ErrorCode::Other("MY_CODE".into()));
    assert_eq!(serde_json::to_value(&code).unwrap(), json!("MY_CODE"));
    assert_eq!(code.as_str(), "MY_CODE");
    assert_eq!(code.to_string(), "MY_CODE");
    assert!(!code.is_fatal());

    // Case matters: a lowercase spelling is not the named code.
    let code: ErrorCode = serde_json::from_value(json!("not_found")).unwrap();
    assert_eq!(code, ErrorCode::Other("not_found".into()));
    assert_eq!(serde_json::to_value(&code).unwrap(), json!("not_found"));
}

#[test]
fn non_string_code_is_rejected() {
    assert!(serde_json::from_value::<ErrorCode>(json!(5)).is_err());
    assert!(serde_json::from_value::<ErrorCode>(json!(null)).is_err());
    assert!(serde_json::from_value::<ErrorCode>(json!({ "AUTH_FAILED": 1 })).is_err());
}

#[test]
fn unknown_code_inside_messages() {
    // A provider may invent its own `errorCode`.
    let msg = tap_protocol::decode::<ProviderMessage>(
        br#"{"type":"tool.result","id":"c","error":"quota","errorCode":"QUOTA_EXCEEDED"}"#,
        ProviderMessage::TYPES,
    )
    .unwrap();
    let ProviderMessage::ToolResult(r) = &msg else {
        panic!("expected ToolResult")
    };
    assert_eq!(
        r.error_code,
        Some(ErrorCode::Other("QUOTA_EXCEEDED".into()))
    );
    assert_eq!(
        serde_json::to_value(&msg).unwrap()["errorCode"],
        json!("QUOTA_EXCEEDED")
    );

    // And a newer gateway's `error.code` survives a round trip too.
    let json = json!({ "type": "error", "code": "SOMETHING_NEW", "message": "m" });
    let msg: GatewayMessage = serde_json::from_value(json.clone()).unwrap();
    let GatewayMessage::Error(e) = &msg else {
        panic!("expected Error")
    };
    assert_eq!(e.code, ErrorCode::Other("SOMETHING_NEW".into()));
    assert_eq!(serde_json::to_value(&msg).unwrap(), json);
}

#[test]
fn only_auth_failed_and_unsupported_version_are_fatal() {
    for (code, wire) in ALL {
        let expected = matches!(*wire, "AUTH_FAILED" | "UNSUPPORTED_VERSION");
        assert_eq!(code.is_fatal(), expected, "{wire}");
    }
    assert!(ErrorCode::AuthFailed.is_fatal());
    assert!(ErrorCode::UnsupportedVersion.is_fatal());
    assert!(!ErrorCode::Other("FATAL".into()).is_fatal());
}

//! The limits agree with their names and with each other, so a change to one value that
//! breaks a relation the gateway relies on fails here rather than in a timing test.

use std::time::Duration;
use tap_protocol::control;
use tap_protocol::limits::*;

#[test]
fn rate_windows_match_the_rates_they_count() {
    assert_eq!(
        PUSH_BUDGET_WINDOW,
        Duration::from_secs(1),
        "MAX_PUSHES_PER_SECOND"
    );
    assert_eq!(
        REBIND_WINDOW,
        Duration::from_secs(60),
        "MAX_REBINDS_PER_MINUTE"
    );
    assert_eq!(
        PAIRING_ATTEMPT_WINDOW,
        Duration::from_secs(60),
        "MAX_PAIRING_ATTEMPTS_PER_MINUTE"
    );
}

#[test]
fn spec_windows_have_the_spec_values() {
    // "Reconnect protocol": a reconnectToken is valid for 30 seconds.
    assert_eq!(RECONNECT_TOKEN_TTL, Duration::from_secs(30));
    // "Gate timeout behavior: fail closed": 5 s.
    assert_eq!(GATE_TIMEOUT, Duration::from_secs(5));
    // `transform.request`: 2 s.
    assert_eq!(TRANSFORM_TIMEOUT, Duration::from_secs(2));
}

#[test]
fn stopping_waits_are_bounded_and_ordered() {
    // Invocations hand their outcomes over before the connections are waited for.
    assert!(STOP_INVOCATIONS_WAIT <= STOP_CONNECTIONS_WAIT);
    // A polite close must not outlast the wait for the connection doing it.
    assert!(CLOSE_HANDSHAKE_TIMEOUT <= STOP_CONNECTIONS_WAIT);
}

#[test]
fn ui_login_code_ttl_is_the_same_constant_under_both_paths() {
    assert_eq!(control::UI_LOGIN_CODE_TTL, UI_LOGIN_CODE_TTL);
    assert_eq!(UI_LOGIN_CODE_TTL, Duration::from_secs(120));
}

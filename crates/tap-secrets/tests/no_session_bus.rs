//! The real OS keyring backend on a machine where it cannot work: no session bus. (Its own
//! test binary: the bus address is process-wide, and the keyring picks its store once.)

use tap_secrets::{place_control_token, OsKeyring, Placement, SecretBackend};

#[test]
fn without_a_session_bus_the_os_keyring_fails_fast_and_the_token_goes_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", dir.path().join("no-bus").display()),
    );
    let keyring = OsKeyring::default();
    let placed = place_control_token(&keyring, dir.path(), "ctk-never-stored", true);
    let Placement::File { reason } = &placed else {
        panic!("expected the file fallback, got {placed:?}");
    };
    assert!(reason.starts_with("no keyring service: "), "{reason}");
    assert!(!reason.contains("ctk-never-stored"), "{reason}");
    // Reads fail the same way (the CLI then reports no control token).
    let err = keyring.get("control-token:/x").unwrap_err();
    assert!(err.to_string().starts_with("no keyring service: "), "{err}");
}

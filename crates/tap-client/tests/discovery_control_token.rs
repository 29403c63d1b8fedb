//! Where `Discovery` finds the control token: the file `tap gateway` writes, or the OS
//! keyring when `gateway.json` says the desktop app keeps it there. (Its own test binary:
//! the keyring case points the process's session bus at nothing.)

use std::path::PathBuf;
use tap_client::Discovery;

fn home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tap-discovery-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("host-token"), "htk-x\n").unwrap();
    dir
}

fn gateway_json(dir: &std::path::Path, store: Option<&str>) {
    let mut state = serde_json::json!({"address": "ws://127.0.0.1:9400", "pid": 1});
    if let Some(s) = store {
        state["controlTokenStore"] = s.into();
    }
    std::fs::write(dir.join("gateway.json"), state.to_string()).unwrap();
}

#[test]
fn the_control_token_comes_from_the_file_or_a_keyring_that_cannot_be_reached_is_reported() {
    // A file store, and a gateway.json from before the field existed: the file.
    for store in [Some("file"), None] {
        let dir = home("file");
        gateway_json(&dir, store);
        std::fs::write(dir.join("control-token"), "ctk-from-file\n").unwrap();
        let found = Discovery::from_home(&dir).unwrap();
        assert_eq!(found.control_token.as_deref(), Some("ctk-from-file"));
        assert_eq!(found.control_token_store, "file");
        assert_eq!(found.control_token_error, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // The keyring store with no session bus: no token, and why; a stray file is not read.
    let dir = home("keyring");
    std::env::set_var(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", dir.join("no-bus").display()),
    );
    gateway_json(&dir, Some("keyring"));
    std::fs::write(dir.join("control-token"), "ctk-stale\n").unwrap();
    let found = Discovery::from_home(&dir).unwrap();
    assert_eq!(found.control_token, None);
    assert_eq!(found.control_token_store, "keyring");
    let why = found.control_token_error.unwrap();
    assert!(
        why.starts_with("cannot read the OS keyring: no keyring service: "),
        "{why}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

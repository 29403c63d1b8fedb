//! `tap gateway` without `--listen` listens on the port saved in `$TAP_HOME/settings.json`
//! (what the panel's Settings page writes); `--listen` still wins.

use crate::common::*;

use serde_json::Value;

/// A port that was free a moment ago (the OS picks it; it is released at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `tap gateway ARGS` in a fresh TAP_HOME whose settings.json holds `port`;
/// returns the address gateway.json reports and the process.
async fn gateway_with_saved_port(port: u16, args: &[&str]) -> (String, Proc, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        format!("{{\"port\": {port}, \"notifications\": true}}"),
    )
    .unwrap();
    let mut cmd = tap_command(&home, &dir.path().join("copilot"));
    cmd.arg("gateway").args(args);
    let mut proc = Proc::spawn("gateway", cmd, dir.path(), false);
    let state_file = home.join("gateway.json");
    let state: Value = eventually("gateway.json", || {
        let exited = proc.exited();
        let state_file = &state_file;
        async move {
            if let Some(status) = exited {
                panic!("the gateway exited early with {status}");
            }
            serde_json::from_str(&std::fs::read_to_string(state_file).ok()?).ok()
        }
    })
    .await;
    let address = state["address"].as_str().unwrap().to_string();
    (address, proc, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_listen_the_gateway_uses_the_saved_port() {
    let port = free_port();
    let (address, mut proc, _dir) = gateway_with_saved_port(port, &[]).await;
    assert_eq!(address, format!("ws://127.0.0.1:{port}"), "{}", proc.log());
    proc.signal("INT");
    assert_eq!(proc.wait().await.code(), Some(0), "{}", proc.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_overrides_the_saved_port() {
    let saved = free_port();
    let (address, mut proc, _dir) =
        gateway_with_saved_port(saved, &["--listen", "127.0.0.1:0"]).await;
    assert_ne!(address, format!("ws://127.0.0.1:{saved}"));
    assert!(address.starts_with("ws://127.0.0.1:"), "{address}");
    proc.signal("INT");
    assert_eq!(proc.wait().await.code(), Some(0), "{}", proc.log());
}

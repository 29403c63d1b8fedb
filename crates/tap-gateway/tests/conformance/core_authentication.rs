//! Core Profile section "Authentication": one gateway token per run, found in
//! `TAP_PROVIDER_TOKEN` or `<COPILOT_HOME>/extensions/tap/.provider-token` (restrictive
//! permissions, removed when the gateway stops); `auth` first; success → `sessions`,
//! failure → `AUTH_FAILED` and close.

use crate::common::*;

fn token_file(gw: &TestGateway) -> std::path::PathBuf {
    gw.dir
        .path()
        .join("copilot")
        .join("extensions")
        .join("tap")
        .join(".provider-token")
}

#[tokio::test]
async fn the_token_file_holds_the_gateway_token_and_is_private() {
    let gw = TestGateway::start().await;
    let path = token_file(&gw);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.trim(), gw.token());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": text.trim()})).await;
    p.expect("sessions").await;
}

#[tokio::test]
async fn the_token_file_is_removed_when_the_gateway_stops() {
    let gw = TestGateway::start().await;
    let path = token_file(&gw);
    assert!(path.exists());
    let dir = gw.dir;
    gw.handle.stop().await.unwrap();
    assert!(!path.exists());
    drop(dir);
}

#[tokio::test]
async fn each_gateway_run_has_its_own_token() {
    let a = TestGateway::start().await;
    let b = TestGateway::start().await;
    assert_ne!(a.token(), b.token());
    let mut p = connect(&b).await;
    p.send(json!({"type": "auth", "token": a.token()})).await;
    p.expect_error("AUTH_FAILED").await;
    assert!(p.expect_closed().await.is_empty());
}

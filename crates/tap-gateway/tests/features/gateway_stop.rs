//! Graceful stop, and the token files a running gateway leaves for other processes.
use tap_testkit::*;

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use tap_gateway::CallRequest;
use tap_protocol::host::HostEvent;
use tap_protocol::ErrorCode;

fn token_files(gw: &TestGateway) -> Vec<PathBuf> {
    gw.handle
        .gateway()
        .files()
        .all()
        .map(|p| p.to_path_buf())
        .collect()
}

#[tokio::test]
async fn stop_ends_calls_closes_providers_and_removes_token_files() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;
    let files = token_files(&gw);
    assert_eq!(files.len(), 5, "{files:?}");
    assert!(files.iter().all(|f| f.exists()), "{files:?}");

    // Two calls in flight: one from the host, one in process.
    let (_, host_rx) = host.start_invoke(&s.id, "slow", json!({})).unwrap();
    p.expect("tool.call").await;
    let gateway = gw.handle.gateway().clone();
    let session_id = s.id.clone();
    let in_process = tokio::spawn(async move {
        gateway
            .call_tool(CallRequest {
                session_id,
                tool: "slow".into(),
                ..Default::default()
            })
            .await
    });
    p.expect("tool.call").await;

    // The provider answers shutdown.pending with goodbye, and is then closed.
    let session_id = s.id.clone();
    let provider = tokio::spawn(async move {
        let pending = p.expect("session.lifecycle").await;
        assert_eq!(pending["state"], "shutdown.pending");
        assert_eq!(pending["sessionId"], session_id.as_str());
        p.send(json!({"type": "goodbye", "reason": "gateway stopping"}))
            .await;
        p.expect_closed().await
    });

    let TestGateway { handle, dir } = gw;
    tokio::time::timeout(PATIENCE, handle.stop())
        .await
        .expect("stop did not finish")
        .unwrap();

    let terminal = [ErrorCode::Cancelled, ErrorCode::Disconnected];
    let r = tokio::time::timeout(PATIENCE, host_rx)
        .await
        .expect("no result for the host's call")
        .expect("the host connection closed without the call's result");
    let HostEvent::ToolResult(r) = r else {
        panic!("expected a tool.result, got {r:?}")
    };
    assert!(
        r.error_code.as_ref().is_some_and(|c| terminal.contains(c)),
        "{r:?}"
    );
    let err = in_process.await.unwrap().unwrap_err();
    assert!(terminal.contains(&err.code), "{err:?}");

    let seen = tokio::time::timeout(PATIENCE, provider)
        .await
        .expect("the provider socket was not closed")
        .unwrap();
    assert!(
        seen.iter().all(|m| m["type"] != "tool.call"),
        "calls after stop: {seen:?}"
    );
    for f in &files {
        assert!(!f.exists(), "{} was not removed", f.display());
    }
    drop(dir);
}

#[tokio::test]
async fn token_files_are_private_and_tokens_well_formed() {
    let gw = TestGateway::start().await;
    let files = gw.handle.gateway().files().clone();
    for f in files.all() {
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} has mode {mode:o}", f.display());
    }

    let token = gw.token();
    assert!(token.starts_with("ptk-"), "{token}");
    assert!(token.len() >= 4 + 22, "{token}");
    assert!(token[4..]
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    let host_token = gw.handle.gateway().host_token().to_string();
    assert!(host_token.starts_with("htk-"), "{host_token}");
    assert!(host_token.len() >= 4 + 22, "{host_token}");
    assert_ne!(token[4..], host_token[4..]);

    let read = |p: &std::path::Path| tap_gateway::read_secret_file(p).unwrap();
    assert_eq!(read(&files.provider_token), token);
    assert_eq!(read(files.copilot_provider_token.as_ref().unwrap()), token);
    assert!(files
        .copilot_provider_token
        .as_ref()
        .unwrap()
        .ends_with("extensions/tap/.provider-token"));
    assert_eq!(read(&files.host_token), host_token);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files.state).unwrap()).unwrap();
    assert_eq!(state["address"], gw.url());
    assert_eq!(state["pid"], std::process::id());

    gw.handle.stop().await.unwrap();
    assert!(files.all().all(|f| !f.exists()));
}

//! File results (spec: "Payload limits"): `tool.result.file` naming a file inside the
//! provider's `persistDir` is read (copied) by the gateway at once and handed to the caller
//! as `{"file": {path, mimeType, size, expiresAt}}`, readable until its `ttl`; anything
//! outside `persistDir` is refused `UNAUTHORIZED`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tap_client::HostClient;
use tap_protocol::host::HostToolResult;
use tap_testkit::*;

/// A provider bound with one tool `shot`; returns it and its `persistDir`.
async fn provider_with_persist_dir(gw: &TestGateway, session: &str) -> (Provider, PathBuf) {
    let (p, ack) = gw
        .bind("files", session, json!({"tools": [tool("shot")]}))
        .await;
    (p, PathBuf::from(ack["persistDir"].as_str().unwrap()))
}

/// Calls `shot` and answers with a `file` result; returns the caller's result and what
/// the provider received after it (an `error`, or nothing before a fence).
async fn answer_with_file(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
    file: Value,
) -> (HostToolResult, Option<Value>) {
    let (_, rx) = host.start_invoke(session, "shot", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "file": file}))
        .await;
    let r = result_of(rx).await;
    p.send(json!({"type": "stream.query", "queryId": "fence", "streams": []}))
        .await;
    let m = p.recv().await;
    let error = (m["type"] == "error").then(|| m.clone());
    if error.is_some() {
        p.expect("stream.history").await;
    }
    (r, error)
}

fn code(r: &HostToolResult) -> Option<String> {
    r.error_code.as_ref().map(|c| c.to_string())
}

#[tokio::test]
async fn a_file_result_inside_persist_dir_is_copied_and_readable_until_its_ttl() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, dir) = provider_with_persist_dir(&gw, &s.id).await;
    let original = dir.join("shot.png");
    std::fs::write(&original, b"\x89PNG not really").unwrap();
    let (r, error) = answer_with_file(
        &host,
        &mut p,
        &s.id,
        json!({"path": original, "mimeType": "image/png", "size": 15, "ttl": 1}),
    )
    .await;
    assert_eq!(error, None);
    assert_eq!(r.error_code, None, "{r:?}");
    let file = &r.data.as_ref().unwrap()["file"];
    assert_eq!(file["mimeType"], "image/png");
    assert_eq!(file["size"], 15);
    assert!(file["expiresAt"].is_string(), "{file}");
    let copy = PathBuf::from(file["path"].as_str().unwrap());
    assert_ne!(copy, original, "the gateway's own copy");
    // The provider may delete its file: the copy stands.
    std::fs::remove_file(&original).unwrap();
    assert_eq!(std::fs::read(&copy).unwrap(), b"\x89PNG not really");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // After the ttl (1 s) the copy is gone.
    wait_until("the copy to go after its ttl", || {
        std::future::ready(!copy.exists())
    })
    .await;
}

async fn refused(file: impl FnOnce(&Path) -> Value, expected: &str) -> (HostToolResult, Value) {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, dir) = provider_with_persist_dir(&gw, &s.id).await;
    let file = file(&dir);
    let (r, error) = answer_with_file(&host, &mut p, &s.id, file).await;
    assert_eq!(code(&r).as_deref(), Some(expected), "{r:?}");
    let error = error.expect("the provider hears why");
    assert_eq!(error["code"], expected, "{error}");
    assert_eq!(error["replyTo"], "tool.result", "{error}");
    (r, error)
}

#[tokio::test]
async fn a_file_result_outside_persist_dir_is_unauthorized() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, b"secret").unwrap();
    let (r, _) = refused(
        |_| json!({"path": secret, "mimeType": "text/plain", "size": 6, "ttl": 60}),
        "UNAUTHORIZED",
    )
    .await;
    assert!(r.data.is_none());
}

#[tokio::test]
async fn a_file_result_escaping_persist_dir_with_dot_dot_is_unauthorized() {
    refused(
        |dir| {
            let escape = dir.join("..").join("..").join("provider-token");
            json!({"path": escape, "mimeType": "text/plain", "size": 47, "ttl": 60})
        },
        "UNAUTHORIZED",
    )
    .await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_in_persist_dir_pointing_outside_is_unauthorized() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, b"secret").unwrap();
    refused(
        |dir| {
            let link = dir.join("innocent.txt");
            std::os::unix::fs::symlink(&secret, &link).unwrap();
            json!({"path": link, "mimeType": "text/plain", "size": 6, "ttl": 60})
        },
        "UNAUTHORIZED",
    )
    .await;
}

#[tokio::test]
async fn a_missing_file_result_is_not_found() {
    refused(
        |dir| json!({"path": dir.join("never.png"), "mimeType": "image/png", "size": 1, "ttl": 60}),
        "NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn a_file_result_of_the_wrong_size_or_ttl_is_invalid_json() {
    let (_, e) = refused(
        |dir| {
            std::fs::write(dir.join("a.txt"), b"abc").unwrap();
            json!({"path": dir.join("a.txt"), "mimeType": "text/plain", "size": 4, "ttl": 60})
        },
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("3 bytes"), "{e}");
    refused(
        |dir| {
            std::fs::write(dir.join("b.txt"), b"abc").unwrap();
            json!({"path": dir.join("b.txt"), "mimeType": "text/plain", "size": 3, "ttl": 0})
        },
        "INVALID_JSON",
    )
    .await;
}

//! A remote server over Streamable HTTP (`"type": "http"`): the PyPI `mcp` SDK's own server
//! under uvicorn on a port the OS picked.

use super::super::mcp::{client, text_of, wait_listed};
use super::{gateway_with, server_in};
use serde_json::json;
use tap_testkit::mcp::{test_python, workspace_root};
use tokio::io::AsyncBufReadExt;

#[tokio::test]
async fn a_streamable_http_server_is_a_provider() {
    let script = workspace_root().join("tests/mcp/servers/http_server.py");
    let mut server = tokio::process::Command::new(test_python())
        .arg(script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().expect("PORT line");
    let port: u16 = first.strip_prefix("PORT ").unwrap().trim().parse().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let gw = gateway_with(
        json!({"remote": {"type": "http", "url": url, "headers": {"X-Test": "yes"}}}),
        |_| {},
    )
    .await;
    let entry = server_in(&gw, "remote", "ready").await;
    assert_eq!(entry["transport"], "http");
    assert_eq!(entry["secretNames"], json!(["X-Test"]), "{entry}");
    assert!(entry.get("pid").is_none(), "{entry}");
    assert!(
        entry.get("memoryBytes").is_none(),
        "no process, no memory: {entry}"
    );

    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "remote__echo").await;
    let echo = c
        .call("1", "remote__echo", json!({"message": "over http"}))
        .await;
    assert_eq!(text_of(&echo), "over http", "{echo}");
    let add = c.call("2", "remote__add", json!({"a": 2, "b": 40})).await;
    assert!(text_of(&add).contains("42"), "{add}");
    server.kill().await.unwrap();
}

//! A remote server over Streamable HTTP (`"type": "http"`): the PyPI `mcp` SDK's own server
//! under uvicorn on a port the OS picked.

use super::super::mcp::{client, text_of, wait_listed};
use super::{gateway_with, server_in};
use serde_json::json;

#[tokio::test]
async fn a_streamable_http_server_is_a_provider() {
    let (mut server, port) = tap_testkit::mcp::fixture_server("http_server.py", &[]).await;
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

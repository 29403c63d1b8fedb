//! The legacy HTTP+SSE transport (`"type": "sse"`): the PyPI `mcp` SDK's own SSE server
//! (`tests/mcp/servers/http_server.py --sse`) is a provider, comes back after its stream
//! drops, and servers that never name their endpoint, name one on another origin or send
//! an event over the limit of a message are refused with the reason.

use super::super::mcp::{client, text_of, wait_listed};
use super::{gateway_with, impatient, server_in, server_when};
use serde_json::json;
use std::time::Duration;
use tap_gateway::RestartPolicy;
use tokio::process::Child;

/// `http_server.py ARGS…`, once it listens; its port.
async fn start(args: &[&str]) -> (Child, u16) {
    tap_testkit::mcp::fixture_server("http_server.py", args).await
}

#[tokio::test]
async fn a_legacy_sse_server_is_a_provider_and_comes_back_after_its_stream_drops() {
    let (mut server, port) = start(&["--sse"]).await;
    let url = format!("http://127.0.0.1:{port}/sse");
    let gw = gateway_with(
        json!({"legacy": {"type": "sse", "url": url, "headers": {"X-Test": "yes"}}}),
        |c| {
            // Retried while the server is down, never parked.
            c.project_restart = RestartPolicy {
                backoff: Duration::from_millis(50),
                backoff_max: Duration::from_millis(200),
                stable_run: Duration::from_secs(60),
                max_quick_failures: 1000,
            };
        },
    )
    .await;
    let entry = server_in(&gw, "legacy", "ready").await;
    assert_eq!(entry["transport"], "sse", "{entry}");
    assert_eq!(entry["secretNames"], json!(["X-Test"]), "{entry}");

    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "legacy__echo").await;
    let echo = c
        .call("1", "legacy__echo", json!({"message": "over sse"}))
        .await;
    assert_eq!(text_of(&echo), "over sse", "{echo}");
    let add = c.call("2", "legacy__add", json!({"a": 2, "b": 40})).await;
    assert!(text_of(&add).contains("42"), "{add}");

    // The server dies: its stream drops, the run fails at once (no call needed to notice),
    // and the supervisor keeps trying until a server listens there again.
    server.kill().await.unwrap();
    let down = server_when(&gw, "legacy", |s| {
        s["state"] != "ready" && s["lastError"].is_string()
    })
    .await;
    let why = down["lastError"].as_str().unwrap();
    assert!(why.contains("event stream"), "{down}");
    let (_again, _) = start(&["--sse", "--port", &port.to_string()]).await;
    server_when(&gw, "legacy", |s| {
        s["state"] == "ready" && s["restarts"].as_u64() >= Some(1)
    })
    .await;
    wait_listed(&mut c, "legacy__echo").await;
    let echo = c
        .call("3", "legacy__echo", json!({"message": "back"}))
        .await;
    assert_eq!(text_of(&echo), "back", "{echo}");
}

#[tokio::test]
async fn legacy_sse_servers_without_an_endpoint_with_a_foreign_one_or_too_much_are_refused() {
    let (_silent, silent) = start(&["--sse-no-endpoint"]).await;
    let (_foreign, foreign) = start(&["--sse-foreign-endpoint"]).await;
    let (_http, http) = start(&[]).await;
    let (_huge, huge) = start(&["--sse-huge"]).await;
    let sse = |port: u16, path: &str| json!({"type": "sse", "url": format!("http://127.0.0.1:{port}{path}")});
    let gw = gateway_with(
        json!({
            "silent": sse(silent, "/sse"),
            "foreign": sse(foreign, "/sse"),
            // A Streamable HTTP server configured as `sse` by mistake.
            "mistaken": sse(http, "/mcp"),
            // Answers `initialize` with one event over the 16 MiB limit of a message.
            "huge": sse(huge, "/sse"),
        }),
        impatient,
    )
    .await;
    let silent = server_in(&gw, "silent", "parked").await;
    assert!(
        silent["lastError"]
            .as_str()
            .unwrap()
            .contains("sent no `endpoint` event within 800 ms"),
        "{silent}"
    );
    let foreign = server_in(&gw, "foreign", "parked").await;
    let why = foreign["lastError"].as_str().unwrap();
    assert!(
        why.contains("http://127.0.0.2:9/messages/") && why.contains("another origin"),
        "{foreign}"
    );
    let huge = server_in(&gw, "huge", "parked").await;
    assert!(
        huge["lastError"].as_str().unwrap().contains("over 16 MiB"),
        "{huge}"
    );
    let mistaken = server_in(&gw, "mistaken", "parked").await;
    assert!(
        mistaken["lastError"]
            .as_str()
            .unwrap()
            .contains("\"type\": \"http\""),
        "{mistaken}"
    );
}

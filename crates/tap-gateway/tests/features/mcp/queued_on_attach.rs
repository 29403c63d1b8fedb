//! Pushes made while an MCP session has no client connected reach the next client of that
//! session right after its `initialize`, in order, as log messages: the PyPI `mcp` client
//! (initialize generation, which has a stream for server messages) exits, a provider pushes
//! two `surface` events and an `inject` into the session it left, and a new client of the same
//! session label gets all three. (The session's in-process MCP host does not show as detached
//! in `status` meanwhile, so the test waits on the first client's exit, not on that.)

use super::{client, session_id};
use serde_json::json;
use tap_testkit::{tool, McpClient, TestGateway};

/// The client's next `notifications/message`, past other notices.
async fn next_message(c: &mut McpClient) -> serde_json::Value {
    loop {
        let n = c.expect("notice").await;
        if n["kind"] == "message" {
            return n;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_while_no_mcp_client_is_attached_arrive_when_the_next_one_initializes() {
    let gw = TestGateway::start().await;
    let mut first = client(&gw, "work", "legacy").await;
    let session = session_id(&gw, "work").await;
    let mut p = gw.bound("ci", &session, json!([tool("t")])).await;
    first.send(json!({"op": "exit"})).await;
    assert!(first.proc.wait().await.success(), "{}", first.proc.log());
    for (level, event) in [
        ("surface", "build 1 failed"),
        ("surface", "build 2 ok"),
        ("inject", "deploy waiting"),
    ] {
        p.send(json!({"type": "push", "level": level, "event": event, "stream": "ci"}))
            .await;
    }
    // A round trip: every push before it has been handled (queued, no client to send to).
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;

    let mut second = client(&gw, "work", "legacy").await;
    assert_eq!(session_id(&gw, "work").await, session, "the same session");
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(next_message(&mut second).await);
    }
    let events: Vec<_> = got.iter().map(|n| n["data"]["event"].clone()).collect();
    assert_eq!(
        events,
        [
            json!("build 1 failed"),
            json!("build 2 ok"),
            json!("deploy waiting")
        ],
        "{got:?}"
    );
    assert_eq!(got[2]["data"]["level"], "inject", "{}", got[2]);
    assert!(got.iter().all(|n| n["data"]["stream"] == "ci"), "{got:?}");
}

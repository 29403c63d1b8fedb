//! Streams as MCP resources, their updates, deliveries as log messages, and the providers'
//! context as the `tap_context` prompt.

use super::{client, session_id, MODES};
use serde_json::json;
use tap_testkit::{tool, TestGateway};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_a_resource_with_its_events_as_json_lines() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let session = session_id(&gw, "work").await;
    let mut p = gw.bound("ci", &session, json!([tool("t")])).await;
    for event in ["build started", "build passed"] {
        p.send(json!({"type": "push", "level": "keep", "event": event, "stream": "builds"}))
            .await;
    }
    let uri = "tap://streams/ci/builds";
    let listed = loop {
        c.send(json!({"op": "resources"})).await;
        let r = c.expect("resources").await;
        if r["uris"].as_array().unwrap().iter().any(|u| u == uri) {
            break r;
        }
    };
    assert_eq!(listed["uris"], json!([uri]));
    let text = loop {
        c.send(json!({"op": "read", "uri": uri})).await;
        let t = c.expect("read").await["text"].as_str().unwrap().to_string();
        if t.lines().count() == 2 {
            break t;
        }
    };
    let events: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(events, ["build started", "build passed"], "oldest first");

    c.send(json!({"op": "read", "uri": "tap://streams/ci/nope"}))
        .await;
    let e = c.expect("error").await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("No stream resource"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_stream_notifies_new_events_in_both_generations() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        let session = session_id(&gw, "work").await;
        let mut p = gw.bound("ci", &session, json!([tool("t")])).await;
        p.send(json!({"type": "push", "level": "keep", "event": "first", "stream": "builds"}))
            .await;
        let uri = "tap://streams/ci/builds";
        // The stream exists once its first event is stored.
        loop {
            c.send(json!({"op": "resources"})).await;
            if c.expect("resources").await["uris"]
                .as_array()
                .unwrap()
                .len()
                == 1
            {
                break;
            }
        }
        c.send(json!({"op": "watch", "uri": uri})).await;
        c.expect("watching").await;
        p.send(json!({"type": "push", "level": "keep", "event": "second", "stream": "builds"}))
            .await;
        let n = loop {
            let n = c.expect("notice").await;
            if n["kind"] == "resource_updated" {
                break n;
            }
        };
        assert_eq!(n["uri"], uri, "{mode}");
    }
}

/// The client's next `notifications/message`, past other notices.
async fn next_message(c: &mut tap_testkit::McpClient) -> serde_json::Value {
    loop {
        let n = c.expect("notice").await;
        if n["kind"] == "message" {
            return n;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn surface_and_inject_pushes_reach_an_initialize_generation_client_as_log_messages() {
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let session = session_id(&gw, "work").await;
    let mut p = gw.bound("ci", &session, json!([tool("t")])).await;
    p.send(
        json!({"type": "push", "level": "surface", "event": "deploy done", "stream": "deploys"}),
    )
    .await;
    let n = next_message(&mut c).await;
    assert_eq!(n["data"]["event"], "deploy done", "{n}");
    assert_eq!(n["data"]["provider"], "ci", "{n}");
    assert_eq!(n["data"]["stream"], "deploys", "{n}");
    assert_eq!(n["level"], "info", "{n}");

    // An inject is shown too (MCP has no way to start a turn), one level up, with its
    // prompt.
    p.send(
        json!({"type": "push", "level": "inject", "event": "tests failed",
                  "stream": "deploys", "prompt": "Fix the failing test."}),
    )
    .await;
    let n = next_message(&mut c).await;
    assert_eq!(n["data"]["event"], "tests failed", "{n}");
    assert_eq!(n["data"]["level"], "inject", "{n}");
    assert_eq!(n["data"]["prompt"], "Fix the failing test.", "{n}");
    assert_eq!(n["level"], "notice", "{n}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_prompt_carries_the_providers_context_after_the_users_text() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        let mut c = client(&gw, "work", mode).await;
        c.send(json!({"op": "prompts"})).await;
        let names = c.expect("prompts").await["names"].clone();
        assert_eq!(
            names[0], "tap_context",
            "the context first, then the skills: {names}"
        );
        let session = session_id(&gw, "work").await;
        let mut p = gw.bound("ci", &session, json!([tool("t")])).await;
        p.send(
            json!({"type": "context.update", "requestId": "c1", "context": "CI is red on main."}),
        )
        .await;
        p.expect_next("ack").await;
        c.send(
            json!({"op": "prompt", "name": "tap_context", "args": {"prompt": "Fix the build."}}),
        )
        .await;
        let text = c.expect("prompt").await["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(text, "Fix the build.\n\nCI is red on main.", "{mode}");
    }
}

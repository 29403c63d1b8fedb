//! `tap call` with multi-instance providers: `list_<name>_instances` and the `target`
//! argument work through the session-host path like any tool, and a retryable failure is
//! retried on another instance. Real `tap gateway` child, real `tap` binary, browser-tab
//! providers as raw sockets.

use crate::common::{run, tool, GatewayProcess, Provider, SessionOpen};
use serde_json::{json, Value};

/// A browser tab: provider `browser` with `instance` and a title in its metadata.
async fn tab(gw: &GatewayProcess, session: &str, instance: &str, title: &str) -> Provider {
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": session,
                  "instance": instance, "metadata": {"title": title, "url": "https://app.test/"},
                  "tools": [tool("screenshot")]}),
    )
    .await;
    let ack = p.expect_next("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    p.expect_next("session.lifecycle").await;
    p
}

fn call(
    gw: &GatewayProcess,
    session: &str,
    tool: &str,
    args: Option<&str>,
) -> tokio::process::Command {
    let mut cmd = gw.tap();
    cmd.args(["call", "--session", session, tool]);
    cmd.args(args);
    cmd
}

async fn answer(p: &mut Provider, call: &Value, data: Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_call_lists_instances_and_routes_by_target() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let mut a = tab(&gw, &session.id, "tab-a", "Dashboard").await;
    let mut b = tab(&gw, &session.id, "tab-b", "Settings").await;
    gw.wait_for_tool(&session.id, "list_browser_instances")
        .await;

    let out = run(call(&gw, &session.id, "list_browser_instances", None)).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let list = out.json();
    assert_eq!(list["provider"], "browser", "{list}");
    assert_eq!(list["defaultTarget"], "tab-b", "{list}");
    let ids: Vec<&str> = list["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instance"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["tab-b", "tab-a"],
        "most recently active first: {list}"
    );
    assert_eq!(list["instances"][1]["label"], "Dashboard", "{list}");
    assert!(list["instances"][1]["lastActive"].is_string(), "{list}");

    // `target` picks the instance; the instance does not see it.
    let caller = tokio::spawn(run(call(
        &gw,
        &session.id,
        "screenshot",
        Some(r#"{"target":"tab-a","fullPage":true}"#),
    )));
    let c = a.expect_next("tool.call").await;
    assert_eq!(c["args"], json!({"fullPage": true}), "{c}");
    answer(&mut a, &c, json!("png from a")).await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("png from a"));

    // A target that is not connected: NOT_FOUND, naming the live instances.
    let out = run(call(
        &gw,
        &session.id,
        "screenshot",
        Some(r#"{"target":"tab-gone"}"#),
    ))
    .await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let e = out.json();
    assert_eq!(e["errorCode"], "NOT_FOUND", "{e}");
    assert!(e["error"].as_str().unwrap().contains("tab-a, tab-b"), "{e}");

    // Without target: the most recently active instance (tab-a just answered); a retryable
    // failure there is retried on tab-b.
    let caller = tokio::spawn(run(call(&gw, &session.id, "screenshot", None)));
    let first = a.expect_next("tool.call").await;
    a.send(
        json!({"type": "tool.result", "id": first["id"], "error": "tab hidden",
                  "errorCode": "INTERNAL", "retryable": true}),
    )
    .await;
    let retry = b.expect_next("tool.call").await;
    answer(&mut b, &retry, json!("png from b")).await;
    let out = caller.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("png from b"));
}

//! Spec section "Multi-instance providers (browser tabs)": `name` + `instance` as the
//! compound key, one shared copy of each tool with an injected `target` parameter, a
//! generated `list_<name>_instances` meta-tool, routing by `target` or to the most recently
//! active instance; and `tool.result.retryable` ("retry on another instance", decision F4).
//! Decisions M1–M6 in docs/spec-decisions.md make the rest precise.

use crate::common::*;

async fn tab(gw: &TestGateway, session: &str, instance: &str, title: &str) -> Provider {
    bind(
        gw,
        "browser",
        session,
        json!({"instance": instance, "metadata": {"title": title},
                "tools": [tool("screenshot")]}),
    )
    .await
    .0
}

#[tokio::test]
async fn name_and_instance_are_the_compound_key() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = bind(
        &gw,
        "browser",
        &s.id,
        json!({"instance": "tab-a", "tools": [tool("a_tool")]}),
    )
    .await;
    let _b = bind(
        &gw,
        "browser",
        &s.id,
        json!({"instance": "tab-b", "tools": [tool("b_tool")]}),
    )
    .await;
    let status = host.status().await.unwrap();
    let mut instances: Vec<_> = status
        .providers
        .iter()
        .filter_map(|p| p.instance.clone())
        .collect();
    instances.sort();
    assert_eq!(instances, ["tab-a", "tab-b"]);
}

#[tokio::test]
async fn one_copy_of_each_shared_tool_has_an_injected_target_parameter() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let _a = tab(&gw, &s.id, "tab-a3f8", "Dashboard — MyApp").await;
    let _b = tab(&gw, &s.id, "tab-b2c1", "Settings").await;
    // A single instance already has the shared shape (decision M1), so the first publish
    // may show tab-a3f8 alone: wait for the one that lists both.
    let target = loop {
        let t = tools_published(&mut host, &s.id, &["list_browser_instances", "screenshot"]).await;
        let shot = t.tools.iter().find(|t| t.name == "screenshot").unwrap();
        let target = shot.parameters.to_value()["properties"]["target"].clone();
        if target["enum"] == json!(["tab-a3f8", "tab-b2c1"]) {
            break target;
        }
    };
    assert_eq!(target["type"], "string", "{target}");
    let desc = target["description"].as_str().unwrap();
    for part in ["tab-a3f8", "Dashboard — MyApp", "tab-b2c1", "Settings"] {
        assert!(desc.contains(part), "{desc}");
    }
}

#[tokio::test]
async fn a_list_instances_meta_tool_returns_the_live_instances_and_their_metadata() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = tab(&gw, &s.id, "tab-a", "Dashboard").await;
    let _b = tab(&gw, &s.id, "tab-b", "Settings").await;
    let r = invoke_unanswered(&host, &s.id, "list_browser_instances").await;
    assert_eq!(r.error_code, None, "{r:?}");
    let text = r.data.unwrap().to_string();
    for part in ["tab-a", "Dashboard", "tab-b", "Settings"] {
        assert!(text.contains(part), "{text}");
    }
}

#[tokio::test]
async fn a_call_with_target_goes_to_that_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a", "A").await;
    let mut b = tab(&gw, &s.id, "tab-b", "B").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({"target": "tab-a"}));
    let call = a.expect("tool.call").await;
    answer(&mut a, &call, json!("from a")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("from a")));
    fence(&mut b).await;
}

#[tokio::test]
async fn a_call_without_target_goes_to_the_most_recently_active_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a", "A").await;
    let mut b = tab(&gw, &s.id, "tab-b", "B").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    let call = b.expect("tool.call").await;
    answer(&mut b, &call, json!("from b")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("from b")));
    fence(&mut a).await;
}

#[tokio::test]
async fn a_retryable_failure_is_retried_on_another_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a", "A").await;
    let mut b = tab(&gw, &s.id, "tab-b", "B").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    let first = b.expect("tool.call").await;
    b.send(
        json!({"type": "tool.result", "id": first["id"], "error": "tab hidden",
                  "errorCode": "INTERNAL", "retryable": true}),
    )
    .await;
    let retry = a.expect("tool.call").await;
    assert_eq!(retry["tool"], "screenshot");
    answer(&mut a, &retry, json!("from a")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("from a")));
}

#[tokio::test]
async fn a_failure_not_marked_retryable_is_not_retried() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a", "A").await;
    let mut b = tab(&gw, &s.id, "tab-b", "B").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    let first = b.expect("tool.call").await;
    b.send(
        json!({"type": "tool.result", "id": first["id"], "error": "Element not found",
                  "errorCode": "NOT_FOUND", "retryable": false}),
    )
    .await;
    assert_eq!(code(&result_of(rx).await), Some("NOT_FOUND"));
    fence(&mut a).await;
}

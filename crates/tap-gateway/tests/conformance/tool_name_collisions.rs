//! Spec section "Tool name collisions" (Protocol rules): two providers cannot register
//! the same tool name in one session (`TOOL_CONFLICT`); multi-instance providers share
//! names through an injected `target`; `list_<provider name>…` is reserved. Spec decision
//! 10: the same name twice in one list is `TOOL_CONFLICT` too.

use crate::common::*;

#[tokio::test]
async fn a_second_provider_registering_the_same_tool_in_hello_gets_tool_conflict() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut first = bound(&gw, "first", &s.id, json!([tool("screenshot")])).await;
    let (mut second, _) = authed(&gw).await;
    let e = hello_refused(
        &mut second,
        hello("second", &s.id, json!({"tools": [tool("screenshot")]})),
        "TOOL_CONFLICT",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("first"), "{e}");
    // The first registration stands.
    let r = call_and_answer(&host, &mut first, &s.id, "screenshot", json!("first")).await;
    assert_eq!(r.data, Some(json!("first")));
}

#[tokio::test]
async fn a_second_provider_registering_the_same_tool_in_tools_update_gets_tool_conflict() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut first = bound(&gw, "first", &s.id, json!([tool("screenshot")])).await;
    let mut second = bound(&gw, "second", &s.id, json!([tool("other")])).await;
    second
        .send(json!({"type": "tools.update", "requestId": "r", "tools": [tool("screenshot")]}))
        .await;
    let e = second.expect_error("TOOL_CONFLICT").await;
    assert_eq!(e["replyTo"], "tools.update", "{e}");
    assert_eq!(
        session_tool_names(&host, &s.id).await,
        ["other", "screenshot"]
    );
    let r = call_and_answer(&host, &mut first, &s.id, "screenshot", json!("first")).await;
    assert_eq!(r.data, Some(json!("first")));
}

#[tokio::test]
async fn the_same_tool_name_in_another_session_is_no_conflict() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let _a = bound(&gw, "a", &s1.id, json!([tool("t")])).await;
    let mut b = bound(&gw, "b", &s2.id, json!([tool("t")])).await;
    let r = call_and_answer(&host, &mut b, &s2.id, "t", json!("b")).await;
    assert_eq!(r.data, Some(json!("b")));
}

#[tokio::test]
async fn the_same_tool_name_twice_in_one_list_is_tool_conflict() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    let e = hello_refused(
        &mut p,
        hello("p", &s.id, json!({"tools": [tool("twice"), tool("twice")]})),
        "TOOL_CONFLICT",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("twice"), "{e}");
}

#[tokio::test]
async fn a_tool_is_free_again_once_its_provider_left() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut first = bound(&gw, "first", &s.id, json!([tool("t")])).await;
    first.send(json!({"type": "goodbye"})).await;
    first.expect_closed().await;
    let mut second = bound(&gw, "second", &s.id, json!([tool("t")])).await;
    let r = call_and_answer(&host, &mut second, &s.id, "t", json!("second")).await;
    assert_eq!(r.data, Some(json!("second")));
}

#[tokio::test]
async fn multi_instance_providers_share_tool_names_without_conflict() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = bind(
        &gw,
        "browser",
        &s.id,
        json!({"instance": "tab-a", "tools": [tool("screenshot")]}),
    )
    .await;
    let (mut b, _) = authed(&gw).await;
    b.send(hello(
        "browser",
        &s.id,
        json!({"instance": "tab-b", "tools": [tool("screenshot")]}),
    ))
    .await;
    expect_bound(&mut b, &s.id).await;
    let names = session_tool_names(&host, &s.id).await;
    assert_eq!(
        names.iter().filter(|n| *n == "screenshot").count(),
        1,
        "one shared copy: {names:?}"
    );
}

#[tokio::test]
async fn a_tool_named_list_followed_by_another_providers_name_is_refused() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _browser = bound(&gw, "browser", &s.id, json!([tool("screenshot")])).await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello(
            "sneaky",
            &s.id,
            json!({"tools": [tool("list_browser_instances")]}),
        ),
        "TOOL_CONFLICT",
    )
    .await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["screenshot"]);
}

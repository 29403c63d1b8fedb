//! Spec section "Reconnect protocol" (Protocol rules) and "Provider identity": the
//! `reconnectToken` of `hello.ack`, valid 30 s, restores the binding under the same
//! `providerId` and closes the old connection; in-flight calls fail `DISCONNECTED` and
//! are not replayed; without a valid token a held identity gets `DUPLICATE_INSTANCE`.
//! Spec decisions I1–I3 (the 30 s run from the disconnect; what the new `hello` leaves
//! out — `session`, `tools`, hooks, context — is restored, what it sends replaces).

use crate::common::*;
use tap_protocol::limits::RECONNECT_TOKEN_TTL;

#[tokio::test]
async fn hello_ack_carries_a_reconnect_token_and_a_stable_provider_id() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "p", &s.id, json!({})).await;
    assert!(
        ack["reconnectToken"].as_str().is_some_and(|t| t.len() > 32),
        "{ack}"
    );
    assert!(
        ack["providerId"].as_str().is_some_and(|t| !t.is_empty()),
        "{ack}"
    );
}

async fn disconnected(host: &HostClient, p: Provider, name: &str) {
    drop(p);
    wait_until("the disconnect is seen", || async {
        !provider_listed(host, name).await
    })
    .await;
}

#[tokio::test]
async fn a_reconnect_token_restores_the_binding_with_the_same_provider_id() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "p", &s.id, json!({"tools": [tool("t")]})).await;
    disconnected(&host, old, "p").await;
    let (mut new, _) = authed(&gw).await;
    new.send(json!({"type": "hello", "name": "p", "protocolVersion": 2,
                    "reconnectToken": ack["reconnectToken"], "tools": [tool("t")]}))
        .await;
    let ack2 = expect_bound(&mut new, &s.id).await;
    assert_eq!(ack2["providerId"], ack["providerId"]);
    let r = call_and_answer(&host, &mut new, &s.id, "t", json!("back")).await;
    assert_eq!(r.data, Some(json!("back")));
}

#[tokio::test]
async fn a_reconnect_token_closes_the_old_connection_if_still_open() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "p", &s.id, json!({"tools": [tool("t")]})).await;
    let rx = invoke(&host, &s.id, "t", json!({}));
    old.expect("tool.call").await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"], "tools": [tool("t")]}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    old.expect_closed().await;
    assert_eq!(
        code(&result_of(rx).await),
        Some("DISCONNECTED"),
        "not replayed"
    );
    fence(&mut new).await;
}

#[tokio::test]
async fn the_token_is_checked_against_name_and_instance() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_a, ack) = bind(&gw, "p", &s.id, json!({"instance": "one"})).await;
    let _b = bind(&gw, "p", &s.id, json!({"instance": "two"})).await;
    let (mut c, _) = authed(&gw).await;
    // p/one's token does not open p/two.
    hello_refused(
        &mut c,
        hello(
            "p",
            &s.id,
            json!({"instance": "two", "reconnectToken": ack["reconnectToken"]}),
        ),
        "DUPLICATE_INSTANCE",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_token_is_still_valid_29s_after_the_disconnect() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "p", &s.id, json!({})).await;
    disconnected(&host, old, "p").await;
    tokio::time::sleep(RECONNECT_TOKEN_TTL - Duration::from_secs(1)).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    assert_eq!(
        expect_bound(&mut new, &s.id).await["providerId"],
        ack["providerId"]
    );
}

#[tokio::test(start_paused = true)]
async fn the_token_expires_30s_after_the_disconnect() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "p", &s.id, json!({})).await;
    disconnected(&host, old, "p").await;
    tokio::time::sleep(RECONNECT_TOKEN_TTL + Duration::from_secs(1)).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    let ack2 = expect_bound(&mut new, &s.id).await;
    assert_ne!(
        ack2["providerId"], ack["providerId"],
        "a fresh hello: new identity"
    );
}

#[tokio::test]
async fn without_a_valid_token_a_held_identity_gets_duplicate_instance() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _holder = bind(&gw, "p", &s.id, json!({})).await;
    let (mut c, _) = authed(&gw).await;
    hello_refused(&mut c, hello("p", &s.id, json!({})), "DUPLICATE_INSTANCE").await;
    hello_refused(
        &mut c,
        hello("p", &s.id, json!({"reconnectToken": "rtk-forged"})),
        "DUPLICATE_INSTANCE",
    )
    .await;
}

#[tokio::test]
async fn the_restored_binding_takes_tools_and_hooks_from_the_new_hello() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (old, ack) = bind(
        &gw,
        "p",
        &s.id,
        json!({"tools": [tool("old_tool")],
               "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    disconnected(&host, old, "p").await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"], "tools": [tool("new_tool")],
               "hooks": {"onPreToolUse": [{"match": {"tool": "edit"}, "action": "deny"}]}}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["new_tool"]);
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    assert_eq!(
        precheck(&host, &s.id, "edit", json!({})).await.decision,
        PrecheckDecision::Deny
    );
}

#[tokio::test]
async fn a_rebind_issues_a_new_token_and_voids_the_old_one() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, ack1) = bind(&gw, "p", &s.id, json!({})).await;
    p.send(hello("p", &s.id, json!({}))).await;
    let ack2 = expect_bound(&mut p, &s.id).await;
    assert_ne!(ack2["reconnectToken"], ack1["reconnectToken"]);
    disconnected(&host, p, "p").await;
    let (mut c, _) = authed(&gw).await;
    c.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack1["reconnectToken"]}),
    ))
    .await;
    let fresh = expect_bound(&mut c, &s.id).await;
    assert_ne!(
        fresh["providerId"], ack1["providerId"],
        "the old token no longer restores"
    );
}

/// Binds "p" with tool `t` and a rule denying `shell`, then disconnects it; returns the
/// old `hello.ack`.
async fn bound_then_gone(gw: &TestGateway, host: &HostClient, session: &str) -> Value {
    let (old, ack) = bind(
        gw,
        "p",
        session,
        json!({"tools": [tool("t")],
               "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    disconnected(host, old, "p").await;
    ack
}

async fn shell_decision(host: &HostClient, session: &str) -> PrecheckDecision {
    precheck(host, session, "shell", json!({})).await.decision
}

#[tokio::test]
async fn a_reconnect_that_omits_tools_and_hooks_gets_the_old_ones_back() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let ack = bound_then_gone(&gw, &host, &s.id).await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    let (mut new, _) = authed(&gw).await;
    new.send(json!({"type": "hello", "name": "p", "protocolVersion": 2,
                    "reconnectToken": ack["reconnectToken"]}))
        .await;
    expect_bound(&mut new, &s.id).await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["t"], "in status");
    assert_eq!(shell_decision(&host, &s.id).await, PrecheckDecision::Deny);
    let r = call_and_answer(&host, &mut new, &s.id, "t", json!("back")).await;
    assert_eq!(r.data, Some(json!("back")), "routed to the new connection");
}

#[tokio::test]
async fn a_reconnect_restores_the_declaration_as_updated_not_as_first_sent() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "p", &s.id, json!({"tools": [tool("a")]})).await;
    old.send(json!({"type": "tools.update", "requestId": "r1", "tools": [tool("b")]}))
        .await;
    old.expect("ack").await;
    disconnected(&host, old, "p").await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["b"]);
}

#[tokio::test]
async fn a_takeover_of_an_open_connection_keeps_its_tools_when_omitted() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "p", &s.id, json!({"tools": [tool("t")]})).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    old.expect_closed().await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["t"]);
}

#[tokio::test]
async fn an_empty_list_on_reconnect_clears_the_restored_tools_and_rules() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let ack = bound_then_gone(&gw, &host, &s.id).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"], "tools": [],
               "hooks": {"onPreToolUse": []}}),
    ))
    .await;
    expect_bound(&mut new, &s.id).await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    assert_eq!(shell_decision(&host, &s.id).await, PrecheckDecision::Allow);
}

#[tokio::test]
async fn a_hello_without_the_token_restores_nothing() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    bound_then_gone(&gw, &host, &s.id).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut new, &s.id).await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    assert_eq!(shell_decision(&host, &s.id).await, PrecheckDecision::Allow);
}

#[tokio::test(start_paused = true)]
async fn after_the_token_expired_nothing_is_restored() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let ack = bound_then_gone(&gw, &host, &s.id).await;
    tokio::time::sleep(RECONNECT_TOKEN_TTL + Duration::from_secs(1)).await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "p",
        &s.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    let fresh = expect_bound(&mut new, &s.id).await;
    assert_ne!(fresh["providerId"], ack["providerId"]);
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    assert_eq!(shell_decision(&host, &s.id).await, PrecheckDecision::Allow);
}

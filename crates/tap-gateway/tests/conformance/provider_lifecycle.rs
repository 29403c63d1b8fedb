//! Spec sections "Quickstart: build a provider in 5 minutes" and "Provider lifecycle" (the
//! diagram): connect → auth → sessions → hello → hello.ack → tools and hook rules
//! registered → tool.call / tool.result, pushes routed, tools.update re-registered →
//! disconnect removes tools and hook rules. Session ending is in multi_session.rs.

use crate::common::*;

#[tokio::test]
async fn the_quickstart_happy_path_works_frame_for_frame() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    // 1-3: connect, auth with the token, receive sessions.
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let sessions = p.expect("sessions").await;
    // 4-5: register with the first session, receive hello.ack.
    p.send(json!({"type": "hello", "name": "my-provider", "protocolVersion": 2,
                  "session": sessions["active"][0]["id"],
                  "tools": [{"name": "greet", "description": "Say hello",
                             "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                                            "required": ["name"]}}]}))
        .await;
    let ack = p.expect("hello.ack").await;
    assert!(ack["providerId"].is_string());
    p.expect("session.lifecycle").await;
    // 6-7: handle tool.call, respond with tool.result.
    let rx = invoke(&host, &s.id, "greet", json!({"name": "Ada"}));
    let call = p.expect("tool.call").await;
    assert_eq!(call["args"]["name"], "Ada");
    p.send(json!({"type": "tool.result", "id": call["id"], "data": format!("Hello, {}!", call["args"]["name"].as_str().unwrap())}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("Hello, Ada!")));
    // 8: on cancel, respond CANCELLED.
    let (call_id, rx) = host
        .start_invoke(&s.id, "greet", json!({"name": "Bo"}))
        .unwrap();
    let call = p.expect("tool.call").await;
    host.cancel(&call_id).unwrap();
    let cancel = p.expect("tool.cancel").await;
    p.send(json!({"type": "tool.result", "id": cancel["id"], "error": "Cancelled", "errorCode": "CANCELLED"}))
        .await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
    fence(&mut p).await;
}

#[tokio::test]
async fn after_hello_ack_the_tools_and_hook_rules_are_registered_in_the_session() {
    let gw = TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await;
    let (mut host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(
        &gw,
        "p",
        &s.id,
        json!({"tools": [tool("t")],
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    let t = tools_published(&mut host, &s.id, &["t"]).await;
    assert_eq!(
        (t.tools[0].provider.as_str(), &t.tools[0].provider_id),
        ("p", &ack["providerId"].as_str().unwrap().to_string())
    );
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
}

#[tokio::test]
async fn a_push_is_routed_to_the_session() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "push", "level": "surface", "event": "hello"}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(
        (d.session_id.as_str(), d.provider.as_str(), d.event.as_str()),
        (s.id.as_str(), "p", "hello")
    );
}

#[tokio::test]
async fn a_crash_removes_the_providers_tools_and_hook_rules() {
    let gw = TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await;
    let (mut host, s) = gw.host_with_session().await;
    let (p, _) = bind(
        &gw,
        "p",
        &s.id,
        json!({"tools": [tool("t")],
        "hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    tools_published(&mut host, &s.id, &["t"]).await;
    drop(p); // no goodbye
    tools_published(&mut host, &s.id, &[]).await;
    assert_eq!(
        precheck(&host, &s.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
    assert_eq!(
        code(&invoke_unanswered(&host, &s.id, "t").await),
        Some("NOT_FOUND")
    );
}

//! Spec section "Session binding": the table (external providers pick a session, decisions
//! 1 and 6b; the internal and in-process rows need the in-process transport, and spawned
//! project providers are in project_providers.rs) and "What bound to a session means" —
//! tools, pushes, hook rules and transforms reach the bound session only. The "all" row is
//! in all_binding.rs.

use crate::common::*;

#[tokio::test]
async fn a_token_provider_picks_its_session_from_the_list() {
    let gw = TestGateway::start().await;
    let (host, _s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let (mut p, sessions) = authed(&gw).await;
    let pick = session_ids(&sessions).pop().unwrap();
    assert_eq!(pick, s2.id);
    p.send(hello("p", &pick, json!({}))).await;
    expect_bound(&mut p, &s2.id).await;
}

#[tokio::test]
async fn a_paired_provider_binds_to_its_paired_session() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, sessions, _) = paired(&gw).await;
    assert_eq!(session_ids(&sessions), vec![s.id.clone()]);
    p.send(hello("ext", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn tools_are_registered_only_in_the_bound_session() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([tool("t")])).await;
    assert_eq!(session_tool_names(&host, &s1.id).await, ["t"]);
    assert!(session_tool_names(&host, &s2.id).await.is_empty());
    assert_eq!(
        code(&invoke_unanswered(&host, &s2.id, "t").await),
        Some("NOT_FOUND")
    );
    fence(&mut p).await;
}

#[tokio::test]
async fn pushes_reach_the_bound_session_only() {
    let gw = TestGateway::start().await;
    let (mut host1, s1) = gw.host_with_session().await;
    let mut host2 = gw.host().await;
    let s2 = second_session(&host2, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([])).await;
    p.send(json!({"type": "push", "stream": "s", "level": "surface", "event": "for s1"}))
        .await;
    let d = next_delivery(&mut host1).await;
    assert_eq!(
        (d.session_id.as_str(), d.event.as_str()),
        (s1.id.as_str(), "for s1")
    );
    assert!(stored(&host2, &s2.id, "s@p").await.is_empty());
    while let Ok(Some(e)) =
        tokio::time::timeout(Duration::from_millis(50), host2.next_event()).await
    {
        assert!(!matches!(e, HostEvent::Delivery(_)), "{e:?}");
    }
}

#[tokio::test]
async fn hook_rules_apply_to_the_bound_session_only() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let _p = bind(
        &gw,
        "p",
        &s1.id,
        json!({"hooks": {"onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny"}]}}),
    )
    .await;
    assert_eq!(
        precheck(&host, &s1.id, "shell", json!({})).await.decision,
        PrecheckDecision::Deny
    );
    assert_eq!(
        precheck(&host, &s2.id, "shell", json!({})).await.decision,
        PrecheckDecision::Allow
    );
}

#[tokio::test]
async fn transforms_and_context_apply_to_the_bound_session_only() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let _p = bind(&gw, "p", &s1.id,
                  json!({"context": "ctx", "hooks": {"transforms": {"x": {"action": "append", "content": "p"}}}})).await;
    let a1 = apply(&host, &s1.id, &[("x", "0")]).await;
    assert_eq!(
        (a1.sections["x"].as_str(), a1.context.clone()),
        ("0\np", vec!["ctx".to_string()])
    );
    let a2 = apply(&host, &s2.id, &[("x", "0")]).await;
    assert_eq!((a2.sections["x"].as_str(), a2.context.len()), ("0", 0));
}

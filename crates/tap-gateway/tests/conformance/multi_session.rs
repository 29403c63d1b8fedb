//! Spec section "Multi-session model": the session registry, "What happens when sessions
//! come and go" (one test per row that applies to a standalone gateway) and "Provider
//! perspective". Spec decisions 25, 26, 32. Rows about spawned project providers are in
//! project_providers.rs, the "all" cell in all_binding.rs. "All sessions end → gateway
//! shuts down" does not apply: this gateway is its own long-running process (`tap
//! gateway`, the desktop app), not an extension inside a session.

use crate::common::*;

#[tokio::test]
async fn the_registry_lists_id_label_cwd_and_foreground() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let s = host
        .register_session(SessionRegister {
            session_id: Some("abc".into()),
            label: Some("PR #42 review".into()),
            cwd: Some("/code/foo".into()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let (_p, sessions) = authed(&gw).await;
    assert_eq!(
        sessions["active"],
        json!([{"id": s.id, "label": "PR #42 review", "cwd": "/code/foo", "foreground": true}])
    );
}

#[tokio::test]
async fn a_new_session_is_added_and_every_provider_gets_sessions_updated() {
    let gw = TestGateway::start().await;
    let (host, s0) = gw.host_with_session().await;
    let mut bound_p = bound(&gw, "bound", &s0.id, json!([])).await;
    let (mut waiting, _) = authed(&gw).await;
    let (mut unbound_p, _) = authed(&gw).await;
    unbound_p.send(hello("u", &s0.id, json!({}))).await;
    expect_bound(&mut unbound_p, &s0.id).await;
    hello_refused(
        &mut unbound_p,
        hello("u", "nope", json!({})),
        "INVALID_SESSION",
    )
    .await;
    let s1 = second_session(&host, "feature/auth").await;
    for p in [&mut bound_p, &mut waiting, &mut unbound_p] {
        let updated = p.expect("sessions.updated").await;
        assert_eq!(session_ids(&updated), vec![s0.id.clone(), s1.id.clone()]);
        assert_eq!(updated["active"][1]["label"], "feature/auth");
    }
}

#[tokio::test]
async fn an_ending_session_is_removed_and_every_provider_gets_sessions_updated() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "other").await;
    let mut in_it = bound(&gw, "in", &s.id, json!([])).await;
    let mut elsewhere = bound(&gw, "elsewhere", &other.id, json!([])).await;
    let (mut waiting, _) = authed(&gw).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut in_it, &s.id).await;
    for p in [&mut elsewhere, &mut waiting] {
        let updated = p.expect("sessions.updated").await;
        assert_eq!(session_ids(&updated), vec![other.id.clone()]);
    }
    in_it
        .send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
    let (_late, sessions) = authed(&gw).await;
    assert_eq!(session_ids(&sessions), vec![other.id.clone()]);
}

#[tokio::test]
async fn bound_providers_of_an_ending_session_get_shutdown_pending_with_the_deadline() {
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = Duration::from_secs(42)).await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    let pending = expect_shutdown(&mut p, &s.id).await;
    assert_eq!(pending["deadline"], 42_000);
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
}

#[tokio::test]
async fn teardown_waits_for_shutdown_ready_from_every_bound_provider() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = bound(&gw, "a", &s.id, json!([])).await;
    let mut b = bound(&gw, "b", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut a, &s.id).await;
    expect_shutdown(&mut b, &s.id).await;
    a.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    fence(&mut a).await;
    host.status().await.unwrap();
    assert!(!end.is_finished(), "b has not answered yet");
    b.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
}

#[tokio::test(start_paused = true)]
async fn teardown_happens_at_the_deadline_without_shutdown_ready() {
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = Duration::from_secs(5)).await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "silent", &s.id, json!([tool("t")])).await;
    let host = Arc::new(host);
    let started = tokio::time::Instant::now();
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    let e = ended(end).await;
    assert!(
        started.elapsed() >= Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.session_id, s.id);
    p.send(json!({"type": "push", "level": "keep", "event": "anyone?"}))
        .await;
    p.expect_error("INVALID_SESSION").await;
}

#[tokio::test]
async fn other_sessions_keep_working_when_one_ends() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "other").await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let mut q = bound(&gw, "q", &other.id, json!([tool("t")])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "goodbye"})).await;
    ended(end).await;
    q.expect("sessions.updated").await;
    let r = call_and_answer(&host, &mut q, &other.id, "t", json!("alive")).await;
    assert_eq!(r.data, Some(json!("alive")));
    bound(&gw, "newcomer", &other.id, json!([])).await;
}

#[tokio::test]
async fn a_provider_whose_session_ended_stays_connected_without_its_tools_and_can_rebind() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let other = second_session(&host, "other").await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
    let status = host.status().await.unwrap();
    let me = status
        .providers
        .iter()
        .find(|x| x.name.as_deref() == Some("p"))
        .unwrap();
    assert_eq!(
        (me.state.as_str(), me.session.as_deref()),
        ("unbound", None)
    );
    p.send(hello("p", &other.id, json!({"tools": [tool("t")]})))
        .await;
    expect_bound(&mut p, &other.id).await;
    let r = call_and_answer(&host, &mut p, &other.id, "t", json!("rebound")).await;
    assert_eq!(r.data, Some(json!("rebound")));
}

#[tokio::test]
async fn an_ending_session_is_not_offered_for_binding() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    let (mut late, sessions) = authed(&gw).await;
    assert!(session_ids(&sessions).is_empty(), "{sessions}");
    hello_refused(
        &mut late,
        hello("late", &s.id, json!({})),
        "INVALID_SESSION",
    )
    .await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
}

#[tokio::test]
async fn a_provider_sees_sessions_on_connect_and_sessions_updated_when_they_change() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, sessions) = authed(&gw).await;
    assert_eq!(sessions["active"], json!([]));
    let s = second_session(&host, "one").await;
    let updated = p.expect("sessions.updated").await;
    assert_eq!(
        updated,
        json!({"type": "sessions.updated",
               "active": [{"id": s.id, "label": "one", "cwd": "/work/one", "foreground": false}]})
    );
}

#[tokio::test]
async fn a_goodbye_after_shutdown_pending_releases_the_provider() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "core", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "goodbye", "reason": "session ending"}))
        .await;
    assert!(p.expect_closed().await.is_empty());
    assert_eq!(ended(end).await.reason, "ended by its host");
}

#[tokio::test]
async fn teardown_cancels_calls_still_running_in_the_session() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("slow")])).await;
    let host = Arc::new(host);
    let rx = invoke(&host, &s.id, "slow", json!({}));
    let call = p.expect("tool.call").await;
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(
        cancel,
        json!({"type": "tool.cancel", "id": call["id"], "sessionId": s.id, "reason": "session ended"})
    );
    assert_eq!(code(&result_of(rx).await), Some("CANCELLED"));
    ended(end).await;
}

#[tokio::test(start_paused = true)]
async fn a_session_whose_host_does_not_come_back_ends_like_any_other() {
    let gw = TestGateway::start_with(|c| {
        c.host_resume_grace = Duration::from_secs(5);
        c.shutdown_deadline = Duration::from_secs(1);
    })
    .await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    drop(host);
    let pending = expect_shutdown(&mut p, &s.id).await;
    assert_eq!(pending["deadline"], 1000);
}

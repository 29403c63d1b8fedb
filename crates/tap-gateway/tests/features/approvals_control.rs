//! Approvals over the real control plane (issue 39): the events a prompt is built from,
//! the methods that answer, and who cannot answer: a web page on another origin (refused
//! before any WebSocket, as for pairing approvals) and a connection without the token.

use serde_json::json;
use tap_testkit::*;
use tokio_tungstenite::tungstenite;

fn destructive(name: &str) -> serde_json::Value {
    let mut t = tool(name);
    t["annotations"] = json!({"destructiveHint": true});
    t
}

#[tokio::test]
async fn the_control_plane_sees_waiting_calls_and_only_it_answers_them() {
    let gw = TestGateway::start().await;
    let token = gw.handle.gateway().control_token().to_string();
    let mut panel = Control::open(&gw, None).await.unwrap();
    panel.ok("auth", json!({"token": token})).await;
    let (host, info) = gw.host_with_session().await;
    let mut p = gw
        .bound("files", &info.id, json!([destructive("rm")]))
        .await;
    let rx = invoke(&host, &info.id, "rm", json!({"path": "/tmp/x"}));
    let waiting = panel.event_of("approval.waiting").await;
    let call = &waiting["call"];
    assert_eq!(call["tool"], "rm", "{waiting}");
    assert_eq!(call["provider"], "files");
    assert_eq!(call["sessionId"], info.id.as_str());
    assert_eq!(call["client"], "test-host");
    assert_eq!(call["args"], json!({"path": "/tmp/x"}));
    assert_eq!(call["annotations"]["destructiveHint"], true);
    let id = call["id"].as_str().unwrap().to_string();
    let list = panel.ok("approvals.list", json!({})).await;
    assert_eq!(list["waiting"][0]["id"], id.as_str(), "{list}");

    // A page on another origin never gets a WebSocket.
    let port = gw.handle.gateway().address().port();
    for origin in [
        "http://evil.example".to_string(),
        format!("http://127.0.0.1:{}", port + 1),
    ] {
        match Control::open(&gw, Some(&origin)).await {
            Err(tungstenite::Error::Http(resp)) => assert_eq!(resp.status().as_u16(), 403),
            other => panic!("{origin}: expected 403, got {:?}", other.map(|_| ())),
        }
    }
    // Without the token, answering is refused and the connection closed.
    let mut stranger = Control::open(&gw, None).await.unwrap();
    stranger
        .send(
            json!({"type": "request", "id": "x1", "method": "approvals.approve",
                     "params": {"id": id, "for": "always"}}),
        )
        .await;
    let seen = stranger.closed().await;
    assert_eq!(seen[0]["error"]["code"], "AUTH_FAILED", "{seen:?}");
    // The call still waits.
    let list = panel.ok("approvals.list", json!({})).await;
    assert_eq!(list["waiting"].as_array().unwrap().len(), 1, "{list}");

    let answered = panel
        .ok("approvals.approve", json!({"id": id, "for": "session"}))
        .await;
    let grant = answered["grant"]["id"].as_str().unwrap().to_string();
    let resolved = panel.event_of("approval.resolved").await;
    assert_eq!(resolved["id"], id.as_str());
    assert_eq!(resolved["outcome"], "approved");
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("ran")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("ran")));
    let grants = panel.ok("approvals.grants", json!({})).await;
    assert_eq!(grants["grants"][0]["id"], grant.as_str(), "{grants}");
    let e = panel
        .err("approvals.approve", json!({"id": id}), "NOT_FOUND")
        .await;
    assert!(e["message"].as_str().unwrap().contains("answered"), "{e}");
    panel.ok("approvals.revoke", json!({"grant": grant})).await;
    let set = panel
        .ok(
            "policy.set",
            json!({"rule": {"id": "r", "match": {"tool": "rm"}, "action": "deny"}}),
        )
        .await;
    assert_eq!(set["rules"][0]["id"], "r", "{set}");
    let r = result_of(invoke(&host, &info.id, "rm", json!({}))).await;
    assert_eq!(code(&r), Some("DENIED"));
    panel.ok("policy.remove", json!({"id": "r"})).await;
    panel
        .err(
            "policy.set",
            json!({"rule": {"id": "", "action": "ask"}}),
            "INVALID_JSON",
        )
        .await;
}

/// A real MCP client (PyPI `mcp`) that asked for progress hears, while its call waits,
/// how the user answers it; the approval lets the call through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_clients_waiting_call_reports_how_to_answer_in_its_progress() {
    use crate::mcp::{client, session_id, text_of, wait_listed};
    let gw = TestGateway::start().await;
    let mut c = client(&gw, "work", "legacy").await;
    let session = session_id(&gw, "work").await;
    let mut p = gw
        .bound("files", &session, json!([destructive("rm")]))
        .await;
    wait_listed(&mut c, "rm").await;
    c.start_call("r", "rm", json!({}), true).await;
    let progress = c.expect("progress").await;
    let message = progress["message"].as_str().unwrap().to_string();
    let list = gw.handle.gateway().approvals_list();
    let id = &list.waiting[0].id;
    assert!(
        message.contains(&format!("tap approvals approve {id}")),
        "{message}"
    );
    gw.handle
        .gateway()
        .approvals_approve(&tap_protocol::approvals::ApprovalApprove {
            id: id.clone(),
            scope: tap_protocol::approvals::AnswerScope::Call,
            minutes: None,
            args_pattern: vec![],
        })
        .unwrap();
    let call = p.expect_next("tool.call").await;
    answer(&mut p, &call, json!("removed")).await;
    assert_eq!(text_of(&c.outcome("r").await), "removed");
}

/// `MAX_WAITING_APPROVALS` (256): an agent looping on an asked tool cannot pile up waiting
/// calls; the next one is denied at once, saying why, and never reaches the provider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_waiting_limit_a_call_is_denied_at_once() {
    const MAX_WAITING_APPROVALS: usize = 256;
    let gw = TestGateway::start().await;
    let mut events = gw.handle.gateway().subscribe();
    let (host, info) = gw.host_with_session().await;
    let mut p = gw
        .bound("files", &info.id, json!([destructive("rm")]))
        .await;
    let mut pending = Vec::new();
    for _ in 0..MAX_WAITING_APPROVALS {
        pending.push(invoke(&host, &info.id, "rm", json!({})));
    }
    let mut seen = 0;
    while seen < MAX_WAITING_APPROVALS {
        let e = tokio::time::timeout(PATIENCE, events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(e, tap_gateway::GatewayEvent::ApprovalWaiting(_)) {
            seen += 1;
        }
    }
    let r = result_of(invoke(&host, &info.id, "rm", json!({}))).await;
    assert_eq!(code(&r), Some("DENIED"));
    assert!(
        r.error
            .as_deref()
            .unwrap()
            .contains("256 calls already wait"),
        "{r:?}"
    );
    assert_eq!(
        gw.handle.gateway().approvals_list().waiting.len(),
        MAX_WAITING_APPROVALS
    );
    fence(&mut p).await;
}

/// Rules on who asks: `match.client` (a session host's name) and `match.profile`, as hook
/// rules compare them; a rule for another client leaves the call to the defaults.
#[tokio::test]
async fn client_and_profile_rules_apply_to_those_sessions_only() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway();
    let (host, info) = gw.host_with_session().await; // hostName "test-host", no profile
    let mut p = gw.bound("files", &info.id, json!([tool("read")])).await;
    for (id, m) in [
        ("cursor-deny", json!({"tool": "read", "client": "cursor"})),
        ("web-deny", json!({"tool": "read", "profile": "web"})),
    ] {
        g.policy_set(
            serde_json::from_value(json!({"id": id, "match": m, "action": "deny"})).unwrap(),
        )
        .unwrap();
    }
    let rx = invoke(&host, &info.id, "read", json!({}));
    let c = p.expect("tool.call").await;
    answer(&mut p, &c, json!("read")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("read")));
    g.policy_set(
        serde_json::from_value(
            json!({"id": "mine", "match": {"tool": "read", "client": "test-host"}, "action": "deny"}),
        )
        .unwrap(),
    )
    .unwrap();
    let r = result_of(invoke(&host, &info.id, "read", json!({}))).await;
    assert_eq!(code(&r), Some("DENIED"));
    assert!(r.error.unwrap().contains("rule 'mine'"));
    fence(&mut p).await;
}

/// A caller that cancels its waiting call ends the wait (`gone`): the call ends
/// `CANCELLED`, a later answer finds nothing, and the provider never sees it.
#[tokio::test]
async fn a_call_cancelled_while_waiting_has_that_one_outcome() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway();
    let mut events = g.subscribe();
    let (host, info) = gw.host_with_session().await;
    let mut p = gw
        .bound("files", &info.id, json!([destructive("rm")]))
        .await;
    let (call_id, rx) = host.start_invoke(&info.id, "rm", json!({})).unwrap();
    let id = loop {
        let e = tokio::time::timeout(PATIENCE, events.recv())
            .await
            .unwrap()
            .unwrap();
        if let tap_gateway::GatewayEvent::ApprovalWaiting(c) = e {
            break c.id;
        }
    };
    host.cancel(&call_id).unwrap();
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("CANCELLED"), "{r:?}");
    let outcome = loop {
        let e = tokio::time::timeout(PATIENCE, events.recv())
            .await
            .unwrap()
            .unwrap();
        if let tap_gateway::GatewayEvent::ApprovalResolved { id: done, outcome } = e {
            assert_eq!(done, id);
            break outcome;
        }
    };
    assert_eq!(outcome, tap_protocol::approvals::ApprovalOutcome::Gone);
    let e = g
        .approvals_deny(&tap_protocol::approvals::ApprovalDeny {
            id,
            remember: None,
            minutes: None,
        })
        .unwrap_err();
    assert_eq!(e.code.as_str(), "NOT_FOUND");
    assert!(g.approvals_list().waiting.is_empty());
    fence(&mut p).await;
}

/// A grants file that cannot be read is set aside, not trusted and not overwritten in
/// place: the gateway starts without grants (calls are asked again), and an expired
/// `minutes` grant in a good file is dropped at start.
#[tokio::test]
async fn an_unreadable_grants_file_is_set_aside_and_expired_grants_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("grants.json"), "{not json").unwrap();
    let start = |home: std::path::PathBuf| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        tap_gateway::GatewayHandle::start(listener, tap_gateway::GatewayConfig::new(home))
            .await
            .unwrap()
    };
    let handle = start(home.clone()).await;
    assert!(handle.gateway().approvals_grants().grants.is_empty());
    assert_eq!(
        std::fs::read_to_string(home.join("grants.json.unreadable")).unwrap(),
        "{not json"
    );
    handle.stop().await.unwrap();
    let grant = |id: &str, expires: &str| {
        json!({"id": id, "decision": "allow", "scope": "minutes", "tool": "rm",
               "provider": "files", "createdAt": "2026-01-01T00:00:00.000Z", "expiresAt": expires})
    };
    let file = json!({"grants": [grant("g-old", "2000-01-01T00:00:00.000Z"),
                                 grant("g-new", "2999-01-01T00:00:00.000Z")]});
    std::fs::write(home.join("grants.json"), file.to_string()).unwrap();
    let handle = start(home.clone()).await;
    let ids: Vec<String> = handle
        .gateway()
        .approvals_grants()
        .grants
        .into_iter()
        .map(|g| g.id)
        .collect();
    assert_eq!(ids, ["g-new"]);
    handle.stop().await.unwrap();
}

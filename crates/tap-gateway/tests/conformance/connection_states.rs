//! Spec section "Connection states" (Protocol rules) and the Core Profile's "Connection
//! state machine": Connected → AwaitAuth → AwaitPairing (external only) → AwaitHello →
//! Bound → Disconnected, with Rebinding and Unbound. Codes for illegal messages are spec
//! decisions 4 (AwaitAuth), 6 (AwaitPairing), 7 (after auth) and 2 (`session.ready`).

use crate::common::*;

/// One valid message of every provider→gateway type but `auth`, so that the only thing
/// wrong with each is the state it arrives in.
fn every_other_message(session: &str) -> Vec<Value> {
    vec![
        json!({"type": "auth.confirm", "code": "123456"}),
        hello("x", session, json!({})),
        json!({"type": "goodbye"}),
        json!({"type": "session.ready", "sessionId": session}),
        json!({"type": "tool.result", "id": "c-1", "data": 1}),
        json!({"type": "tool.progress", "id": "c-1", "message": "m"}),
        json!({"type": "gate.result", "callId": "g-1", "decision": "allow"}),
        json!({"type": "transform.result", "callId": "t-1", "content": "c"}),
        json!({"type": "push", "level": "keep", "event": "e"}),
        json!({"type": "tools.update", "requestId": "u", "tools": []}),
        json!({"type": "hooks.update", "requestId": "h"}),
        json!({"type": "context.update", "requestId": "c", "context": "x"}),
        json!({"type": "filter.set", "requestId": "f", "stream": "s", "rules": []}),
        json!({"type": "stream.query", "queryId": "q"}),
        json!({"type": "shutdown.ready", "sessionId": session}),
    ]
}

/// The session-scoped messages (spec "Session scope enforcement" list), each valid.
fn session_scoped(session: &str) -> Vec<Value> {
    vec![
        json!({"type": "push", "level": "keep", "event": "e"}),
        json!({"type": "tools.update", "requestId": "u", "tools": [tool("a")]}),
        json!({"type": "hooks.update", "requestId": "h", "onPreToolUse": []}),
        json!({"type": "context.update", "requestId": "c", "context": "x"}),
        json!({"type": "filter.set", "requestId": "f", "stream": "s", "rules": []}),
        json!({"type": "stream.query", "queryId": "q"}),
        json!({"type": "shutdown.ready", "sessionId": session}),
    ]
}

fn answers() -> Vec<Value> {
    vec![
        json!({"type": "tool.result", "id": "c-unknown", "data": 1}),
        json!({"type": "tool.progress", "id": "c-unknown", "message": "m"}),
        json!({"type": "gate.result", "callId": "g-unknown", "decision": "deny"}),
        json!({"type": "transform.result", "callId": "t-unknown", "content": "c"}),
    ]
}

async fn assert_all_invalid_session(p: &mut Provider, msgs: Vec<Value>) {
    for m in msgs {
        p.send(m.clone()).await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["replyTo"], m["type"], "{e}");
        assert!(e.get("sessionId").is_none(), "not bound: {e}");
    }
}

// ---------------------------------------------------------------- AwaitAuth

#[tokio::test]
async fn await_auth_accepts_only_auth() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    for m in every_other_message(&s.id) {
        let mut p = connect(&gw).await;
        p.send(m.clone()).await;
        let e = p.expect_error("AUTH_FAILED").await;
        assert_eq!(e["replyTo"], m["type"], "{e}");
        assert!(p.expect_closed().await.is_empty(), "after {m}");
    }
}

#[tokio::test]
async fn await_auth_moves_to_await_hello_on_auth() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    fence(&mut p).await;
    let status = host.status().await.unwrap();
    assert_eq!(status.providers.len(), 1);
    assert_eq!(status.providers[0].state, "awaitHello");
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
    assert_eq!(host.status().await.unwrap().providers[0].state, "bound");
}

// ---------------------------------------------------------------- AwaitPairing

#[tokio::test]
async fn await_pairing_accepts_only_auth_confirm() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    let mut refused: Vec<Value> = every_other_message(&s.id)
        .into_iter()
        .filter(|m| m["type"] != "auth.confirm" && m["type"] != "goodbye")
        .collect();
    refused.push(json!({"type": "auth", "token": gw.token()}));
    for m in refused {
        p.send(m.clone()).await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], m["type"], "{e}");
    }
    let code = gw.handle.gateway().pairing_list()[0].code.clone().unwrap();
    p.send(json!({"type": "auth.confirm", "code": code})).await;
    assert!(p.expect("sessions").await["token"].is_string());
}

#[tokio::test]
async fn await_pairing_goodbye_withdraws_the_request() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    assert_eq!(gw.handle.gateway().pairing_list().len(), 1);
    p.send(json!({"type": "goodbye"})).await;
    assert!(p.expect_closed().await.is_empty());
    wait_until("the request is withdrawn", || async {
        gw.handle.gateway().pairing_list().is_empty()
    })
    .await;
}

// ---------------------------------------------------------------- AwaitHello

#[tokio::test]
async fn await_hello_refuses_session_scoped_messages_with_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    assert_all_invalid_session(&mut p, session_scoped(&s.id)).await;
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn await_hello_refuses_auth_again_with_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for m in [
        json!({"type": "auth", "token": gw.token()}),
        json!({"type": "auth", "mode": "pair"}),
        json!({"type": "auth.confirm", "code": "123456"}),
    ] {
        p.send(m.clone()).await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], m["type"], "{e}");
    }
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn await_hello_ignores_unmatched_answers() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for a in answers() {
        p.send(a).await;
    }
    fence(&mut p).await;
}

#[tokio::test]
async fn await_hello_goodbye_closes() {
    let gw = TestGateway::start().await;
    let (mut p, _) = authed(&gw).await;
    p.send(json!({"type": "goodbye", "reason": "bye"})).await;
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn await_hello_stays_after_a_failed_hello() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("p", "no-such-session", json!({})),
        "INVALID_SESSION",
    )
    .await;
    assert_eq!(
        host.status().await.unwrap().providers[0].state,
        "awaitHello"
    );
    p.send(hello("p", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

// ---------------------------------------------------------------- Bound

#[tokio::test]
async fn bound_accepts_every_provider_message() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    for a in answers() {
        p.send(a).await;
    }
    p.send(json!({"type": "push", "level": "surface", "event": "e"}))
        .await;
    for (m, id) in [
        (
            json!({"type": "tools.update", "requestId": "u", "tools": [tool("t")]}),
            "u",
        ),
        (
            json!({"type": "hooks.update", "requestId": "h", "onPreToolUse": []}),
            "h",
        ),
        (
            json!({"type": "context.update", "requestId": "c", "context": "x"}),
            "c",
        ),
        (
            json!({"type": "filter.set", "requestId": "f", "stream": "s", "rules": []}),
            "f",
        ),
    ] {
        p.send(m).await;
        assert_eq!(p.expect("ack").await["requestId"], id);
    }
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "q");
    // shutdown.ready with no shutdown pending releases nothing and is not an error.
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    fence(&mut p).await;
    assert_eq!(next_delivery(&mut host).await.event, "e");
    // hello while bound is a rebind.
    p.send(hello("p", &s.id, json!({"tools": [tool("t")]})))
        .await;
    expect_bound(&mut p, &s.id).await;
    p.send(json!({"type": "goodbye"})).await;
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn bound_session_ready_is_unauthorized_for_a_single_session_provider() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "session.ready", "sessionId": s.id}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "session.ready", "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
}

#[tokio::test]
async fn bound_auth_again_is_unauthorized_and_the_binding_stays() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "auth");
    let r = call_and_answer(&host, &mut p, &s.id, "t", json!(1)).await;
    assert_eq!(r.data, Some(json!(1)));
}

// ---------------------------------------------------------------- Rebinding

#[tokio::test]
async fn rebinding_messages_sent_after_the_hello_apply_to_the_new_binding() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([])).await;
    // No waiting for hello.ack: the gateway finishes the rebind before the next frame.
    p.send(hello("p", &s2.id, json!({}))).await;
    p.send(json!({"type": "push", "level": "keep", "event": "after"}))
        .await;
    expect_bound(&mut p, &s2.id).await;
    fence(&mut p).await;
    assert_eq!(stored(&host, &s2.id, "p@p").await, ["after"]);
    assert!(stored(&host, &s1.id, "p@p").await.is_empty());
}

// ---------------------------------------------------------------- Unbound

#[tokio::test]
async fn unbound_after_a_failed_rebind_accepts_only_hello_and_goodbye() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    hello_refused(&mut p, hello("p", "gone", json!({})), "INVALID_SESSION").await;
    assert_eq!(host.status().await.unwrap().providers[0].state, "unbound");
    assert_all_invalid_session(&mut p, session_scoped(&s.id)).await;
    p.send(hello("p", &s.id, json!({"tools": [tool("t")]})))
        .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn unbound_after_session_teardown_accepts_only_hello_and_goodbye() {
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
    assert_all_invalid_session(&mut p, session_scoped(&s.id)).await;
    for a in answers() {
        p.send(a).await;
    }
    fence(&mut p).await;
    p.send(hello("p", &other.id, json!({}))).await;
    expect_bound(&mut p, &other.id).await;
    p.send(json!({"type": "goodbye"})).await;
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn unbound_goodbye_closes() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    hello_refused(&mut p, hello("p", "gone", json!({})), "INVALID_SESSION").await;
    p.send(json!({"type": "goodbye"})).await;
    assert!(p.expect_closed().await.is_empty());
}

// ---------------------------------------------------------------- Disconnected

#[tokio::test]
async fn disconnect_from_bound_removes_the_provider_and_its_tools() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let p = bound(&gw, "gone", &s.id, json!([tool("t")])).await;
    drop(p);
    wait_until("the provider is gone", || async {
        !provider_listed(&host, "gone").await
    })
    .await;
    assert!(session_tool_names(&host, &s.id).await.is_empty());
    assert_eq!(
        code(&invoke_unanswered(&host, &s.id, "t").await),
        Some("NOT_FOUND")
    );
}

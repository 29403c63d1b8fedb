//! Spec section "Gateway crash recovery": providers see their connection drop; session
//! registrations, bindings, reconnect tokens and revision counters are not persisted; the
//! next gateway is a fresh start (new token, new `hello`, sessions register again). A stop
//! stands in for the crash: nothing of this state is written to disk either way.

use crate::common::*;
use tap_gateway::{GatewayConfig, GatewayHandle};

async fn start_in(home: std::path::PathBuf) -> TestGateway {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = GatewayHandle::start(listener, GatewayConfig::new(home))
        .await
        .unwrap();
    TestGateway {
        handle,
        dir: tempfile::tempdir().unwrap(),
    }
}

#[tokio::test]
async fn a_new_gateway_keeps_nothing_of_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let old = start_in(home.clone()).await;
    let (host, s) = old.host_with_session().await;
    let old_token = old.token();
    let (mut p, ack) = bind(&old, "p", &s.id, json!({"tools": [tool("t")]})).await;
    p.send(json!({"type": "context.update", "requestId": "r", "context": "c"}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 1);
    drop(host);
    old.handle.stop().await.unwrap();
    // 1. The provider sees its connection close.
    p.expect_closed().await;

    let new = start_in(home).await;
    // 4. The old gateway token is not valid.
    let mut stale = connect(&new).await;
    stale
        .send(json!({"type": "auth", "token": old_token}))
        .await;
    stale.expect_error("AUTH_FAILED").await;
    // 2. / 5. No sessions survive; they must register again.
    let (mut p, sessions) = authed(&new).await;
    assert!(session_ids(&sessions).is_empty(), "{sessions}");
    let (host, s2) = new.host_with_session().await;
    p.expect("sessions.updated").await;
    // 4. The old reconnectToken restores nothing: a fresh identity and revision.
    p.send(hello(
        "p",
        &s2.id,
        json!({"reconnectToken": ack["reconnectToken"]}),
    ))
    .await;
    let ack2 = expect_bound(&mut p, &s2.id).await;
    assert_ne!(ack2["providerId"], ack["providerId"]);
    p.send(json!({"type": "context.update", "requestId": "r", "context": "c"}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 1);
    assert!(
        session_tool_names(&host, &s2.id).await.is_empty(),
        "tools are re-registered by hello only"
    );
}

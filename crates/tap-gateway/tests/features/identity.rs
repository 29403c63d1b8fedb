//! Provider identity over real sockets: `name` + `instance` uniqueness
//! (`DUPLICATE_INSTANCE`), `reconnectToken` takeover (same providerId, old connection
//! closed, in-flight calls failed `DISCONNECTED`), token expiry, rebind tokens, persistDir.
use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_gateway::{CallError, CallRequest};
use tap_protocol::ErrorCode;

fn hello(name: &str, session: &str, extra: Value) -> Value {
    let mut h = json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session,
                       "tools": [tool("t1")]});
    for (k, v) in extra.as_object().unwrap() {
        h[k] = v.clone();
    }
    h
}

/// Authenticates and sends `hello`; returns the provider and the `hello.ack`.
async fn bind(gw: &TestGateway, name: &str, session: &str, extra: Value) -> (Provider, Value) {
    let (mut p, _) = gw.authed().await;
    p.send(hello(name, session, extra)).await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    (p, ack)
}

fn call(
    gw: &TestGateway,
    session: &str,
    tool: &str,
) -> tokio::task::JoinHandle<Result<Value, CallError>> {
    let gateway = gw.handle.gateway().clone();
    let req = CallRequest {
        session_id: session.to_string(),
        tool: tool.to_string(),
        args: json!({}),
        ..Default::default()
    };
    tokio::spawn(async move { gateway.call_tool(req).await })
}

#[tokio::test]
async fn ack_carries_a_256_bit_reconnect_token_and_a_private_persist_dir() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "my-provider", &s.id, json!({})).await;
    let token = ack["reconnectToken"].as_str().expect("reconnectToken");
    let random = token.split_once('-').map(|(_, r)| r).unwrap_or(token);
    assert_eq!(random.len(), 43, "256 bits, base64url: {token}");
    let dir = ack["persistDir"].as_str().expect("persistDir");
    let expected = gw
        .dir
        .path()
        .join("home")
        .join("providers")
        .join("my-provider");
    assert_eq!(std::path::Path::new(dir), expected);
    assert!(dir.ends_with(std::path::MAIN_SEPARATOR));
    let meta = std::fs::metadata(&expected).unwrap();
    assert!(meta.is_dir());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    }
}

#[tokio::test]
async fn persist_dir_name_cannot_escape_the_providers_directory() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_p, ack) = bind(&gw, "../../evil", &s.id, json!({})).await;
    let dir = std::path::PathBuf::from(ack["persistDir"].as_str().unwrap());
    let providers = gw.dir.path().join("home").join("providers");
    assert_eq!(dir.parent().unwrap(), providers);
    assert_eq!(dir.file_name().unwrap(), "_.._evil");
}

#[tokio::test]
async fn second_connection_with_a_held_identity_gets_duplicate_instance() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut first, ack) = bind(&gw, "dup", &s.id, json!({"instance": "tab-1"})).await;

    let (mut second, _) = gw.authed().await;
    second
        .send(hello(
            "dup",
            &s.id,
            json!({"instance": "tab-1", "tools": [tool("t2")]}),
        ))
        .await;
    let e = second.expect_error("DUPLICATE_INSTANCE").await;
    assert_eq!(e["replyTo"], "hello");
    // A wrong token is no better.
    second
        .send(hello(
            "dup",
            &s.id,
            json!({"instance": "tab-1", "reconnectToken": "rtk-nope", "tools": [tool("t2")]}),
        ))
        .await;
    second.expect_error("DUPLICATE_INSTANCE").await;

    // The first connection is unaffected: still bound, its tool still answers.
    let pending = call(&gw, &s.id, "t1");
    let c = first.expect("tool.call").await;
    first
        .send(json!({"type": "tool.result", "id": c["id"], "data": "still here"}))
        .await;
    assert_eq!(pending.await.unwrap().unwrap(), json!("still here"));
    assert!(ack["providerId"].is_string());

    // Another instance, or the same instance under another name, is a different identity.
    let (_other, _) = bind(
        &gw,
        "dup",
        &s.id,
        json!({"instance": "tab-2", "tools": [tool("t3")]}),
    )
    .await;
    let (_third, _) = bind(
        &gw,
        "dup2",
        &s.id,
        json!({"instance": "tab-1", "tools": [tool("t4")]}),
    )
    .await;
}

#[tokio::test]
async fn absent_instance_is_the_empty_instance() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (_first, _) = bind(&gw, "solo", &s.id, json!({})).await;
    let (mut second, _) = gw.authed().await;
    second
        .send(hello(
            "solo",
            &s.id,
            json!({"instance": "", "tools": [tool("t2")]}),
        ))
        .await;
    second.expect_error("DUPLICATE_INSTANCE").await;
}

#[tokio::test]
async fn reconnect_token_takes_over_closes_the_old_connection_and_keeps_the_provider_id() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "rc", &s.id, json!({"instance": "a"})).await;
    let id = ack["providerId"].clone();
    let token = ack["reconnectToken"].as_str().unwrap().to_string();

    // A call in flight on the old connection fails DISCONNECTED and is not replayed.
    let pending = call(&gw, &s.id, "t1");
    let c = old.expect("tool.call").await;

    let (mut new, _) = gw.authed().await;
    new.send(hello(
        "rc",
        &s.id,
        json!({"instance": "a", "reconnectToken": token,
                                          "tools": [tool("t1"), tool("t9")]}),
    ))
    .await;
    let ack2 = new.expect("hello.ack").await;
    assert_eq!(ack2["providerId"], id, "same providerId after reconnect");
    assert_eq!(ack2["sessionId"], s.id);
    let token2 = ack2["reconnectToken"].as_str().unwrap();
    assert_ne!(token2, token, "a fresh token per hello.ack");
    assert_eq!(new.expect("session.lifecycle").await["state"], "started");

    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.code, ErrorCode::Disconnected);
    old.expect_closed().await;
    // The late result from the old connection changes nothing; the new one has the tools.
    let _ = c;
    let pending = call(&gw, &s.id, "t9");
    let c = new.expect("tool.call").await;
    assert_eq!(c["tool"], "t9");
    new.send(json!({"type": "tool.result", "id": c["id"], "data": 9}))
        .await;
    assert_eq!(pending.await.unwrap().unwrap(), json!(9));

    // Errors on the new connection carry the restored providerId.
    new.send(json!({"type": "stream.query", "streams": ["x"], "last": 1000}))
        .await;
    let e = new.expect("error").await;
    assert_eq!(e["providerId"], id);
}

#[tokio::test]
async fn reconnect_after_disconnect_restores_the_session_when_hello_omits_it() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "back", &s.id, json!({})).await;
    let token = ack["reconnectToken"].as_str().unwrap().to_string();
    drop(old);

    let (mut new, _) = gw.authed().await;
    new.send(
        json!({"type": "hello", "name": "back", "protocolVersion": 2,
                    "reconnectToken": token, "tools": [tool("t1")]}),
    )
    .await;
    let ack2 = new.expect("hello.ack").await;
    assert_eq!(ack2["providerId"], ack["providerId"]);
    assert_eq!(ack2["sessionId"], s.id);
}

#[tokio::test(start_paused = true)]
async fn reconnect_token_expires_30_s_after_disconnect() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (old, ack) = bind(&gw, "late", &s.id, json!({})).await;
    let token = ack["reconnectToken"].as_str().unwrap().to_string();
    drop(old);
    // Wait until the gateway has seen the disconnect: the tool leaves the session.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let r = gw
            .handle
            .gateway()
            .call_tool(CallRequest {
                session_id: s.id.clone(),
                tool: "t1".into(),
                args: json!({}),
                ..Default::default()
            })
            .await;
        if matches!(&r, Err(e) if e.code == ErrorCode::NotFound) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "disconnect not seen"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_secs(31)).await;

    let (mut new, _) = gw.authed().await;
    new.send(hello("late", &s.id, json!({"reconnectToken": token})))
        .await;
    let ack2 = new.expect("hello.ack").await;
    assert_ne!(
        ack2["providerId"], ack["providerId"],
        "expired token: fresh identity"
    );
}

#[tokio::test]
async fn expired_or_wrong_token_after_disconnect_is_a_fresh_hello() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(&gw, "gone", &s.id, json!({})).await;
    old.send(json!({"type": "goodbye"})).await;
    old.expect_closed().await;
    let (mut new, _) = gw.authed().await;
    // The identity may still be held for a moment while the old socket is torn down.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let ack2 = loop {
        new.send(hello("gone", &s.id, json!({"reconnectToken": "rtk-wrong"})))
            .await;
        let v = new.recv().await;
        if v["type"] == "hello.ack" {
            break v;
        }
        assert_eq!(v["code"], "DUPLICATE_INSTANCE", "{v}");
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_ne!(ack2["providerId"], ack["providerId"]);
}

#[tokio::test]
async fn rebind_issues_a_new_token_and_the_old_one_stops_working() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, ack) = bind(&gw, "rb", &s.id, json!({})).await;
    let first = ack["reconnectToken"].as_str().unwrap().to_string();
    p.send(hello("rb", &s.id, json!({}))).await;
    let ack2 = p.expect("hello.ack").await;
    assert_eq!(ack2["providerId"], ack["providerId"]);
    let second = ack2["reconnectToken"].as_str().unwrap().to_string();
    assert_ne!(first, second);

    let (mut other, _) = gw.authed().await;
    other
        .send(hello(
            "rb",
            &s.id,
            json!({"reconnectToken": first, "tools": [tool("x")]}),
        ))
        .await;
    other.expect_error("DUPLICATE_INSTANCE").await;
    other
        .send(hello("rb", &s.id, json!({"reconnectToken": second})))
        .await;
    let ack3 = other.expect("hello.ack").await;
    assert_eq!(ack3["providerId"], ack["providerId"]);
    p.expect_closed().await;
}

#[tokio::test]
async fn paired_providers_get_a_reconnect_token_but_no_persist_dir() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let mut req = gw.url().into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", "https://app.example.test".parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true)
        .await
        .unwrap();
    let mut p = Provider::from_ws(ws);
    p.send(json!({"type": "auth", "mode": "pair", "name": "browser"}))
        .await;
    p.expect("auth.pairing").await;
    let code = g
        .pairing_list()
        .into_iter()
        .find_map(|e| e.code)
        .expect("a pending pairing");
    p.send(json!({"type": "auth.confirm", "code": code})).await;
    p.expect("sessions").await;
    p.send(hello("browser", &s.id, json!({}))).await;
    let ack = p.expect("hello.ack").await;
    assert!(ack["reconnectToken"].is_string(), "{ack}");
    assert!(ack.get("persistDir").is_none(), "{ack}");
    assert!(!gw
        .dir
        .path()
        .join("home")
        .join("providers")
        .join("browser")
        .exists());
}

//! Spec section "Authentication and trust levels" (Protocol rules), with "Trust levels",
//! "Project providers", "External providers (browser, standalone scripts)" and "Identity
//! protection"; spec decisions 1, 4, 5, 6, 6a, 6b, A1 (internal = the in-process transport).

use crate::common::*;
use futures_util::SinkExt;
use tap_gateway::{GatewayConfig, GatewayHandle};
use tap_protocol::limits::{
    AUTH_TIMEOUT, MAX_PENDING_PAIRINGS, MAX_PRE_AUTH_BYTES, PAIRING_CODE_TTL,
};

async fn trust_of(host: &HostClient, provider_id: &str) -> String {
    let status = host.status().await.unwrap();
    status
        .providers
        .iter()
        .find(|p| p.id == provider_id)
        .unwrap_or_else(|| panic!("no provider {provider_id}: {:?}", status.providers))
        .trust
        .clone()
}

// ---------------------------------------------------------------- internal trust

#[tokio::test]
async fn an_internal_provider_needs_no_auth_and_gets_sessions_first() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, sessions) = Internal::connect(&gw).await;
    assert!(sessions.get("token").is_none(), "{sessions}");
    assert_eq!(sessions["active"][0]["cwd"], "/tmp");
    let (ack, _) = p.hello("int", &s.id, json!({})).await;
    assert_eq!(
        trust_of(&host, ack["providerId"].as_str().unwrap()).await,
        "internal"
    );
}

#[tokio::test]
async fn no_socket_token_gives_internal_trust() {
    let gw = TestGateway::start().await;
    let (host, _s) = gw.host_with_session().await;
    // Neither the gateway token nor the host token.
    let (_p, _) = authed(&gw).await;
    let mut h = connect(&gw).await;
    h.send(json!({"type": "auth", "token": gw.handle.gateway().host_token()}))
        .await;
    h.expect_error("AUTH_FAILED").await;
    let trusts: Vec<String> = host
        .status()
        .await
        .unwrap()
        .providers
        .into_iter()
        .map(|p| p.trust)
        .collect();
    assert_eq!(trusts, ["project"]);
}

// ---------------------------------------------------------------- project (token) trust

#[tokio::test]
async fn token_auth_answers_sessions_without_a_token_field_and_gives_project_trust() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let sessions = p.expect("sessions").await;
    assert!(sessions.get("token").is_none(), "{sessions}");
    assert_eq!(session_ids(&sessions), vec![s.id.clone()]);
    p.send(hello("proj", &s.id, json!({}))).await;
    let ack = expect_bound(&mut p, &s.id).await;
    assert_eq!(
        trust_of(&host, ack["providerId"].as_str().unwrap()).await,
        "project"
    );
}

#[tokio::test]
async fn wrong_token_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "token": format!("{}x", gw.token())}))
        .await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "auth", "{e}");
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn auth_without_token_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth"})).await;
    p.expect_error("AUTH_FAILED").await;
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn auth_timeout_closes_after_10s() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    let connected = tokio::time::Instant::now();
    // Just before the deadline the socket is still open and answering. (Waiting here
    // also keeps the test's own receive patience from racing the gateway's deadline.)
    tokio::time::sleep(AUTH_TIMEOUT - Duration::from_millis(1)).await;
    fence(&mut p).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(
        connected.elapsed() >= AUTH_TIMEOUT,
        "closed after {:?}",
        connected.elapsed()
    );
    assert!(e.get("replyTo").is_none(), "{e}");
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn auth_just_before_the_timeout_succeeds_and_the_deadline_is_lifted() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    tokio::time::sleep(AUTH_TIMEOUT - Duration::from_millis(100)).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
    tokio::time::sleep(AUTH_TIMEOUT).await;
    fence(&mut p).await;
}

#[tokio::test]
async fn a_known_message_before_auth_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = connect(&gw).await;
    p.send(hello("early", &s.id, json!({}))).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn garbage_before_auth_is_not_fatal() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send_raw("{not json").await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "no.such.type"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
}

#[tokio::test]
async fn more_than_64_kib_before_auth_closes_the_socket() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    let pad = format!(
        r#"{{"type":"auth","token":"{}","pad":"{}"}}"#,
        gw.token(),
        "x".repeat(MAX_PRE_AUTH_BYTES)
    );
    let _ =
        p.ws.send(tokio_tungstenite::tungstenite::Message::text(pad))
            .await;
    assert!(
        p.expect_closed().await.is_empty(),
        "dropped without an answer"
    );
}

// ---------------------------------------------------------------- project providers (spawned)

// Per-provider tokens issued at spawn time are part of the project-provider work
// (`tap.config.json`); see project_providers.rs.

// ---------------------------------------------------------------- external (paired) trust

#[tokio::test]
async fn pair_mode_answers_auth_pairing_with_only_a_prompt() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let prompt = p.expect("auth.pairing").await;
    let mut keys: Vec<&String> = prompt.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["prompt", "type"], "{prompt}");
    assert!(!prompt["prompt"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn the_pairing_code_is_6_digits_shown_to_the_user_and_never_sent_on_the_socket() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let mut wire = vec![p.expect("auth.pairing").await.to_string()];
    let entries = gw.handle.gateway().pairing_list();
    assert_eq!(entries.len(), 1);
    let code = entries[0].code.clone().expect("the user sees the code");
    assert_eq!(code.len(), 6);
    assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");
    p.send(json!({"type": "auth.confirm", "code": code})).await;
    wire.push(p.expect("sessions").await.to_string());
    p.send(hello("ext", &s.id, json!({}))).await;
    wire.push(p.expect("hello.ack").await.to_string());
    wire.push(p.expect("session.lifecycle").await.to_string());
    for frame in wire {
        assert!(
            !frame.contains(&code),
            "the code crossed the socket: {frame}"
        );
    }
}

#[tokio::test]
async fn the_right_code_answers_sessions_with_a_token_and_gives_external_trust() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, sessions, _) = paired(&gw).await;
    let token = sessions["token"].as_str().expect("an issued token");
    assert!(token.starts_with("ext-"), "{token}");
    assert_eq!(session_ids(&sessions), vec![s.id.clone()]);
    p.send(hello("ext", &s.id, json!({}))).await;
    let ack = expect_bound(&mut p, &s.id).await;
    assert_eq!(
        trust_of(&host, ack["providerId"].as_str().unwrap()).await,
        "external"
    );
}

#[tokio::test]
async fn a_wrong_pairing_code_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    let code = gw.handle.gateway().pairing_list()[0].code.clone().unwrap();
    let wrong = format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000);
    p.send(json!({"type": "auth.confirm", "code": wrong})).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "auth.confirm", "{e}");
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn the_issued_token_reconnects_without_pairing_and_without_a_new_token() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, sessions, _) = paired(&gw).await;
    let token = sessions["token"].as_str().unwrap().to_string();
    p.send(json!({"type": "goodbye"})).await;
    p.expect_closed().await;

    let mut again = connect(&gw).await;
    again.send(json!({"type": "auth", "token": token})).await;
    let sessions = again.expect("sessions").await;
    assert!(sessions.get("token").is_none(), "{sessions}");
    again.send(hello("ext", &s.id, json!({}))).await;
    let ack = expect_bound(&mut again, &s.id).await;
    assert_eq!(
        trust_of(&host, ack["providerId"].as_str().unwrap()).await,
        "external"
    );
}

#[tokio::test]
async fn an_issued_token_is_not_valid_after_a_gateway_restart() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let start = |home: std::path::PathBuf| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        GatewayHandle::start(listener, GatewayConfig::new(home))
            .await
            .unwrap()
    };
    let first = start(home.clone()).await;
    let gw = TestGateway {
        handle: first,
        dir: tempfile::tempdir().unwrap(),
    };
    let (mut p, sessions, _) = paired(&gw).await;
    let token = sessions["token"].as_str().unwrap().to_string();
    p.send(json!({"type": "goodbye"})).await;
    p.expect_closed().await;
    gw.handle.stop().await.unwrap();

    let second = start(home).await;
    let mut p = Provider::connect(&format!("ws://{}", second.gateway().address())).await;
    p.send(json!({"type": "auth", "token": token})).await;
    p.expect_error("AUTH_FAILED").await;
    assert!(p.expect_closed().await.is_empty());
    second.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_pairing_request_outlives_the_auth_timeout_and_expires_after_5_minutes() {
    let gw = TestGateway::start().await;
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    tokio::time::sleep(PAIRING_CODE_TTL - Duration::from_secs(1)).await;
    fence(&mut p).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(e["message"].as_str().unwrap().contains("expired"), "{e}");
    assert!(p.expect_closed().await.is_empty());
}

#[tokio::test]
async fn at_most_10_pairing_requests_wait_at_once() {
    let gw = TestGateway::start().await;
    let mut waiting = Vec::new();
    for _ in 0..MAX_PENDING_PAIRINGS {
        let mut p = connect(&gw).await;
        p.send(json!({"type": "auth", "mode": "pair"})).await;
        p.expect("auth.pairing").await;
        waiting.push(p);
    }
    let mut p = connect(&gw).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "auth", "{e}");
    assert!(p.expect_closed().await.is_empty());
}

// ---------------------------------------------------------------- identity protection

#[tokio::test]
async fn a_second_connection_claiming_a_held_identity_gets_duplicate_instance_and_the_holder_is_unaffected(
) {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut holder, _) = bind(
        &gw,
        "browser",
        &s.id,
        json!({"instance": "tab-1", "tools": [tool("t")]}),
    )
    .await;
    let (mut claimant, _) = authed(&gw).await;
    let e = hello_refused(
        &mut claimant,
        hello("browser", &s.id, json!({"instance": "tab-1"})),
        "DUPLICATE_INSTANCE",
    )
    .await;
    assert!(e["providerId"].is_string(), "{e}");
    let r = call_and_answer(&host, &mut holder, &s.id, "t", json!("holder")).await;
    assert_eq!(r.data, Some(json!("holder")));
}

#[tokio::test]
async fn a_valid_reconnect_token_takes_over_the_identity_and_closes_the_old_connection() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut old, ack) = bind(
        &gw,
        "browser",
        &s.id,
        json!({"instance": "tab-1", "tools": [tool("t")]}),
    )
    .await;
    let (mut new, _) = authed(&gw).await;
    new.send(hello(
        "browser",
        &s.id,
        json!({"instance": "tab-1", "reconnectToken": ack["reconnectToken"], "tools": [tool("t")]}),
    ))
    .await;
    let ack2 = expect_bound(&mut new, &s.id).await;
    assert_eq!(ack2["providerId"], ack["providerId"]);
    old.expect_closed().await;
    let r = call_and_answer(&host, &mut new, &s.id, "t", json!("new")).await;
    assert_eq!(r.data, Some(json!("new")));
}

#[tokio::test]
async fn a_paired_token_is_bound_to_the_name_of_its_first_hello() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _, _) = paired(&gw).await;
    p.send(hello("browser", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
    let e = hello_refused(&mut p, hello("impostor", &s.id, json!({})), "UNAUTHORIZED").await;
    assert!(e["providerId"].is_string(), "{e}");
}

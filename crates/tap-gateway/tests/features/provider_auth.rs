//! Provider authentication (Core Profile "Authentication" and the gateway's pre-auth limits),
//! over real sockets against an in-process gateway.

use tap_testkit::*;

use futures_util::SinkExt;
use serde_json::{json, Value};
use tap_protocol::limits::{AUTH_TIMEOUT, MAX_PRE_AUTH_BYTES};
use tokio_tungstenite::tungstenite::Message;

/// Asserts `e` is a fatal `AUTH_FAILED` answer to `reply_to`, then that the socket closes
/// with nothing else said.
async fn assert_fatal_auth_failed(p: &mut Provider, reply_to: Option<&str>) {
    let e = p.expect_error("AUTH_FAILED").await;
    match reply_to {
        Some(t) => assert_eq!(e["replyTo"], t, "{e}"),
        None => assert!(e.get("replyTo").is_none(), "{e}"),
    }
    assert!(
        e.get("providerId").is_none(),
        "no provider id before auth: {e}"
    );
    let after = p.expect_closed().await;
    assert!(
        after.is_empty(),
        "nothing may follow a fatal error: {after:?}"
    );
}

/// Bytes a client puts on the wire for one unfragmented, masked text frame of `len` bytes.
fn client_frame_len(len: usize) -> usize {
    let ext = match len {
        0..=125 => 0,
        126..=65535 => 2,
        _ => 8,
    };
    2 + ext + 4 + len
}

/// An `auth` frame's text with the gateway token, built by hand so its size is known.
fn auth_text(gw: &TestGateway) -> String {
    format!(r#"{{"type":"auth","token":"{}"}}"#, gw.token())
}

/// An unknown-type frame (answered with a non-fatal error) of exactly `len` bytes.
fn padding_text(len: usize) -> String {
    let head = r#"{"type":"pad","p":""#;
    let tail = r#""}"#;
    let fill = len - head.len() - tail.len();
    let text = format!("{head}{}{tail}", "x".repeat(fill));
    assert_eq!(text.len(), len);
    text
}

/// Sends a padding frame and then `auth`, such that the whole pre-auth traffic is
/// `MAX_PRE_AUTH_BYTES + over` bytes on the wire.
async fn send_padding_then_auth(gw: &TestGateway, p: &mut Provider, over: usize) {
    let auth = auth_text(gw);
    let target = MAX_PRE_AUTH_BYTES + over - client_frame_len(auth.len());
    // A 126..=65535-byte frame has an 8-byte header (2 + 2 length + 4 mask).
    let pad_len = target - 8;
    assert!((126..=65535).contains(&pad_len));
    assert_eq!(
        client_frame_len(pad_len) + client_frame_len(auth.len()),
        MAX_PRE_AUTH_BYTES + over
    );
    p.send_raw(padding_text(pad_len)).await;
    // The gateway may already be closing; a failed write is part of the expected outcome.
    let _ = p.ws.send(Message::text(auth)).await;
}

#[tokio::test]
async fn auth_with_valid_token_lists_active_sessions() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let sessions = p.expect("sessions").await;
    let active = sessions["active"].as_array().expect("active is a list");
    assert_eq!(active.len(), 1, "{sessions}");
    assert_eq!(active[0]["id"], session.id.as_str());
    assert_eq!(active[0]["label"], "test");
    assert_eq!(active[0]["cwd"], "/tmp");
    assert_eq!(active[0]["foreground"], true);
    // Authenticated: the next step, hello, is accepted.
    p.send(json!({"type": "hello", "name": "x", "protocolVersion": 2,
                  "session": session.id, "tools": []}))
        .await;
    p.expect("hello.ack").await;
}

#[tokio::test]
async fn auth_with_no_sessions_lists_none() {
    let gw = TestGateway::start().await;
    let (_, sessions) = gw.authed().await;
    assert_eq!(sessions["active"], json!([]), "{sessions}");
}

#[tokio::test]
async fn auth_with_wrong_token_is_fatal_auth_failed() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    let wrong = format!("{}x", gw.token());
    p.send(json!({"type": "auth", "token": wrong})).await;
    assert_fatal_auth_failed(&mut p, Some("auth")).await;
}

#[tokio::test]
async fn auth_with_host_token_is_fatal_auth_failed() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    let host_token = gw.handle.gateway().host_token().to_string();
    p.send(json!({"type": "auth", "token": host_token})).await;
    assert_fatal_auth_failed(&mut p, Some("auth")).await;
}

#[tokio::test]
async fn auth_without_token_is_fatal_auth_failed() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth"})).await;
    assert_fatal_auth_failed(&mut p, Some("auth")).await;
}

#[tokio::test]
async fn auth_in_pair_mode_starts_pairing() {
    // The whole flow is in tests/pairing.rs.
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let prompt = p.expect("auth.pairing").await;
    assert!(
        prompt["prompt"].as_str().is_some_and(|s| !s.is_empty()),
        "{prompt}"
    );
}

#[tokio::test]
async fn known_non_auth_first_message_is_fatal_auth_failed() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let firsts = [
        json!({"type": "hello", "name": "x", "protocolVersion": 2, "session": session.id}),
        json!({"type": "push", "level": "keep", "event": "e"}),
        json!({"type": "tool.result", "id": "c-1", "data": 1}),
        json!({"type": "goodbye"}),
    ];
    for first in firsts {
        let mut p = gw.provider().await;
        p.send(first.clone()).await;
        assert_fatal_auth_failed(&mut p, first["type"].as_str()).await;
    }
}

#[tokio::test]
async fn invalid_json_before_auth_is_an_error_and_the_connection_stays() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    p.send_raw("{ this is not json").await;
    let e = p.expect_error("INVALID_JSON").await;
    assert!(e.get("replyTo").is_none(), "{e}");
    p.send_raw("[1, 2, 3]").await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
}

#[tokio::test]
async fn unknown_type_before_auth_is_an_error_and_the_connection_stays() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "no.such.type"})).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "no.such.type", "{e}");
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
}

#[tokio::test(start_paused = true)]
async fn no_auth_within_10_seconds_is_fatal_auth_failed() {
    let gw = TestGateway::start().await;
    let connected = tokio::time::Instant::now();
    let mut p = gw.provider().await;
    // Just before the deadline the socket is still open and answering.
    tokio::time::sleep(AUTH_TIMEOUT - std::time::Duration::from_millis(1)).await;
    p.send_raw("not json").await;
    p.expect_error("INVALID_JSON").await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(
        connected.elapsed() >= AUTH_TIMEOUT,
        "closed after {:?}, before the auth timeout",
        connected.elapsed()
    );
    assert!(e.get("replyTo").is_none(), "{e}");
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "{after:?}");
}

#[tokio::test(start_paused = true)]
async fn auth_just_before_the_timeout_still_works() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    tokio::time::sleep(AUTH_TIMEOUT - std::time::Duration::from_millis(500)).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    p.expect("sessions").await;
    // Past the timeout now, and still connected: the deadline is gone once authenticated.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    p.send(json!({"type": "no.such.type"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
}

#[tokio::test]
async fn more_than_64_kib_before_auth_closes_the_socket() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    send_padding_then_auth(&gw, &mut p, 1).await;
    let seen = p.expect_closed().await;
    // The padding frame fits the budget and gets its error; the auth frame does not.
    let kinds: Vec<&Value> = seen.iter().map(|m| &m["type"]).collect();
    assert!(
        seen.iter()
            .all(|m| m["type"] == "error" && m["code"] == "UNKNOWN_TYPE"),
        "only the padding frame's error may arrive, got {kinds:?}"
    );
}

#[tokio::test]
async fn one_oversized_frame_before_auth_closes_the_socket() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    let big = format!(
        r#"{{"type":"auth","token":"{}","pad":"{}"}}"#,
        gw.token(),
        "x".repeat(MAX_PRE_AUTH_BYTES)
    );
    let _ = p.ws.send(Message::text(big)).await;
    let seen = p.expect_closed().await;
    assert!(seen.is_empty(), "{seen:?}");
}

#[tokio::test]
async fn auth_exactly_at_the_pre_auth_budget_still_works() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    send_padding_then_auth(&gw, &mut p, 0).await;
    let e = p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["replyTo"], "pad");
    p.expect("sessions").await;
    // The budget is lifted after auth: a large message is now fine.
    p.send(json!({"type": "no.such.type", "pad": "x".repeat(2 * MAX_PRE_AUTH_BYTES)}))
        .await;
    p.expect_error("UNKNOWN_TYPE").await;
}

#[tokio::test]
async fn auth_below_the_pre_auth_budget_still_works() {
    let gw = TestGateway::start().await;
    let mut p = gw.provider().await;
    // Several non-fatal mistakes first, well within the budget.
    for _ in 0..10 {
        p.send_raw(padding_text(1000)).await;
        p.expect_error("UNKNOWN_TYPE").await;
    }
    p.send_raw(auth_text(&gw)).await;
    p.expect("sessions").await;
}

//! The control plane (`/control`, `docs/control-protocol.md`) over real sockets against an
//! in-process gateway: the Origin gate, token auth and its limits, requests, numbered
//! events, lag and resync, and pairing driven end to end from the control side.

use tap_testkit::*;

use futures_util::SinkExt;
use serde_json::{json, Value};
use tap_client::ControlClient;
use tap_gateway::GatewayEvent;
use tap_protocol::control::ControlEvent;
use tap_protocol::limits::{AUTH_TIMEOUT, MAX_PRE_AUTH_BYTES};
use tokio_tungstenite::tungstenite::{self, Message};

fn control_url(gw: &TestGateway) -> String {
    format!("{}/control", gw.url())
}

fn control_token(gw: &TestGateway) -> String {
    gw.handle.gateway().control_token().to_string()
}

/// Asserts the socket got exactly one `AUTH_FAILED` response (to `id`) and closed.
async fn assert_auth_failed_and_closed(c: &mut Control, id: Option<&str>) {
    let seen = c.closed().await;
    assert_eq!(
        seen.len(),
        1,
        "exactly one frame before the close: {seen:?}"
    );
    let f = &seen[0];
    assert_eq!(f["type"], "response", "{f}");
    assert_eq!(f["error"]["code"], "AUTH_FAILED", "{f}");
    assert_eq!(f["id"], json!(id), "{f}");
}

// ---- the Origin gate -------------------------------------------------------------------

fn http_status(e: tungstenite::Error) -> u16 {
    match e {
        tungstenite::Error::Http(resp) => resp.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_web_page_on_another_origin_gets_403_before_any_websocket() {
    let gw = TestGateway::start().await;
    let port = gw.handle.gateway().address().port();
    for origin in [
        "http://evil.example".to_string(),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        format!("https://127.0.0.1:{port}"),
        "null".to_string(),
    ] {
        let e = Control::open(&gw, Some(&origin))
            .await
            .err()
            .unwrap_or_else(|| {
                panic!("{origin} was upgraded");
            });
        assert_eq!(http_status(e), 403, "{origin}");
    }
}

#[tokio::test]
async fn no_origin_the_panel_origins_and_tauri_are_accepted() {
    let gw = TestGateway::start().await;
    let port = gw.handle.gateway().address().port();
    let panel = format!("http://127.0.0.1:{port}");
    let localhost = format!("http://localhost:{port}");
    for origin in [
        None,
        Some(panel.as_str()),
        Some(localhost.as_str()),
        Some("tauri://localhost"),
        Some("http://tauri.localhost"),
    ] {
        let mut c = Control::open(&gw, origin)
            .await
            .unwrap_or_else(|e| panic!("{origin:?} refused: {e}"));
        let snap = c.ok("auth", json!({"token": control_token(&gw)})).await;
        assert_eq!(snap["seq"], 0, "{origin:?}: {snap}");
    }
}

// ---- authentication --------------------------------------------------------------------

#[tokio::test]
async fn a_wrong_token_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut c = Control::open(&gw, None).await.unwrap();
    // The provider token is a real token, just not this endpoint's.
    c.send(json!({"type": "request", "id": "a1", "method": "auth",
                  "params": {"token": gw.token()}}))
        .await;
    assert_auth_failed_and_closed(&mut c, Some("a1")).await;
}

#[tokio::test]
async fn a_request_before_auth_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut c = Control::open(&gw, None).await.unwrap();
    c.send(json!({"type": "request", "id": "s1", "method": "pairing.list"}))
        .await;
    assert_auth_failed_and_closed(&mut c, Some("s1")).await;
}

#[tokio::test]
async fn garbage_before_auth_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut c = Control::open(&gw, None).await.unwrap();
    c.sock.ws.send(Message::text("not json")).await.unwrap();
    assert_auth_failed_and_closed(&mut c, None).await;

    let mut c = Control::open(&gw, None).await.unwrap();
    c.send(json!({"type": "request", "id": "x", "method": "auth", "params": {}}))
        .await;
    assert_auth_failed_and_closed(&mut c, Some("x")).await;
}

#[tokio::test(start_paused = true)]
async fn no_auth_within_10_seconds_is_auth_failed() {
    let gw = TestGateway::start().await;
    let connected = tokio::time::Instant::now();
    let mut c = Control::open(&gw, None).await.unwrap();
    // (Waiting first keeps the helper's own timeout from racing the gateway's.)
    tokio::time::sleep(AUTH_TIMEOUT - std::time::Duration::from_millis(1)).await;
    assert_auth_failed_and_closed(&mut c, None).await;
    assert!(
        connected.elapsed() >= AUTH_TIMEOUT,
        "closed after {:?}",
        connected.elapsed()
    );
}

#[tokio::test]
async fn a_first_frame_over_the_pre_auth_budget_closes_without_an_answer() {
    let gw = TestGateway::start().await;
    let mut c = Control::open(&gw, None).await.unwrap();
    let pad = "x".repeat(MAX_PRE_AUTH_BYTES);
    // Sending may itself fail once the gateway has closed.
    let _ = c
        .sock
        .ws
        .send(Message::text(
            json!({"type": "request", "id": "big", "method": "auth",
                   "params": {"token": control_token(&gw), "pad": pad}})
            .to_string(),
        ))
        .await;
    let seen = c.closed().await;
    assert!(seen.is_empty(), "{seen:?}");
}

#[tokio::test]
async fn after_auth_frames_past_the_pre_auth_budget_are_fine() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let pad = "x".repeat(MAX_PRE_AUTH_BYTES * 2);
    let r = c.ok("status", json!({ "pad": pad })).await;
    assert!(r["uptimeMs"].is_u64(), "{r}");
}

#[tokio::test]
async fn the_control_token_file_is_0600_and_removed_on_stop() {
    let gw = TestGateway::start().await;
    let path = gw.handle.gateway().files().control_token.clone();
    assert_eq!(path, gw.dir.path().join("home").join("control-token"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.trim(), control_token(&gw));
    assert!(
        text.starts_with("ctk-") && text.trim().len() == 4 + 43,
        "{text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let TestGateway { handle, dir: _dir } = gw;
    handle.stop().await.unwrap();
    assert!(!path.exists(), "control-token survived the stop");
}

// ---- requests --------------------------------------------------------------------------

#[tokio::test]
async fn unknown_methods_bad_params_and_a_second_auth_are_errors_that_keep_the_connection() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let e = c
        .err("pairing.approveEverything", json!({}), "UNKNOWN_TYPE")
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("pairing.approveEverything"),
        "{e}"
    );
    c.err("pairing.deny", json!({"id": 7}), "INVALID_JSON")
        .await;
    c.err("pairing.deny", json!({}), "INVALID_JSON").await;
    c.err("auth", json!({"token": control_token(&gw)}), "UNAUTHORIZED")
        .await;
    // A frame that is not a request at all.
    c.send(json!({"type": "event", "id": "e1"})).await;
    let r = c.response("e1").await;
    assert_eq!(r["error"]["code"], "UNKNOWN_TYPE", "{r}");
    c.sock.ws.send(Message::text("{")).await.unwrap();
    let r = c.recv().await;
    assert_eq!(r["type"], "response", "{r}");
    assert_eq!(r["id"], Value::Null, "{r}");
    assert_eq!(r["error"]["code"], "INVALID_JSON", "{r}");
    // Still usable; params may be omitted and unknown fields are ignored.
    c.send(json!({"type": "request", "id": "late", "method": "pairing.list", "extra": 1}))
        .await;
    let r = c.response("late").await;
    assert_eq!(r["result"], json!({"pairings": []}), "{r}");
}

#[tokio::test]
async fn the_snapshot_shows_sessions_providers_and_pairings() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let _p = gw
        .bound("snap-provider", &session.id, json!([tool("ping")]))
        .await;

    let (mut c, snap) = Control::authed(&gw).await;
    assert_eq!(snap["seq"], 0, "{snap}");
    assert_eq!(snap["pairings"], json!([]), "{snap}");
    let status = &snap["status"];
    assert_eq!(status["address"], gw.url(), "{snap}");
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{snap}");
    assert_eq!(sessions[0]["id"], session.id.as_str());
    assert_eq!(sessions[0]["label"], "test");
    let providers = status["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 1, "{snap}");
    assert_eq!(providers[0]["name"], "snap-provider");
    assert_eq!(providers[0]["state"], "bound");
    assert_eq!(providers[0]["session"], session.id.as_str());
    assert_eq!(providers[0]["tools"], json!(["ping"]));

    // `status` alone is the same shape as the snapshot's status.
    let st = c.ok("status", json!({})).await;
    assert_eq!(st["providers"], status["providers"]);
    assert_eq!(st["sessions"][0]["id"], session.id.as_str());
}

#[tokio::test]
async fn pairing_commands_on_unknown_ids_are_not_found() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    assert_eq!(
        c.ok("pairing.list", json!({})).await,
        json!({"pairings": []})
    );
    for method in ["pairing.deny", "pairing.revoke", "pairing.configure"] {
        let e = c.err(method, json!({"id": "pr-nope"}), "NOT_FOUND").await;
        assert!(
            e["message"].as_str().unwrap().contains("pr-nope"),
            "{method}: {e}"
        );
    }
    assert_eq!(
        c.ok("pairing.denyAll", json!({})).await,
        json!({"denied": 0})
    );
}

// ---- events ----------------------------------------------------------------------------

#[tokio::test]
async fn status_changed_events_are_numbered_from_1_as_sessions_and_providers_come() {
    let gw = TestGateway::start().await;
    let (mut c, snap) = Control::authed(&gw).await;
    assert_eq!(snap["seq"], 0);

    let (_host, session) = gw.host_with_session().await;
    let e = c.event().await;
    assert_eq!(e["seq"], 1, "the first event is seq 1: {e}");
    assert_eq!(e["event"], json!({"kind": "status.changed"}), "{e}");
    let mut last_seq = 1;

    let _p = gw.bound("evt", &session.id, json!([tool("t1")])).await;
    // Wait until status shows the provider bound, checking every event on the way is
    // the next number.
    loop {
        let st = c.ok("status", json!({})).await;
        while let Some(e) = c.events.pop_front() {
            last_seq += 1;
            assert_eq!(e["seq"], last_seq, "events are numbered without gaps: {e}");
            assert_eq!(e["event"]["kind"], "status.changed", "{e}");
        }
        if st["providers"][0]["state"] == "bound" {
            break;
        }
        let e = c.event().await;
        last_seq += 1;
        assert_eq!(e["seq"], last_seq, "{e}");
    }
    assert!(last_seq >= 2, "binding a provider sent status.changed");

    // A snapshot reports the last seq sent, and the numbering goes on after it.
    let snap = c.ok("snapshot", json!({})).await;
    let snap_seq = snap["seq"].as_u64().unwrap();
    assert!(snap_seq >= last_seq, "{snap_seq} < {last_seq}");
    gw.handle.gateway().emit(GatewayEvent::StatusChanged);
    let e = c.event().await;
    assert_eq!(e["seq"], snap_seq + 1, "{e}");
}

#[tokio::test]
async fn a_client_that_falls_behind_gets_resync_and_a_snapshot_starts_it_over() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    // This test's runtime is single-threaded: the connection task cannot run while this
    // loop emits, so its receiver overflows for sure.
    for _ in 0..EVENTS_PAST_ANY_BUFFER {
        gw.handle.gateway().emit(GatewayEvent::StatusChanged);
    }
    let e = c.event().await;
    assert_eq!(e["seq"], 1, "{e}");
    assert_eq!(
        e["event"],
        json!({"kind": "resync", "reason": "lagged"}),
        "{e}"
    );
    // The client refreshes; what was queued before the snapshot is part of it.
    let snap = c.ok("snapshot", json!({})).await;
    let seq = snap["seq"].as_u64().unwrap();
    assert!(c.events.iter().all(|e| e["seq"].as_u64() <= Some(seq)));
    c.events.clear();
    gw.handle.gateway().emit(GatewayEvent::StatusChanged);
    let e = c.event().await;
    assert_eq!(
        e["seq"],
        seq + 1,
        "numbering continues after the snapshot: {e}"
    );
    assert_eq!(e["event"]["kind"], "status.changed");
}

/// Well past the gateway's broadcast buffer (`limits.rs`'s `EVENT_BUFFER`, 1024).
const EVENTS_PAST_ANY_BUFFER: usize = 5000;

#[tokio::test]
async fn gateway_stop_closes_control_connections() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let TestGateway { handle, dir: _dir } = gw;
    handle.stop().await.unwrap();
    c.closed().await;
}

// ---- the tap-client ControlClient ------------------------------------------------------

#[tokio::test]
async fn control_client_connects_requests_and_receives_events() {
    let gw = TestGateway::start().await;
    let (mut client, snap) = ControlClient::connect(&control_url(&gw), &control_token(&gw))
        .await
        .unwrap();
    assert_eq!(snap.seq, 0);
    assert!(snap.status.sessions.is_empty());
    let (_host, session) = gw.host_with_session().await;
    let e = tokio::time::timeout(PATIENCE, client.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(e.seq, 1);
    assert_eq!(e.event, ControlEvent::StatusChanged);
    let st = client.status().await.unwrap();
    assert_eq!(st.sessions[0].id, session.id);
    let err = client.pairing_deny("pr-missing").await.unwrap_err();
    match err {
        tap_client::ControlClientError::Refused(e) => {
            assert_eq!(e.code, tap_protocol::ErrorCode::NotFound)
        }
        other => panic!("{other:?}"),
    }

    let refused = ControlClient::connect(&control_url(&gw), "ctk-wrong").await;
    match refused {
        Err(tap_client::ControlClientError::Refused(e)) => {
            assert_eq!(e.code, tap_protocol::ErrorCode::AuthFailed)
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a wrong token connected"),
    }
}

// ---- pairing, driven from the control plane --------------------------------------------

/// A raw provider that asked to pair; returns it and the `pairing.changed` entry the
/// control client saw.
async fn pairing_request(gw: &TestGateway, c: &mut Control, name: &str) -> (Provider, Value) {
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "mode": "pair", "name": name}))
        .await;
    let prompt = p.expect("auth.pairing").await;
    assert!(prompt["prompt"].is_string(), "{prompt}");
    let entry = loop {
        let e = c.event().await;
        if e["event"]["kind"] == "pairing.changed" && e["event"]["pairing"]["name"] == name {
            break e["event"]["pairing"].clone();
        }
    };
    assert_eq!(entry["state"], "pending", "{entry}");
    (p, entry)
}

#[tokio::test]
async fn a_pairing_request_shows_its_code_on_the_control_plane_and_the_provider_pairs_with_it() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut p, entry) = pairing_request(&gw, &mut c, "browser-tab").await;
    let code = entry["code"].as_str().unwrap().to_string();
    assert_eq!(code.len(), 6, "{entry}");
    assert!(code.bytes().all(|b| b.is_ascii_digit()), "{entry}");
    assert!(
        entry["createdAt"].is_string() && entry["expiresAt"].is_string(),
        "{entry}"
    );
    let id = entry["id"].as_str().unwrap().to_string();

    // The list shows it too, with the code.
    let list = c.ok("pairing.list", json!({})).await;
    let listed = &list["pairings"][0];
    assert_eq!(listed["id"], id.as_str(), "{list}");
    assert_eq!(listed["code"], code.as_str(), "{list}");

    // The user types the code into the provider.
    p.send(json!({"type": "auth.confirm", "code": code})).await;
    let sessions = p.expect("sessions").await;
    assert!(
        sessions["token"].as_str().is_some_and(|t| !t.is_empty()),
        "{sessions}"
    );
    let paired = loop {
        let e = c.event().await;
        if e["event"]["kind"] == "pairing.changed"
            && e["event"]["pairing"]["id"] == id.as_str()
            && e["event"]["pairing"]["state"] == "paired"
        {
            break e["event"]["pairing"].clone();
        }
    };
    assert!(
        paired.get("code").is_none(),
        "no code once paired: {paired}"
    );
    assert_eq!(paired["session"], session.id.as_str(), "{paired}");

    // Configure, then revoke: the provider's connection closes.
    let r = c
        .ok("pairing.configure", json!({"id": id, "remember": false}))
        .await;
    assert_eq!(r["pairing"]["id"], id.as_str(), "{r}");
    c.err("pairing.deny", json!({"id": id}), "UNAUTHORIZED")
        .await;
    c.ok("pairing.revoke", json!({"id": id})).await;
    p.expect_closed().await;
    let removed = loop {
        let e = c.event().await;
        if e["event"]["kind"] == "pairing.removed" {
            break e["event"].clone();
        }
    };
    assert_eq!(removed["id"], id.as_str(), "{removed}");
    assert_eq!(removed["reason"], "revoked", "{removed}");
    assert_eq!(
        c.ok("pairing.list", json!({})).await,
        json!({"pairings": []})
    );
}

#[tokio::test]
async fn deny_and_deny_all_refuse_pending_providers_with_auth_failed() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut p1, e1) = pairing_request(&gw, &mut c, "one").await;
    let id1 = e1["id"].as_str().unwrap().to_string();
    c.ok("pairing.deny", json!({"id": id1})).await;
    p1.expect_error("AUTH_FAILED").await;
    p1.expect_closed().await;
    let removed = loop {
        let e = c.event().await;
        if e["event"]["kind"] == "pairing.removed" {
            break e["event"].clone();
        }
    };
    assert_eq!(
        removed,
        json!({"kind": "pairing.removed", "id": id1, "reason": "denied"})
    );
    c.err("pairing.deny", json!({"id": id1}), "NOT_FOUND").await;

    let (mut p2, _) = pairing_request(&gw, &mut c, "two").await;
    let (mut p3, _) = pairing_request(&gw, &mut c, "three").await;
    assert_eq!(
        c.ok("pairing.denyAll", json!({})).await,
        json!({"denied": 2})
    );
    for p in [&mut p2, &mut p3] {
        p.expect_error("AUTH_FAILED").await;
        p.expect_closed().await;
    }
    let list = c.ok("pairing.list", json!({})).await;
    assert_eq!(list, json!({"pairings": []}));
}

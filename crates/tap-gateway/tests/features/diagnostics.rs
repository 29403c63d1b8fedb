//! Diagnostics over the control plane (`diagnostics`, `diagnostics.follow`,
//! `docs/control-protocol.md`): hostile peers drive the counters, and each test checks
//! the exact code, limit, failure and connection state they produce.

use tap_testkit::*;

use futures_util::SinkExt;
use serde_json::json;
use tap_gateway::GatewayEvent;
use tap_protocol::limits::{
    HARD_FRAME_CAP_BYTES, MAX_MESSAGE_BYTES, MAX_OUTBOUND_QUEUED_BYTES,
    MAX_OUTBOUND_QUEUED_MESSAGES, MAX_PRE_AUTH_BYTES, MAX_PROVIDER_CONNECTIONS,
    MAX_REBINDS_PER_MINUTE,
};
use tokio_tungstenite::tungstenite::{self, Message};

/// The id the gateway gave the only connected provider.
async fn provider_id(c: &mut Control) -> String {
    let st = c.ok("status", json!({})).await;
    st["providers"][0]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_fresh_gateway_has_no_errors_every_limit_at_zero_and_only_this_client() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let d = c.ok("diagnostics", json!({})).await;
    assert_eq!(d["errors"], json!([]), "{d}");
    assert_eq!(d["recentFailures"], json!([]), "{d}");
    assert_eq!(d["failuresKept"], 100, "{d}");
    let limits = d["limits"].as_array().unwrap();
    let ids: Vec<&str> = limits.iter().map(|l| l["id"].as_str().unwrap()).collect();
    for id in [
        "payloadSize",
        "frameCap",
        "preAuthBytes",
        "authTimeout",
        "providerConnections",
        "toolCount",
        "streamCount",
        "rebindRate",
        "pairingAttempts",
        "pushBudget",
        "callQueue",
        "slowConsumer",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(limits
        .iter()
        .all(|l| l["hits"] == 0 && l.get("lastAt").is_none() && l["description"].is_string()));
    let conns = &d["connections"];
    assert_eq!(
        conns["providers"],
        json!({"open": 0, "max": MAX_PROVIDER_CONNECTIONS, "awaitAuth": 0, "awaitPairing": 0,
               "awaitHello": 0, "bound": 0, "unbound": 0,
               "queued": {"bytes": 0, "messages": 0, "peakBytes": 0,
                          "maxBytes": MAX_OUTBOUND_QUEUED_BYTES,
                          "maxMessages": MAX_OUTBOUND_QUEUED_MESSAGES}})
    );
    assert_eq!(conns["controlClients"]["open"], 1, "{conns}");
    assert_eq!(conns["sessionHosts"]["open"], 0, "{conns}");
    assert_eq!(conns["sessions"], 0, "{conns}");
}

#[tokio::test]
async fn garbage_from_a_provider_is_counted_as_invalid_json_and_kept_as_a_failure() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    // Before auth: not fatal, no provider id yet.
    let mut raw = gw.provider().await;
    raw.send_raw("{this is not json").await;
    raw.expect_error("INVALID_JSON").await;
    // After auth: the malformed-result rule answers it, naming the provider.
    let (mut p, _) = gw.authed().await;
    p.send_raw("still not json").await;
    p.expect_error("INVALID_JSON").await;
    let id = loop {
        let st = c.ok("status", json!({})).await;
        if let Some(id) = st["providers"][0]["id"].as_str() {
            break id.to_string();
        }
    };

    let d = diagnostics_until(&mut c, "two INVALID_JSON", |d| {
        errors_of(d, "INVALID_JSON") == 2
    })
    .await;
    assert_eq!(
        d["errors"],
        json!([{"code": "INVALID_JSON", "count": 2}]),
        "{d}"
    );
    let failures = d["recentFailures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{d}");
    // Newest first.
    let newest = &failures[0];
    assert_eq!(newest["code"], "INVALID_JSON", "{newest}");
    assert_eq!(newest["provider"], id.as_str(), "{newest}");
    assert_eq!(newest["replyTo"], "tool.result", "{newest}");
    assert!(newest["message"].as_str().unwrap().len() > 5, "{newest}");
    assert!(newest["at"].as_str().unwrap().ends_with('Z'), "{newest}");
    assert!(newest.get("limit").is_none(), "{newest}");
    let oldest = &failures[1];
    assert_eq!(oldest["code"], "INVALID_JSON", "{oldest}");
    assert!(oldest.get("provider").is_none(), "{oldest}");
    // Garbage trips no limit.
    assert!(d["limits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["hits"] == 0));
}

#[tokio::test]
async fn only_the_newest_100_failures_are_kept_but_every_error_is_counted() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut p, _) = gw.authed().await;
    for i in 0..105 {
        p.send(json!({"type": format!("no.such.type.{i}")})).await;
        p.expect_error("UNKNOWN_TYPE").await;
    }
    let d = diagnostics_until(&mut c, "105 UNKNOWN_TYPE", |d| {
        errors_of(d, "UNKNOWN_TYPE") == 105
    })
    .await;
    let failures = d["recentFailures"].as_array().unwrap();
    assert_eq!(failures.len(), 100);
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .contains("no.such.type.104"),
        "{}",
        failures[0]
    );
    assert!(
        failures[99]["message"]
            .as_str()
            .unwrap()
            .contains("no.such.type.5"),
        "{}",
        failures[99]
    );
}

#[tokio::test]
async fn an_oversized_message_counts_the_payload_size_limit() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let mut p = gw.bound("big", &session.id, json!([])).await;
    let event = "x".repeat(MAX_MESSAGE_BYTES + 10);
    p.send(json!({"type": "push", "event": event, "level": "keep"}))
        .await;
    p.expect_error("PAYLOAD_TOO_LARGE").await;
    let d = diagnostics_until(&mut c, "a payloadSize hit", |d| {
        hits_of(d, "payloadSize") == 1
    })
    .await;
    assert!(limit_of(&d, "payloadSize")["lastAt"].is_string(), "{d}");
    assert_eq!(errors_of(&d, "PAYLOAD_TOO_LARGE"), 1, "{d}");
    assert_eq!(d["recentFailures"][0]["replyTo"], "push", "{d}");
    assert_eq!(
        d["recentFailures"][0]["session"],
        session.id.as_str(),
        "{d}"
    );
    // Nothing else was counted as a limit.
    let others: u64 = d["limits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["id"] != "payloadSize")
        .map(|l| l["hits"].as_u64().unwrap())
        .sum();
    assert_eq!(others, 0, "{d}");
}

#[tokio::test]
async fn a_frame_over_the_hard_cap_closes_the_socket_and_is_a_failure_of_its_own() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut p, _) = gw.authed().await;
    let huge = "x".repeat(HARD_FRAME_CAP_BYTES + 1);
    // The gateway may close while the frame is still being written.
    let _ = p.ws.send(Message::text(huge)).await;
    p.expect_closed().await;
    let d = diagnostics_until(&mut c, "a frameCap hit", |d| hits_of(d, "frameCap") == 1).await;
    let f = &d["recentFailures"][0];
    assert_eq!(f["limit"], "frameCap", "{f}");
    assert!(f.get("code").is_none(), "no error was sent: {f}");
    assert_eq!(d["errors"], json!([]), "{d}");
}

#[tokio::test]
async fn more_than_the_pre_auth_budget_counts_pre_auth_bytes() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let mut p = gw.provider().await;
    // Two frames that together pass the budget; the second never arrives whole.
    let half = "y".repeat(MAX_PRE_AUTH_BYTES / 2 + 1024);
    let _ = p.ws.send(Message::text(half.clone())).await;
    let _ = p.ws.send(Message::text(half)).await;
    p.expect_closed().await;
    let d = diagnostics_until(&mut c, "a preAuthBytes hit", |d| {
        hits_of(d, "preAuthBytes") == 1
    })
    .await;
    assert_eq!(d["recentFailures"][0]["limit"], "preAuthBytes", "{d}");
}

#[tokio::test]
async fn too_many_rebinds_count_the_rebind_rate() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let (mut p, _) = gw.authed().await;
    let hello = json!({"type": "hello", "name": "flappy", "protocolVersion": 2,
                       "session": session.id, "tools": []});
    for _ in 0..=MAX_REBINDS_PER_MINUTE {
        p.send(hello.clone()).await;
        // Drain until the binding is confirmed (a rebind first cancels the old one).
        loop {
            let m = p.recv().await;
            if m["type"] == "session.lifecycle" && m["state"] == "started" {
                break;
            }
            assert_ne!(m["type"], "error", "{m}");
        }
    }
    p.send(hello).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    let d = diagnostics_until(&mut c, "a rebindRate hit", |d| {
        hits_of(d, "rebindRate") == 1
    })
    .await;
    assert_eq!(errors_of(&d, "RATE_LIMITED"), 1, "{d}");
    let id = provider_id(&mut c).await;
    assert_eq!(d["recentFailures"][0]["provider"], id.as_str(), "{d}");
}

#[tokio::test]
async fn the_51st_provider_socket_gets_503_and_counts_provider_connections() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let mut held = Vec::new();
    for _ in 0..MAX_PROVIDER_CONNECTIONS {
        held.push(gw.provider().await);
    }
    diagnostics_until(&mut c, "50 sockets awaiting auth", |d| {
        d["connections"]["providers"]["awaitAuth"] == MAX_PROVIDER_CONNECTIONS
    })
    .await;
    // Authenticated, they keep their slots (unauthenticated ones would make room).
    for p in &mut held {
        p.send(json!({"type": "auth", "token": gw.token()})).await;
        p.expect("sessions").await;
    }
    let d = diagnostics_until(&mut c, "50 sockets authenticated", |d| {
        d["connections"]["providers"]["awaitAuth"] == 0
    })
    .await;
    assert_eq!(
        d["connections"]["providers"]["open"],
        MAX_PROVIDER_CONNECTIONS
    );
    match tokio_tungstenite::connect_async(gw.url()).await {
        Err(tungstenite::Error::Http(resp)) => assert_eq!(resp.status().as_u16(), 503),
        other => panic!("the 51st socket was not refused: {:?}", other.map(|_| ())),
    }
    let d = diagnostics_until(&mut c, "a providerConnections hit", |d| {
        hits_of(d, "providerConnections") == 1
    })
    .await;
    assert_eq!(d["recentFailures"][0]["limit"], "providerConnections");
    drop(held);
    diagnostics_until(&mut c, "the sockets gone", |d| {
        d["connections"]["providers"]["open"] == 0
    })
    .await;
}

#[tokio::test]
async fn connection_states_show_each_provider_phase_hosts_and_control_clients() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    let _waiting = gw.provider().await;
    let (_authed, _) = gw.authed().await;
    let mut bound = gw.bound("b", &session.id, json!([])).await;
    let mut pairing = gw.provider().await;
    pairing
        .send(json!({"type": "auth", "mode": "pair", "name": "tab"}))
        .await;
    pairing.expect("auth.pairing").await;
    let d = diagnostics_until(&mut c, "one provider in each state", |d| {
        d["connections"]["providers"]["open"] == 4
    })
    .await;
    let conns = &d["connections"];
    // What is queued depends on timing; `slow_consumers` tests it.
    let mut providers = conns["providers"].clone();
    providers.as_object_mut().unwrap().remove("queued");
    assert_eq!(
        providers,
        json!({"open": 4, "max": MAX_PROVIDER_CONNECTIONS, "awaitAuth": 1, "awaitPairing": 1,
               "awaitHello": 1, "bound": 1, "unbound": 0}),
        "{conns}"
    );
    assert_eq!(conns["sessionHosts"]["open"], 1, "{conns}");
    assert_eq!(conns["sessionHosts"]["attached"], 1, "{conns}");
    assert_eq!(conns["sessionHosts"]["detached"], 0, "{conns}");
    assert_eq!(conns["controlClients"]["open"], 1, "{conns}");
    assert_eq!(conns["sessions"], 1, "{conns}");

    // The session ends: its bound provider becomes unbound.
    let ready = async {
        let pending = bound.expect("session.lifecycle").await;
        assert_eq!(pending["state"], "shutdown.pending", "{pending}");
        bound
            .send(json!({"type": "shutdown.ready", "sessionId": session.id}))
            .await;
    };
    let (ended, ()) = tokio::join!(host.end_session(&session.id), ready);
    ended.unwrap();
    let d = diagnostics_until(&mut c, "the provider unbound", |d| {
        d["connections"]["providers"]["unbound"] == 1
    })
    .await;
    assert_eq!(d["connections"]["providers"]["bound"], 0, "{d}");
    assert_eq!(d["connections"]["sessions"], 0, "{d}");
}

/// Waits on the engine's own event stream until a `DiagnosticsChanged` went out.
async fn diagnostics_event_emitted(rx: &mut tokio::sync::broadcast::Receiver<GatewayEvent>) {
    loop {
        let e = tokio::time::timeout(PATIENCE, rx.recv())
            .await
            .expect("no DiagnosticsChanged")
            .expect("event stream broken");
        if e == GatewayEvent::DiagnosticsChanged {
            return;
        }
    }
}

#[tokio::test]
async fn diagnostics_changed_goes_only_to_followers_until_they_unfollow() {
    let gw = TestGateway::start().await;
    let (mut follower, _) = Control::authed(&gw).await;
    let (mut other, _) = Control::authed(&gw).await;
    let d = follower.ok("diagnostics.follow", json!({})).await;
    assert_eq!(d["errors"], json!([]), "the result is the diagnostics: {d}");
    let mut engine = gw.handle.gateway().subscribe();

    let (mut p, _) = gw.authed().await;
    p.send_raw("nope").await;
    p.expect_error("INVALID_JSON").await;
    let e = follower.event_of("diagnostics.changed").await;
    assert_eq!(e, json!({"kind": "diagnostics.changed"}));
    let d = diagnostics_until(&mut follower, "the error", |d| {
        errors_of(d, "INVALID_JSON") == 1
    })
    .await;
    assert_eq!(d["recentFailures"].as_array().unwrap().len(), 1);

    // The other client saw none: after the engine's last DiagnosticsChanged, the next
    // event it gets is a status change (both travel the same ordered stream).
    diagnostics_event_emitted(&mut engine).await;
    gw.handle.gateway().emit(GatewayEvent::StatusChanged);
    loop {
        let e = other.event().await;
        assert_ne!(e["event"]["kind"], "diagnostics.changed", "{e}");
        if e["event"]["kind"] == "status.changed" {
            break;
        }
    }

    // After `unfollow`, the follower gets none either.
    follower
        .ok("unfollow", json!({"topic": "diagnostics"}))
        .await;
    follower.events.clear();
    p.send_raw("again").await;
    p.expect_error("INVALID_JSON").await;
    diagnostics_event_emitted(&mut engine).await;
    gw.handle.gateway().emit(GatewayEvent::StatusChanged);
    let next = follower.event().await;
    assert_eq!(next["event"]["kind"], "status.changed", "{next}");
}

#[tokio::test]
async fn a_denied_pairing_counts_the_auth_failed_the_provider_was_sent() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let mut p = gw.provider().await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    let id = c.ok("pairing.list", json!({})).await["pairings"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok("pairing.deny", json!({"id": id})).await;
    p.expect_error("AUTH_FAILED").await;
    let d = diagnostics_until(&mut c, "the AUTH_FAILED", |d| {
        errors_of(d, "AUTH_FAILED") == 1
    })
    .await;
    assert_eq!(d["recentFailures"][0]["replyTo"], "auth", "{d}");
    assert_eq!(
        d["recentFailures"][0]["message"], "Pairing denied by the user",
        "{d}"
    );
}

#[tokio::test]
async fn an_unknown_follow_topic_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let e = c
        .err("unfollow", json!({"topic": "everything"}), "INVALID_JSON")
        .await;
    assert!(e["message"].as_str().unwrap().contains("unfollow"), "{e}");
}

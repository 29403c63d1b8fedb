//! One update of a kind in flight per (provider, session), and the revision barrier (spec:
//! "Update acknowledgments", "Ordering guarantees"). A `tools.update` with a `requestId` is
//! acknowledged once the session's host has been sent the new tool set (the debounced
//! `session.tools`); until then it is in flight and another `tools.update` for that session is
//! `RATE_LIMITED`. Other updates take effect in the gateway at once and are acknowledged at
//! once. The tool-set debounce is stretched here (publishing at its 1 s maximum wait), so
//! "before the publish" is a wide window.

use serde_json::{json, Value};
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_testkit::*;

async fn slow_publish() -> TestGateway {
    TestGateway::start_with(|c| c.toolset_debounce = Duration::from_secs(5)).await
}

/// A message answered at once, to see what arrives before it.
async fn fence(p: &mut Provider, id: &str) -> Vec<Value> {
    p.send(json!({"type": "stream.query", "queryId": id, "streams": []}))
        .await;
    let mut before = Vec::new();
    loop {
        let m = p.recv().await;
        if m["type"] == "stream.history" && m["queryId"] == id {
            return before;
        }
        before.push(m);
    }
}

async fn tool_names(host: &HostClient, session: &str) -> Vec<String> {
    let status = host.status().await.unwrap();
    let s = status.sessions.iter().find(|s| s.id == session).unwrap();
    s.tools.clone()
}

#[tokio::test]
async fn a_second_tools_update_in_flight_is_rate_limited() {
    let gw = slow_publish().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([tool("t0")])).await;
    p.send(json!({"type": "tools.update", "requestId": "u1", "tools": [tool("t1")]}))
        .await;
    p.send(json!({"type": "tools.update", "requestId": "u2", "tools": [tool("t2")]}))
        .await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["requestId"], "u2", "{e}");
    assert_eq!(e["replyTo"], "tools.update", "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "u1");
    assert_eq!(ack["revision"], 1);
    assert_eq!(tool_names(&host, &s.id).await, ["t1"], "u2 was not applied");
    // After the ack the next one is accepted.
    p.send(json!({"type": "tools.update", "requestId": "u3", "tools": [tool("t3")]}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(
        (ack["requestId"].as_str(), ack["revision"].as_u64()),
        (Some("u3"), Some(2))
    );
}

#[tokio::test]
async fn a_tools_update_is_acknowledged_only_once_the_host_has_its_tools() {
    let gw = slow_publish().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "u1", "tools": [tool("fresh")]}))
        .await;
    // Applied in the gateway at once (a call would be routed), not acknowledged yet.
    let before = fence(&mut p, "f1").await;
    assert!(before.is_empty(), "nothing before the publish: {before:?}");
    assert_eq!(tool_names(&host, &s.id).await, ["fresh"]);
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "u1");
    // The host was sent the tool set with it before the ack went out.
    let e = next_host_event(
        &mut host,
        |e| matches!(e, HostEvent::SessionTools(t) if t.tools.iter().any(|x| x.name == "fresh")),
    )
    .await;
    assert!(matches!(e, HostEvent::SessionTools(_)));
}

#[tokio::test]
async fn other_updates_take_effect_and_are_acknowledged_at_once() {
    let gw = slow_publish().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "t", "tools": [tool("x")]}))
        .await;
    for (kind, extra) in [
        ("hooks.update", json!({"onPreToolUse": []})),
        ("context.update", json!({"context": "c"})),
        ("filter.set", json!({"stream": "s", "rules": []})),
    ] {
        let mut m = json!({"type": kind, "requestId": kind});
        m.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        // Twice in a row: each is acknowledged before the next is read, so never in flight.
        p.send(m.clone()).await;
        p.send(m).await;
    }
    let mut revisions = Vec::new();
    for kind in [
        "hooks.update",
        "hooks.update",
        "context.update",
        "context.update",
        "filter.set",
        "filter.set",
    ] {
        let ack = p.expect("ack").await;
        assert_eq!(ack["requestId"], kind, "{ack}");
        revisions.push(ack["revision"].as_u64().unwrap());
    }
    // The tools.update comes last, with the next revision: revisions rise in ack order.
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "t");
    revisions.push(ack["revision"].as_u64().unwrap());
    assert_eq!(revisions, [1, 2, 3, 4, 5, 6, 7]);
}

#[tokio::test]
async fn a_tools_update_without_request_id_is_never_in_flight() {
    let gw = slow_publish().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "tools": [tool("a")]}))
        .await;
    p.send(json!({"type": "tools.update", "tools": [tool("b")]}))
        .await;
    let before = fence(&mut p, "f").await;
    assert!(before.is_empty(), "no error, no ack: {before:?}");
    assert_eq!(tool_names(&host, &s.id).await, ["b"]);
}

#[tokio::test]
async fn a_tools_update_in_flight_when_its_session_ends_is_answered_invalid_session() {
    let gw = slow_publish().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "u1", "tools": [tool("x")]}))
        .await;
    fence(&mut p, "f").await;
    let ending = host.end_session(&s.id);
    tokio::pin!(ending);
    let pending = tokio::select! {
        m = p.expect("session.lifecycle") => m,
        _ = &mut ending => panic!("ended before shutdown.ready"),
    };
    assert_eq!(pending["state"], "shutdown.pending");
    p.expect("sessions.updated").await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    tokio::time::timeout(PATIENCE, ending)
        .await
        .unwrap()
        .unwrap();
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["requestId"], "u1", "{e}");
    assert_eq!(e["replyTo"], "tools.update", "{e}");
}

#[tokio::test]
async fn a_tools_update_in_flight_at_a_rebind_is_answered_invalid_session() {
    let gw = slow_publish().await;
    let (host, s) = gw.host_with_session().await;
    let s2 = host
        .register_session(SessionRegister::default())
        .await
        .unwrap();
    let mut p = gw.bound("p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "u1", "tools": [tool("x")]}))
        .await;
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": s2.id}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["requestId"], "u1", "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
    p.expect("hello.ack").await;
    // The new binding starts with nothing in flight.
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "tools.update", "requestId": "v1", "tools": [tool("y")]}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(
        (ack["requestId"].as_str(), ack["revision"].as_u64()),
        (Some("v1"), Some(1))
    );
}

#[tokio::test]
async fn in_flight_is_per_session_for_a_provider_bound_to_all() {
    let gw = slow_publish().await;
    let host = gw.host().await;
    let mut ids = Vec::new();
    for id in ["a", "b"] {
        let req = SessionRegister {
            session_id: Some(id.into()),
            ..Default::default()
        };
        ids.push(host.register_session(req).await.unwrap().id);
    }
    let p = gw.handle.gateway().connect_local();
    let mut p = LocalJson(p);
    p.expect("sessions").await;
    p.0.send_json(&json!({"type": "hello", "name": "all", "protocolVersion": 2, "session": "all"}))
        .unwrap();
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.expect("session.lifecycle").await;
    let update = |rid: &str, sid: Option<&str>| {
        let mut m = json!({"type": "tools.update", "requestId": rid, "tools": [tool("t")]});
        if let Some(sid) = sid {
            m["sessionId"] = json!(sid);
        }
        m
    };
    p.0.send_json(&update("in-a", Some("a"))).unwrap();
    p.0.send_json(&update("in-b", Some("b"))).unwrap();
    // Both sessions busy now: one without sessionId (every session) is refused.
    p.0.send_json(&update("everywhere", None)).unwrap();
    let e = p.expect("error").await;
    assert_eq!(
        (e["code"].as_str(), e["requestId"].as_str()),
        (Some("RATE_LIMITED"), Some("everywhere"))
    );
    let mut acked = [p.expect("ack").await, p.expect("ack").await];
    acked.sort_by_key(|a| a["requestId"].as_str().unwrap().to_string());
    assert_eq!(acked[0]["requestId"], "in-a");
    assert_eq!(acked[0]["sessionId"], ids[0].as_str());
    assert_eq!(acked[1]["requestId"], "in-b");
    assert_eq!(acked[1]["sessionId"], ids[1].as_str());
}

struct LocalJson(tap_gateway::LocalProvider);

impl LocalJson {
    async fn expect(&mut self, kind: &str) -> Value {
        let v = tokio::time::timeout(PATIENCE, self.0.recv_json())
            .await
            .expect("timed out")
            .expect("closed");
        assert_eq!(v["type"], kind, "expected '{kind}', got {v}");
        v
    }
}

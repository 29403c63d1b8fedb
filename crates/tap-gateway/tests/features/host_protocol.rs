//! The session-host protocol (`/session`): authentication, malformed requests, duplicate
//! call ids, status, stream history and deliveries.
use tap_testkit::*;

use futures_util::FutureExt;
use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{BusyState, HostEvent};
use tap_protocol::provider::PushLevel;
use tap_protocol::ErrorCode;

/// A raw socket on the session-host endpoint, not yet authenticated.
async fn raw_host(gw: &TestGateway) -> Provider {
    Provider::connect(&format!("{}/session", gw.url())).await
}

/// A raw session-host socket past `auth`.
async fn raw_authed_host(gw: &TestGateway) -> Provider {
    let mut h = raw_host(gw).await;
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 1, "hostName": "raw"}),
    )
    .await;
    let ok = h.expect("auth.ok").await;
    assert!(ok["hostId"].as_str().is_some_and(|id| !id.is_empty()));
    h
}

/// The next message on a raw host socket other than a (debounced, so unpredictably
/// timed) `session.tools`.
async fn next_skipping_tools(h: &mut Provider) -> Value {
    loop {
        let m = h.recv().await;
        if m["type"] != "session.tools" {
            return m;
        }
    }
}

fn drain_events(host: &mut HostClient) -> Vec<HostEvent> {
    let mut seen = Vec::new();
    while let Some(Some(e)) = host.next_event().now_or_never() {
        seen.push(e);
    }
    seen
}

#[tokio::test]
async fn a_bad_host_token_is_auth_failed_and_closes() {
    let gw = TestGateway::start().await;
    let mut h = raw_host(&gw).await;
    // The provider token is not a host token.
    h.send(json!({"type": "auth", "token": gw.token(), "protocolVersion": 1}))
        .await;
    let e = h.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "auth");
    assert!(h.expect_closed().await.is_empty());

    // Through the client, too.
    let refused = HostClient::connect(
        &format!("{}/session", gw.url()),
        "htk-not-the-token",
        "h",
        None,
    )
    .await;
    match refused {
        Err(tap_client::ClientError::Refused(e)) => assert_eq!(e.code, ErrorCode::AuthFailed),
        Err(other) => panic!("expected AUTH_FAILED, got {other:?}"),
        Ok(_) => panic!("a bad token was accepted"),
    }
}

#[tokio::test]
async fn a_wrong_protocol_version_is_unsupported_version() {
    let gw = TestGateway::start().await;
    let mut h = raw_host(&gw).await;
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 2}),
    )
    .await;
    let e = h.expect_error("UNSUPPORTED_VERSION").await;
    assert_eq!(e["replyTo"], "auth");
    assert!(h.expect_closed().await.is_empty());
}

#[tokio::test]
async fn a_first_message_that_is_not_auth_is_auth_failed() {
    let gw = TestGateway::start().await;
    let mut h = raw_host(&gw).await;
    h.send(json!({"type": "status.get", "requestId": "r1"}))
        .await;
    let e = h.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "status.get");
    assert!(h.expect_closed().await.is_empty());
}

#[tokio::test]
async fn invalid_json_and_unknown_types_get_errors_with_the_request_id() {
    let gw = TestGateway::start().await;
    let mut h = raw_authed_host(&gw).await;

    h.send_raw("{not json").await;
    let e = h.expect_error("INVALID_JSON").await;
    assert!(e.get("requestId").is_none(), "{e}");

    h.send(json!({"type": "session.explode", "requestId": "r7"}))
        .await;
    let e = h.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(e["requestId"], "r7");

    // A known type with a missing field: INVALID_JSON, still correlated.
    h.send(json!({"type": "session.end", "requestId": "r8"}))
        .await;
    let e = h.expect_error("INVALID_JSON").await;
    assert_eq!(e["requestId"], "r8");
    assert_eq!(e["replyTo"], "session.end");

    // None of that was fatal.
    h.send(json!({"type": "status.get", "requestId": "r9"}))
        .await;
    let status = h.expect("status").await;
    assert_eq!(status["requestId"], "r9");
}

#[tokio::test]
async fn a_duplicate_in_flight_call_id_is_refused() {
    let gw = TestGateway::start().await;
    let mut h = raw_authed_host(&gw).await;
    h.send(json!({"type": "session.register", "requestId": "reg", "sessionId": "s-dup"}))
        .await;
    let reg = h.expect("session.registered").await;
    assert_eq!(reg["session"]["id"], "s-dup");
    let mut p = gw.bound("prov", "s-dup", json!([tool("slow")])).await;

    let invoke = |call_id: &str| {
        json!({"type": "tool.invoke", "callId": call_id, "sessionId": "s-dup",
               "tool": "slow", "args": {}})
    };
    h.send(invoke("c1")).await;
    let call = p.expect("tool.call").await;
    h.send(invoke("c1")).await;
    let e = next_skipping_tools(&mut h).await;
    assert_eq!(e["type"], "error");
    assert_eq!(e["code"], "INVALID_JSON");
    assert_eq!(e["requestId"], "c1");
    assert_eq!(e["replyTo"], "tool.invoke");

    // The provider saw one call only: its next message is the call made after.
    h.send(invoke("c2")).await;
    let call2 = p.expect("tool.call").await;
    assert_ne!(call2["id"], call["id"]);
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "one"}))
        .await;
    p.send(json!({"type": "tool.result", "id": call2["id"], "data": "two"}))
        .await;
    let mut results = Vec::new();
    while results.len() < 2 {
        let m = next_skipping_tools(&mut h).await;
        assert_eq!(m["type"], "tool.result", "{m}");
        results.push((m["callId"].clone(), m["data"].clone()));
    }
    assert_eq!(
        results,
        [(json!("c1"), json!("one")), (json!("c2"), json!("two"))]
    );

    // Once finished, the id may be used again.
    h.send(invoke("c1")).await;
    let call3 = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call3["id"], "data": "three"}))
        .await;
    let r = next_skipping_tools(&mut h).await;
    assert_eq!(r["type"], "tool.result", "{r}");
    assert_eq!(r["callId"], "c1");
    assert_eq!(r["data"], "three");
}

#[tokio::test]
async fn status_lists_sessions_and_providers_with_tools_and_state() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = gw
        .bound("tooly", &s.id, json!([tool("beta"), tool("alpha")]))
        .await;
    let (_waiting, _) = gw.authed().await;
    host.set_state(&s.id, BusyState::Busy).unwrap();

    let status = host.status().await.unwrap();
    assert_eq!(status.address, gw.url());
    assert_eq!(status.sessions.len(), 1);
    let session = &status.sessions[0];
    assert_eq!(session.id, s.id);
    assert_eq!(session.label.as_deref(), Some("test"));
    assert_eq!(session.cwd.as_deref(), Some("/tmp"));
    assert!(session.foreground);
    assert_eq!(session.state, BusyState::Busy);
    assert_eq!(session.host_name.as_deref(), Some("test-host"));
    assert_eq!(
        session.host_id.as_deref(),
        Some(host.welcome().host_id.as_str())
    );
    assert!(!session.host_detached);
    assert_eq!(session.tools, ["alpha", "beta"]);

    assert_eq!(status.providers.len(), 2);
    let bound = status
        .providers
        .iter()
        .find(|p| p.name.as_deref() == Some("tooly"))
        .expect("bound provider listed");
    assert_eq!(bound.state, "bound");
    assert_eq!(bound.session.as_deref(), Some(s.id.as_str()));
    assert_eq!(bound.tools, ["beta", "alpha"]);
    assert_eq!(bound.trust, "project");
    assert_eq!(bound.in_flight, 0);
    let waiting = status
        .providers
        .iter()
        .find(|p| p.name.is_none())
        .expect("unbound provider listed");
    assert_eq!(waiting.state, "awaitHello");
    assert_eq!(waiting.session, None);
    assert!(waiting.tools.is_empty());

    // The in-process snapshot is the same data.
    let direct = gw.handle.gateway().status();
    assert_eq!(direct.sessions, status.sessions);
    assert_eq!(direct.providers, status.providers);
}

#[tokio::test]
async fn streams_history_returns_pushed_events() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("logger", &s.id, json!([])).await;
    p.send(
        json!({"type": "push", "level": "keep", "stream": "log", "event": "first",
                  "metadata": {"n": 1}}),
    )
    .await;
    p.send(json!({"type": "push", "level": "surface", "stream": "log", "event": "second"}))
        .await;
    p.send(json!({"type": "push", "level": "keep", "event": "on the default stream"}))
        .await;
    // A query round trip on the provider's connection: the pushes are stored by now.
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;

    let all = host.streams_history(&s.id, None, None).await.unwrap();
    assert_eq!(all.session_id, s.id);
    let keys: Vec<&String> = all.streams.keys().collect();
    assert_eq!(keys, ["log@logger", "logger@logger"]);
    let log = &all.streams["log@logger"];
    let events: Vec<&str> = log.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(events, ["second", "first"], "newest first");
    assert_eq!(log[0].level, Some(PushLevel::Surface));
    assert_eq!(log[1].level, Some(PushLevel::Keep));
    assert_eq!(log[1].metadata.as_ref().unwrap()["n"], json!(1));
    assert_eq!(
        all.streams["logger@logger"][0].event,
        "on the default stream"
    );

    let newest = host
        .streams_history(&s.id, Some("log"), Some(1))
        .await
        .unwrap();
    assert_eq!(newest.streams.len(), 1);
    let events: Vec<&str> = newest.streams["log@logger"]
        .iter()
        .map(|e| e.event.as_str())
        .collect();
    assert_eq!(events, ["second"]);

    match host.streams_history("ghost", None, None).await {
        Err(tap_client::ClientError::Refused(e)) => {
            assert_eq!(e.code, ErrorCode::InvalidSession)
        }
        other => panic!("expected INVALID_SESSION, got {other:?}"),
    }
}

#[tokio::test]
async fn a_delivery_reaches_the_owning_host() {
    let gw = TestGateway::start().await;
    let (mut owner, s) = gw.host_with_session().await;
    let (mut bystander, _other) = gw.host_with_session().await;
    let mut p = gw.bound("notifier", &s.id, json!([])).await;

    p.send(json!({"type": "push", "level": "keep", "event": "stored only"}))
        .await;
    p.send(
        json!({"type": "push", "level": "surface", "stream": "alerts",
                  "event": "build failed", "metadata": {"job": 7}}),
    )
    .await;
    let d = next_host_event(&mut owner, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    // The `keep` push produced no delivery: the first one is the `surface` push.
    assert_eq!(d.event, "build failed");
    assert_eq!(d.session_id, s.id);
    assert_eq!(d.level, PushLevel::Surface);
    assert_eq!(d.stream, "alerts");
    assert_eq!(d.provider, "notifier");
    assert_eq!(d.metadata.as_ref().unwrap()["job"], json!(7));
    assert!(!d.ts.is_empty());

    p.send(json!({"type": "push", "level": "inject", "event": "please look"}))
        .await;
    let d = next_host_event(&mut owner, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    assert_eq!(d.level, PushLevel::Inject);
    assert_eq!(d.stream, "notifier", "stream defaults to the provider name");

    // The other host got none of it (a round trip on its connection flushes anything
    // queued for it before).
    bystander.status().await.unwrap();
    let stray: Vec<Value> = drain_events(&mut bystander)
        .into_iter()
        .filter(|e| matches!(e, HostEvent::Delivery(_)))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

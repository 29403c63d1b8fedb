//! Push loop prevention (spec: "Push loop prevention"): 10 surface/inject pushes a second
//! per (provider, session), no second inject before the session is idle, a pause after 3
//! inject→response→inject cycles until the next user message.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::{BusyState, Delivery, HostEvent};
use tap_protocol::limits::MAX_PUSHES_PER_SECOND;
use tap_protocol::provider::PushLevel;

async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

fn push(level: &str, event: &str) -> Value {
    json!({"type": "push", "stream": "s", "level": level, "event": event})
}

/// Proves no error is queued for `p`: the `stream.query` answer comes next.
async fn no_error(p: &mut Provider) {
    p.send(json!({"type": "stream.query", "queryId": "fence"}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], "fence", "{h}");
}

async fn stored(host: &HostClient, session: &str, key: &str) -> Vec<String> {
    let h = host
        .streams_history(session, Some(key), None)
        .await
        .unwrap();
    h.streams
        .get(key)
        .map(|v| v.iter().map(|e| e.event.clone()).collect())
        .unwrap_or_default()
}

/// A provider subscribed to `user.message` (to know when the host's report arrived).
async fn injector(gw: &TestGateway, name: &str, session: &str) -> Provider {
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session,
                  "subscribe": ["user.message"]}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p
}

/// The host reports a turn (busy, then idle); returns once the provider heard `idle`.
async fn turn(host: &HostClient, p: &mut Provider, session: &str) {
    host.set_state(session, BusyState::Busy).unwrap();
    host.set_state(session, BusyState::Idle).unwrap();
    let idle = p.expect("session.lifecycle").await;
    assert_eq!(idle["state"], "idle", "{idle}");
}

#[tokio::test(start_paused = true)]
async fn more_than_10_surface_pushes_a_second_are_rate_limited_and_not_stored() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("chatty", &session.id, json!([])).await;
    for i in 0..MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("e{i}"))).await;
    }
    p.send(push("surface", "one too many")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    for i in 0..MAX_PUSHES_PER_SECOND {
        assert_eq!(next_delivery(&mut host).await.event, format!("e{i}"));
    }
    let events = stored(&host, &session.id, "s@chatty").await;
    assert_eq!(events.len(), MAX_PUSHES_PER_SECOND as usize);
    assert!(!events.contains(&"one too many".to_string()));

    // A second later the window has moved on.
    tokio::time::sleep(Duration::from_secs(1)).await;
    p.send(push("surface", "later")).await;
    assert_eq!(next_delivery(&mut host).await.event, "later");
    no_error(&mut p).await;
}

#[tokio::test(start_paused = true)]
async fn keep_pushes_are_not_budgeted() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("logger", &session.id, json!([])).await;
    for i in 0..100 {
        p.send(push("keep", &format!("k{i}"))).await;
    }
    for i in 0..MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("s{i}"))).await;
    }
    no_error(&mut p).await;
    for i in 0..MAX_PUSHES_PER_SECOND {
        let d = next_delivery(&mut host).await;
        assert_eq!(d.event, format!("s{i}"));
        assert_eq!(d.level, PushLevel::Surface);
    }
    assert_eq!(stored(&host, &session.id, "s@logger").await.len(), 110);
}

#[tokio::test(start_paused = true)]
async fn budgets_are_per_provider() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut a = gw.bound("a", &session.id, json!([])).await;
    let mut b = gw.bound("b", &session.id, json!([])).await;
    for i in 0..=MAX_PUSHES_PER_SECOND {
        a.send(push("surface", &format!("a{i}"))).await;
    }
    a.expect_error("RATE_LIMITED").await;
    b.send(push("surface", "from b")).await;
    no_error(&mut b).await;
    let from_b = next_host_event(
        &mut host,
        |e| matches!(e, HostEvent::Delivery(d) if d.provider == "b"),
    )
    .await;
    let HostEvent::Delivery(d) = from_b else {
        unreachable!()
    };
    assert_eq!(d.event, "from b");
}

#[tokio::test]
async fn no_second_inject_until_the_session_is_idle() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = injector(&gw, "ci", &session.id).await;
    let mut other = injector(&gw, "other", &session.id).await;
    p.send(push("inject", "first")).await;
    p.send(push("inject", "second")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "push");
    assert!(e["message"].as_str().unwrap().contains("idle"), "{e}");
    // Surface pushes are not held back, nor are another provider's injects.
    p.send(push("surface", "fyi")).await;
    other.send(push("inject", "other's")).await;
    no_error(&mut other).await;
    assert_eq!(next_delivery(&mut host).await.event, "first");
    assert_eq!(next_delivery(&mut host).await.event, "fyi");
    assert_eq!(next_delivery(&mut host).await.event, "other's");
    assert!(!stored(&host, &session.id, "s@ci")
        .await
        .contains(&"second".to_string()));

    turn(&host, &mut p, &session.id).await;
    p.send(push("inject", "third")).await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "third");
    assert_eq!(d.level, PushLevel::Inject);
}

#[tokio::test]
async fn injects_pause_after_3_cycles_until_a_user_message() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = injector(&gw, "looper", &session.id).await;
    // inject → response → inject, three times: four injects are delivered.
    for i in 0..4 {
        p.send(push("inject", &format!("i{i}"))).await;
        assert_eq!(next_delivery(&mut host).await.event, format!("i{i}"));
        turn(&host, &mut p, &session.id).await;
    }
    p.send(push("inject", "paused")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert!(e["message"].as_str().unwrap().contains("paused"), "{e}");
    // Another idle does not lift the pause.
    turn(&host, &mut p, &session.id).await;
    p.send(push("inject", "still paused")).await;
    p.expect_error("RATE_LIMITED").await;
    // The user speaking does.
    host.session_event(&session.id, "user.message", json!({"content": "go on"}))
        .unwrap();
    assert_eq!(p.expect("session.event").await["event"], "user.message");
    p.send(push("inject", "resumed")).await;
    assert_eq!(next_delivery(&mut host).await.event, "resumed");
    no_error(&mut p).await;
}

#[tokio::test]
async fn filter_outcome_inject_is_budgeted_as_inject() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = injector(&gw, "f", &session.id).await;
    p.send(
        json!({"type": "filter.set", "requestId": "r", "stream": "s",
                  "rules": [{"match": "urgent", "outcome": "inject"}]}),
    )
    .await;
    p.expect("ack").await;
    p.send(push("keep", "urgent 1")).await;
    p.send(push("keep", "urgent 2")).await;
    p.expect_error("RATE_LIMITED").await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "urgent 1");
    assert_eq!(d.level, PushLevel::Inject);
}

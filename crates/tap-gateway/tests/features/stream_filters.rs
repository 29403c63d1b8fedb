//! `filter.set` (spec: "filter.set", "Stream access control", "Regex execution safety").

use tap_testkit::*;

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{Delivery, HostEvent};
use tap_protocol::provider::PushLevel;

async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

/// Sends a `filter.set` and expects its `ack`; returns the revision.
async fn set_filter(p: &mut Provider, request_id: &str, stream: &str, rules: Value) -> u64 {
    p.send(
        json!({"type": "filter.set", "requestId": request_id, "stream": stream,
                  "rules": rules}),
    )
    .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], request_id, "{ack}");
    ack["revision"].as_u64().unwrap()
}

/// `(event, level)` of a stream's history, newest first.
async fn history(host: &HostClient, session: &str, key: &str) -> Vec<(String, PushLevel)> {
    let h = host
        .streams_history(session, Some(key), None)
        .await
        .unwrap();
    h.streams
        .get(key)
        .map(|v| {
            v.iter()
                .map(|e| (e.event.clone(), e.level.unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

fn push(stream: &str, level: &str, event: &str) -> Value {
    json!({"type": "push", "stream": stream, "level": level, "event": event})
}

#[tokio::test]
async fn first_match_wins_and_the_outcome_overrides_the_level() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("git", &session.id, json!([])).await;
    let rev = set_filter(
        &mut p,
        "f1",
        "git-watch",
        json!([{"match": "behind=0", "outcome": "drop"},
               {"match": "conflicts=[1-9]", "outcome": "surface"},
               {"match": "conflicts", "outcome": "inject"},
               {"match": ".*", "outcome": "keep"}]),
    )
    .await;
    assert_eq!(rev, 1);
    p.send(push("git-watch", "inject", "behind=0 ahead=1"))
        .await;
    p.send(push("git-watch", "keep", "conflicts=2")).await;
    p.send(push("git-watch", "surface", "all quiet")).await;
    p.send(push("git-watch", "surface", "fence conflicts=3"))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "conflicts=2");
    assert_eq!(d.level, PushLevel::Surface);
    // "all quiet" was kept (not delivered): the next delivery is the fence.
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "fence conflicts=3");
    assert_eq!(
        history(&host, &session.id, "git-watch@git").await,
        [
            ("fence conflicts=3".to_string(), PushLevel::Surface),
            ("all quiet".to_string(), PushLevel::Keep),
            ("conflicts=2".to_string(), PushLevel::Surface),
        ]
    );
}

#[tokio::test]
async fn unmatched_push_keeps_its_level_and_other_streams_are_unfiltered() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    set_filter(
        &mut p,
        "f",
        "a",
        json!([{"match": "^noise", "outcome": "drop"}]),
    )
    .await;
    p.send(push("a", "surface", "signal")).await;
    p.send(push("b", "surface", "noise from b")).await;
    assert_eq!(next_delivery(&mut host).await.event, "signal");
    assert_eq!(next_delivery(&mut host).await.event, "noise from b");
}

#[tokio::test]
async fn empty_rules_remove_the_filter() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    assert_eq!(
        set_filter(&mut p, "f1", "s", json!([{"match": "", "outcome": "drop"}])).await,
        1
    );
    p.send(push("s", "surface", "dropped")).await;
    assert_eq!(set_filter(&mut p, "f2", "s", json!([])).await, 2);
    p.send(push("s", "surface", "delivered")).await;
    assert_eq!(next_delivery(&mut host).await.event, "delivered");
    assert_eq!(
        history(&host, &session.id, "s@p").await,
        [("delivered".to_string(), PushLevel::Surface)]
    );
}

#[tokio::test]
async fn the_stream_defaults_to_the_provider_name_and_own_qualified_names_work() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("me", &session.id, json!([])).await;
    set_filter(
        &mut p,
        "f",
        "me@me",
        json!([{"match": "x", "outcome": "surface"}]),
    )
    .await;
    // No `stream`: the provider's name.
    p.send(json!({"type": "push", "level": "keep", "event": "x marks"}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.stream, "me");
    assert_eq!(d.level, PushLevel::Surface);
}

#[tokio::test]
async fn another_providers_stream_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let _other = gw.bound("other", &session.id, json!([])).await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "stream": "log@other",
                  "rules": [{"match": "x", "outcome": "drop"}]}),
    )
    .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "filter.set");
    assert_eq!(e["requestId"], "f");
    assert_eq!(e["sessionId"], session.id.as_str());
}

#[tokio::test]
async fn invalid_rules_are_refused_with_the_request_id_and_the_old_filter_stays() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    assert_eq!(
        set_filter(
            &mut p,
            "f1",
            "s",
            json!([{"match": "^drop", "outcome": "drop"}])
        )
        .await,
        1
    );
    let bad = [
        json!([{"match": "(unclosed", "outcome": "drop"}]),
        json!([{"match": "a".repeat(4097), "outcome": "drop"}]),
    ];
    for (i, rules) in bad.into_iter().enumerate() {
        let id = format!("bad-{i}");
        p.send(json!({"type": "filter.set", "requestId": id, "stream": "s", "rules": rules}))
            .await;
        let e = p.expect_error("INVALID_JSON").await;
        assert_eq!(e["requestId"], id.as_str(), "{e}");
        assert_eq!(e["replyTo"], "filter.set", "{e}");
    }
    // An unknown outcome does not decode.
    p.send(
        json!({"type": "filter.set", "requestId": "bad-outcome", "stream": "s",
                  "rules": [{"match": "x", "outcome": "shout"}]}),
    )
    .await;
    p.expect_error("INVALID_JSON").await;
    // Too many rules.
    let many: Vec<Value> = (0..51)
        .map(|_| json!({"match": "x", "outcome": "keep"}))
        .collect();
    p.send(json!({"type": "filter.set", "requestId": "many", "stream": "s", "rules": many}))
        .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["requestId"], "many");
    // The first filter still applies, and failures did not consume revisions.
    p.send(push("s", "surface", "drop me")).await;
    p.send(push("s", "surface", "keep me")).await;
    assert_eq!(next_delivery(&mut host).await.event, "keep me");
    assert_eq!(set_filter(&mut p, "f2", "s", json!([])).await, 2);
}

#[tokio::test]
async fn a_session_id_other_than_the_bound_one_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    p.send(
        json!({"type": "filter.set", "requestId": "f", "sessionId": "nope", "stream": "s",
                  "rules": []}),
    )
    .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["requestId"], "f");
    p.send(
        json!({"type": "filter.set", "requestId": "g", "sessionId": session.id,
                  "stream": "s", "rules": []}),
    )
    .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["sessionId"], session.id.as_str());
    assert_eq!(ack["revision"], 1);
}

#[tokio::test]
async fn filter_set_before_hello_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, _session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "filter.set", "requestId": "f", "stream": "s", "rules": []}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "filter.set");
}

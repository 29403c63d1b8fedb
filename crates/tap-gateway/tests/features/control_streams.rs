//! The live stream tail (`streams.follow`, `stream.entry`, `unfollow`): the history and
//! the tail join without a gap or a repeat, only the followed session is sent, and an
//! unknown session is refused.

use tap_testkit::*;

use serde_json::{json, Value};
use tap_protocol::host::SessionRegister;

fn push(event: &str) -> Value {
    json!({"type": "push", "stream": "ci", "event": event, "level": "keep",
           "metadata": {"n": event}})
}

/// Waits until `n` events are stored in `session`'s `ci@name` stream.
async fn stored(c: &mut Control, session: &str, key: &str, n: usize) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let h = c.ok("streams.history", json!({"sessionId": session})).await;
        if h["streams"][key].as_array().map_or(0, Vec::len) == n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} events never stored: {h}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn streams_follow_returns_the_history_then_sends_each_new_entry_of_that_session() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let other = host
        .register_session(SessionRegister {
            label: Some("other".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut p = gw.bound("watcher", &session.id, json!([])).await;
    let mut q = gw.bound("elsewhere", &other.id, json!([])).await;
    let (mut c, _) = Control::authed(&gw).await;
    for i in 0..3 {
        p.send(push(&format!("old {i}"))).await;
    }
    stored(&mut c, &session.id, "ci@watcher", 3).await;

    let h = c
        .ok("streams.follow", json!({"sessionId": session.id}))
        .await;
    assert_eq!(h["sessionId"], session.id.as_str());
    let old: Vec<&str> = h["streams"]["ci@watcher"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(old, ["old 2", "old 1", "old 0"], "newest first: {h}");

    // Another session's push first: it must not reach this follower.
    q.send(push("not yours")).await;
    stored(&mut c, &other.id, "ci@elsewhere", 1).await;
    p.send(push("new 0")).await;
    p.send(json!({"type": "push", "stream": "deploy", "event": "new 1", "level": "surface"}))
        .await;
    let first = c.event_of("stream.entry").await;
    assert_eq!(first["sessionId"], session.id.as_str(), "{first}");
    assert_eq!(first["stream"], "ci@watcher", "{first}");
    assert_eq!(first["entry"]["event"], "new 0", "{first}");
    assert_eq!(first["entry"]["level"], "keep", "{first}");
    assert_eq!(first["entry"]["metadata"], json!({"n": "new 0"}), "{first}");
    assert!(
        first["entry"]["ts"].as_str().unwrap().ends_with('Z'),
        "{first}"
    );
    let second = c.event_of("stream.entry").await;
    assert_eq!(second["stream"], "deploy@watcher", "{second}");
    assert_eq!(second["entry"]["event"], "new 1", "{second}");
    assert_eq!(second["entry"]["level"], "surface", "{second}");
}

#[tokio::test]
async fn following_another_session_replaces_the_first_and_unfollow_stops_it() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let second = host
        .register_session(SessionRegister {
            label: Some("second".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut p = gw.bound("a", &session.id, json!([])).await;
    let mut q = gw.bound("b", &second.id, json!([])).await;
    let (mut c, _) = Control::authed(&gw).await;
    c.ok("streams.follow", json!({"sessionId": session.id}))
        .await;
    c.ok("streams.follow", json!({"sessionId": second.id}))
        .await;
    p.send(push("first session")).await;
    stored(&mut c, &session.id, "ci@a", 1).await;
    q.send(push("second session")).await;
    let e = c.event_of("stream.entry").await;
    assert_eq!(
        e["entry"]["event"], "second session",
        "only the second session: {e}"
    );

    c.ok("unfollow", json!({"topic": "streams"})).await;
    q.send(push("after unfollow")).await;
    stored(&mut c, &second.id, "ci@b", 2).await;
    // A fresh follow's history has it; no event for it came on the old follow.
    let h = c
        .ok("streams.follow", json!({"sessionId": second.id}))
        .await;
    assert_eq!(h["streams"]["ci@b"][0]["event"], "after unfollow");
    assert!(
        c.events
            .iter()
            .all(|e| e["event"]["kind"] != "stream.entry"),
        "{:?}",
        c.events
    );
}

#[tokio::test]
async fn following_an_unknown_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    c.err(
        "streams.follow",
        json!({"sessionId": "no-such-session"}),
        "INVALID_SESSION",
    )
    .await;
    c.err("streams.follow", json!({}), "INVALID_JSON").await;
}

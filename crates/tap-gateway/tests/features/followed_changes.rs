//! `emitters.follow` and `traces.follow` (issue 35): the panel refreshes its Emitters and
//! Traces pages on `emitters.changed` / `traces.changed` instead of polling. Both are
//! coalesced (at most one per 250 ms each), go only to the connections that follow them,
//! and a `traces.changed` is sent once the spans are committed, so `traces.list` right
//! after it shows them.

use serde_json::{json, Value};
use tap_protocol::limits::DIAGNOSTICS_EVENT_INTERVAL;
use tap_testkit::*;

/// The emitter `name` in an `emitters.list` answer.
fn emitter<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["emitters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
}

/// Refreshes `emitters.list` on each `emitters.changed` (as the panel does) until `done`
/// holds for the emitter; `event_of` fails the test when no event comes.
async fn emitter_after_events(
    c: &mut Control,
    session: &str,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        c.event_of("emitters.changed").await;
        let list = c.ok("emitters.list", json!({"sessionId": session})).await;
        if let Some(e) = emitter(&list, name).filter(|e| done(e)) {
            return e.clone();
        }
    }
}

/// Kinds of the events `c` has set aside so far.
fn kinds(c: &Control) -> Vec<String> {
    c.events
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn emitters_changed_tells_followers_of_each_change_until_they_unfollow() {
    let gw = TestGateway::for_emitters().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut follower, _) = Control::authed(&gw).await;
    let (mut other, _) = Control::authed(&gw).await;
    assert_eq!(follower.ok("emitters.follow", json!({})).await, json!({}));

    other
        .ok(
            "emitters.start",
            json!({"sessionId": s.id, "name": "ticks", "every": "1h",
                   "command": "echo one; echo two"}),
        )
        .await;
    // Started, ran, counted its lines, and now waits for the next hour: the last
    // state arrives through events alone, with no polling.
    let e = emitter_after_events(&mut follower, &s.id, "ticks", |e| {
        e["status"] == "waiting" && e["counts"]["kept"] == 2
    })
    .await;
    assert_eq!(e["runCount"], 1, "{e}");

    other
        .ok("emitters.stop", json!({"sessionId": s.id, "name": "ticks"}))
        .await;
    emitter_after_events(&mut follower, &s.id, "ticks", |e| e["status"] == "stopped").await;

    // The client that did not follow got none of them.
    other.ok("status", json!({})).await;
    assert!(
        !kinds(&other).iter().any(|k| k == "emitters.changed"),
        "{:?}",
        other.events
    );

    // After `unfollow` the connection holds no receiver of them: a new emitter's run
    // brings it nothing.
    follower.ok("unfollow", json!({"topic": "emitters"})).await;
    follower.events.clear();
    other
        .ok(
            "emitters.start",
            json!({"sessionId": s.id, "name": "again", "every": "1h", "command": "echo x"}),
        )
        .await;
    eventually("the second emitter ran", || {
        let l = gw.handle.gateway().emitters_list(Some(&s.id));
        let ran = l
            .emitters
            .iter()
            .any(|e| e.name == "again" && e.run_count == 1 && e.next_run_at.is_some());
        async move { ran.then_some(()) }
    })
    .await;
    follower.ok("status", json!({})).await;
    assert!(
        !kinds(&follower).iter().any(|k| k == "emitters.changed"),
        "{:?}",
        follower.events
    );
}

#[tokio::test]
async fn traces_changed_comes_after_the_spans_are_committed_and_a_flood_is_coalesced() {
    let gw = TestGateway::start().await;
    let (mut follower, _) = Control::authed(&gw).await;
    let (mut other, _) = Control::authed(&gw).await;
    assert_eq!(follower.ok("traces.follow", json!({})).await, json!({}));

    // A session's start is a trace: listed as soon as the event arrives.
    let (_host, s) = gw.host_with_session().await;
    loop {
        follower.event_of("traces.changed").await;
        let list = follower.ok("traces.list", json!({"sessionId": s.id})).await;
        if !list["traces"].as_array().unwrap().is_empty() {
            break;
        }
    }

    // A flood of traces (forty sessions as fast as they register) makes at most one
    // event per interval, plus the first.
    follower.events.clear();
    let host = gw.host().await;
    let started = tokio::time::Instant::now();
    let mut last = String::new();
    for i in 0..40 {
        let info = host
            .register_session(tap_protocol::host::SessionRegister {
                label: Some(format!("flood-{i}")),
                cwd: Some("/tmp".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        last = info.id;
    }
    // Events until the last session's trace is listed: that one is the trailing event.
    let mut seen = 0;
    loop {
        follower.event_of("traces.changed").await;
        seen += 1;
        let list = follower.ok("traces.list", json!({"sessionId": last})).await;
        if !list["traces"].as_array().unwrap().is_empty() {
            break;
        }
    }
    let elapsed = started.elapsed();
    seen += kinds(&follower)
        .iter()
        .filter(|k| *k == "traces.changed")
        .count();
    let most = 2 + (elapsed.as_millis() / DIAGNOSTICS_EVENT_INTERVAL.as_millis()) as usize;
    assert!(
        seen <= most,
        "{seen} traces.changed in {elapsed:?} (at most {most})"
    );

    // The client that did not follow got none.
    other.ok("status", json!({})).await;
    assert!(
        !kinds(&other).iter().any(|k| k == "traces.changed"),
        "{:?}",
        other.events
    );
}

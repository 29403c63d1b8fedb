//! Nothing lost on the way to the agent (issue 40): a `surface` / `inject` push while no
//! host can show it waits in the session's queue and arrives, in order, when one attaches;
//! the queue is bounded per session (the oldest go, counted in the trace and a
//! `session.warning`); pushes with the same `metadata.dedupKey` within the window are
//! one delivery. Real gateway, real session-host and provider sockets.

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{Delivery, HostEvent};
use tap_testkit::*;

/// The limit as `limits.rs` names it (the gateway's engine limits are not exported).
const MAX_QUEUED_DELIVERIES_PER_SESSION: usize = 256;

async fn wait_detached(gw: &TestGateway, session: &str) {
    let g = gw.handle.gateway();
    wait_until("the host is detached", || {
        let detached = g
            .status()
            .sessions
            .iter()
            .any(|x| x.id == session && x.host_detached);
        std::future::ready(detached)
    })
    .await;
}

async fn resume(gw: &TestGateway, token: String) -> HostClient {
    HostClient::connect(
        &format!("{}/session", gw.url()),
        gw.handle.gateway().host_token(),
        "test-host",
        Some(token),
    )
    .await
    .unwrap()
}

/// A round trip on the provider's socket: every push before it has been handled.
async fn handled(p: &mut Provider) {
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;
}

async fn push(p: &mut Provider, event: &str, metadata: Value) {
    p.send(json!({"type": "push", "level": "surface", "event": event, "metadata": metadata}))
        .await;
}

async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn pushes_while_no_host_is_attached_arrive_in_order_when_it_attaches_merged_by_dedup_key() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("ci", &s.id, json!([])).await;
    let token = host.welcome().resume_token.clone();
    drop(host);
    wait_detached(&gw, &s.id).await;

    push(&mut p, "build 1 failed", json!({"dedupKey": "build"})).await;
    push(&mut p, "lint passed", json!({})).await;
    push(
        &mut p,
        "build 1 still failing",
        json!({"dedupKey": "build"}),
    )
    .await;
    // Another stream's key is another key.
    p.send(
        json!({"type": "push", "level": "surface", "stream": "deploy",
                  "event": "deploy build", "metadata": {"dedupKey": "build"}}),
    )
    .await;
    push(&mut p, "tests passed", json!({})).await;
    handled(&mut p).await;

    let mut host = resume(&gw, token).await;
    assert_eq!(host.welcome().resumed, vec![s.id.clone()]);
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(next_delivery(&mut host).await.event);
    }
    // The merged one keeps the first one's place and carries the newest text.
    assert_eq!(
        got,
        [
            "build 1 still failing",
            "lint passed",
            "deploy build",
            "tests passed"
        ]
    );

    // Attached: a repeat within the window is not shown again; others are, at once.
    push(
        &mut p,
        "build 1 failing again",
        json!({"dedupKey": "build"}),
    )
    .await;
    push(&mut p, "coverage 91%", json!({})).await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "coverage 91%", "the repeat was merged, not sent");
    // Every push is in the stream all the same.
    p.send(json!({"type": "stream.query", "queryId": "all", "streams": ["ci"], "last": 50}))
        .await;
    let h = p.expect("stream.history").await;
    let events: Vec<&str> = h["streams"]["ci"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events.len(), 6, "{h}");
}

#[tokio::test]
async fn a_flood_while_detached_keeps_the_newest_up_to_the_bound_and_counts_the_rest() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    // The push budget allows each provider 10 a second: the flood comes from many.
    let senders = 30;
    let mut providers = Vec::new();
    for i in 0..senders {
        providers.push(gw.bound(&format!("flood{i}"), &s.id, json!([])).await);
    }
    let token = host.welcome().resume_token.clone();
    drop(host);
    wait_detached(&gw, &s.id).await;
    for (i, p) in providers.iter_mut().enumerate() {
        for j in 0..10 {
            push(p, &format!("{i}-{j}"), json!({})).await;
        }
        handled(p).await;
    }
    let pushed = senders * 10;
    let dropped = pushed - MAX_QUEUED_DELIVERIES_PER_SESSION;

    // The trace of the last push says how many the session has dropped.
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let last = format!("flood{}", senders - 1);
    let list = c
        .ok(
            "traces.list",
            json!({"sessionId": s.id, "name": "push", "provider": last, "limit": 1}),
        )
        .await;
    let id = list["traces"][0]["traceId"].as_str().unwrap().to_string();
    let t = c.ok("traces.get", json!({"traceId": id})).await;
    let delivery = t["spans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sp| sp["name"] == "delivery")
        .unwrap_or_else(|| panic!("{t}"))
        .clone();
    assert_eq!(
        delivery["attributes"]["delivery.queued"], true,
        "{delivery}"
    );
    assert_eq!(
        delivery["attributes"]["delivery.dropped"], dropped as u64,
        "{delivery}"
    );

    let mut host = resume(&gw, token).await;
    let w = next_host_event(&mut host, |e| matches!(e, HostEvent::SessionWarning(_))).await;
    let HostEvent::SessionWarning(w) = w else {
        unreachable!()
    };
    assert!(
        w.message
            .starts_with(&format!("{dropped} deliveries were dropped")),
        "{}",
        w.message
    );
    let mut got = Vec::new();
    for _ in 0..MAX_QUEUED_DELIVERIES_PER_SESSION {
        got.push(next_delivery(&mut host).await.event);
    }
    // The newest, in the order pushed.
    let expected: Vec<String> = (0..senders)
        .flat_map(|i| (0..10).map(move |j| format!("{i}-{j}")))
        .skip(dropped)
        .collect();
    assert_eq!(got, expected);
    // And nothing more: the next delivery is a new push.
    let mut late = gw.bound("late", &s.id, json!([])).await;
    push(&mut late, "after", json!({})).await;
    assert_eq!(next_delivery(&mut host).await.event, "after");
}

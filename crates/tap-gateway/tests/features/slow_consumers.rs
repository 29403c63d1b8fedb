//! Slow consumers (`limits::MAX_OUTBOUND_QUEUED_BYTES`, `PEER_WRITE_TIMEOUT`,
//! `CONTROL_WRITE_TIMEOUT`): a peer that completes its handshake and then never reads,
//! on a real socket with a small receive window, while the gateway keeps sending to it.
//! The gateway's queue for it stays within its limit (read from the diagnostics' gauges,
//! not from RSS), the peer is dropped with its protocol's disconnect semantics, and a
//! well-behaved peer of the same kind is served meanwhile.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_protocol::diagnostics::{Diagnostics, OutboundQueue};

/// The hostile peer's kernel receive buffer: the gateway's writes stall after a few KiB.
const WINDOW: u32 = 4 * 1024;
/// The per-connection queue limit in these tests, small so they overflow quickly.
const QUEUE_BYTES: usize = 256 * 1024;
/// One frame's padding: a few of these stall the socket, a dozen fill the queue.
const PAD: usize = 32 * 1024;

async fn gateway() -> TestGateway {
    TestGateway::start_with(|c| c.outbound.max_queued_bytes = QUEUE_BYTES).await
}

fn diagnostics(gw: &TestGateway) -> Diagnostics {
    gw.handle.gateway().diagnostics()
}

fn slow_consumer_hits(d: &Diagnostics) -> u64 {
    d.limits
        .iter()
        .find(|l| l.id == "slowConsumer")
        .map_or(0, |l| l.hits)
}

/// The queue never held more than one connection's limit, and is empty now.
fn bounded_and_drained(q: &OutboundQueue) {
    assert!(q.peak_bytes <= QUEUE_BYTES, "{q:?}");
    assert_eq!(q.max_bytes, QUEUE_BYTES, "{q:?}");
    assert_eq!((q.bytes, q.messages), (0, 0), "{q:?}");
}

/// Calls `step` until the gateway has dropped a slow consumer, at most `max` times.
async fn until_dropped(gw: &TestGateway, max: usize, mut step: impl AsyncFnMut(usize)) {
    for i in 0..max {
        if slow_consumer_hits(&diagnostics(gw)) > 0 {
            return;
        }
        step(i).await;
    }
    wait_until("a slow consumer dropped", || async {
        slow_consumer_hits(&diagnostics(gw)) > 0
    })
    .await;
}

fn pad(i: usize) -> String {
    format!("{i:06}{}", "x".repeat(PAD))
}

#[tokio::test]
async fn a_provider_that_stops_reading_is_dropped_and_its_calls_fail_disconnected() {
    let gw = gateway().await;
    let (host, session) = gw.host_with_session().await;
    let mut slow = Provider::connect_small_window(&gw.url(), WINDOW).await;
    slow.send(json!({"type": "auth", "token": gw.token()}))
        .await;
    slow.expect("sessions").await;
    slow.send(hello("slow", &session.id, json!({"tools": [tool("sink")]})))
        .await;
    expect_bound(&mut slow, &session.id).await;
    let mut good = gw.bound("good", &session.id, json!([tool("echo")])).await;
    wait_until("both tools listed", || async {
        session_tool_names(&host, &session.id).await.len() >= 2
    })
    .await;

    // Calls to a provider that reads nothing: once its socket is full they queue.
    let mut calls = Vec::new();
    while diagnostics(&gw).connections.providers.queued.bytes == 0 {
        calls.push(invoke(
            &host,
            &session.id,
            "sink",
            json!({"pad": pad(calls.len())}),
        ));
        assert!(calls.len() < 1000, "the socket never filled");
        tokio::task::yield_now().await;
    }
    // Meanwhile the other provider is served.
    let r = call_and_answer(&host, &mut good, &session.id, "echo", json!("pong")).await;
    assert_eq!(r.data, Some(json!("pong")), "{r:?}");

    until_dropped(&gw, 1000, async |i| {
        calls.push(invoke(&host, &session.id, "sink", json!({"pad": pad(i)})));
        tokio::task::yield_now().await;
    })
    .await;
    // Spec: a provider that disconnects with calls in flight fails them DISCONNECTED.
    // Calls that reached the gateway after it was gone find no such tool.
    let mut codes = Vec::new();
    for rx in calls {
        codes.push(code(&result_of(rx).await).unwrap().to_string());
    }
    let disconnected = codes.iter().take_while(|c| *c == "DISCONNECTED").count();
    assert!(disconnected > 0, "{codes:?}");
    assert!(
        codes[disconnected..].iter().all(|c| c == "NOT_FOUND"),
        "{codes:?}"
    );
    // Its tools left the session; the other provider's stay and still answer.
    wait_until("the slow provider's tool gone", || async {
        !session_tool_names(&host, &session.id)
            .await
            .contains(&"sink".to_string())
    })
    .await;
    let r = call_and_answer(&host, &mut good, &session.id, "echo", json!("still")).await;
    assert_eq!(r.data, Some(json!("still")), "{r:?}");
    // Read now: what it was sent (tool calls), then the end of the socket, no close frame.
    let seen = slow.expect_closed().await;
    assert!(seen.iter().all(|m| m["type"] == "tool.call"), "{seen:?}");

    let d = diagnostics(&gw);
    bounded_and_drained(&d.connections.providers.queued);
    assert_eq!(d.connections.providers.bound, 1, "{d:?}");
    let failure = d
        .recent_failures
        .iter()
        .find(|f| f.limit.as_deref() == Some("slowConsumer"));
    assert!(failure.is_some(), "{:?}", d.recent_failures);
}

/// A raw session host on a small window, authenticated, with one session; returns it,
/// its resume token and the session id.
async fn raw_slow_host(gw: &TestGateway) -> (Provider, String, String) {
    let mut h = Provider::connect_small_window(&format!("{}/session", gw.url()), WINDOW).await;
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 1, "hostName": "slow"}),
    )
    .await;
    let ok = h.expect("auth.ok").await;
    h.send(json!({"type": "session.register", "requestId": "r1", "label": "slow"}))
        .await;
    let reg = h.expect_next("session.registered").await;
    let session = reg["session"]["id"].as_str().unwrap().to_string();
    (h, ok["resumeToken"].as_str().unwrap().to_string(), session)
}

#[tokio::test]
async fn a_session_host_that_stops_reading_is_dropped_and_may_resume() {
    let gw = gateway().await;
    let (mut slow, resume_token, slow_session) = raw_slow_host(&gw).await;
    let mut worker = gw
        .bound("worker", &slow_session, json!([tool("work")]))
        .await;
    // A well-behaved host with its own session and provider.
    let (good_host, good_session) = gw.host_with_session().await;
    let mut good = gw
        .bound("good", &good_session.id, json!([tool("echo")]))
        .await;
    slow.send(
        json!({"type": "tool.invoke", "callId": "k1", "sessionId": slow_session,
                     "tool": "work", "args": {}}),
    )
    .await;
    let call = worker.expect_next("tool.call").await;

    // The slow host's call reports progress it never reads.
    let progress = |i| json!({"type": "tool.progress", "id": call["id"], "message": pad(i)});
    let mut sent = 0;
    while diagnostics(&gw).connections.session_hosts.queued.bytes == 0 {
        worker.send(progress(sent)).await;
        sent += 1;
        assert!(sent < 1000, "the socket never filled");
        worker.fence().await;
    }
    let r = call_and_answer(&good_host, &mut good, &good_session.id, "echo", json!(1)).await;
    assert_eq!(r.data, Some(json!(1)), "{r:?}");
    until_dropped(&gw, 1000, async |_| {
        worker.send(progress(sent)).await;
        sent += 1;
        worker.fence().await;
    })
    .await;

    // Dropped, not ended: the host is detached and its session waits for a resume.
    let d = diagnostics(&gw);
    assert_eq!(d.connections.session_hosts.detached, 1, "{d:?}");
    bounded_and_drained(&d.connections.session_hosts.queued);
    let r = call_and_answer(&good_host, &mut good, &good_session.id, "echo", json!(2)).await;
    assert_eq!(r.data, Some(json!(2)), "{r:?}");
    // The call finishes while the host is away; its result waits in the outbox.
    answer(&mut worker, &call, json!("done")).await;

    let mut back = Provider::connect(&format!("{}/session", gw.url())).await;
    back.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                     "protocolVersion": 1, "resumeToken": resume_token}),
    )
    .await;
    let ok = back.expect("auth.ok").await;
    assert_eq!(ok["resumed"], json!([slow_session]), "{ok}");
    let result = back.expect_next_skipping_progress().await;
    assert_eq!(result["callId"], "k1", "{result}");
    assert_eq!(result["data"], "done", "{result}");
    drop(slow);
}

trait SkipProgress {
    async fn expect_next_skipping_progress(&mut self) -> Value;
}

impl SkipProgress for Provider {
    /// The next `tool.result`, skipping the `tool.progress` replayed before it and the
    /// `session.tools` a resume sends again when the session's tool set was published
    /// while the host was away (the debounce can fire on either side of the drop).
    async fn expect_next_skipping_progress(&mut self) -> Value {
        loop {
            let v = self.recv().await;
            if v["type"] != "tool.progress" && v["type"] != "session.tools" {
                assert_eq!(v["type"], "tool.result", "{v}");
                return v;
            }
        }
    }
}

#[tokio::test]
async fn a_control_client_that_stops_reading_a_stream_follow_is_dropped() {
    let gw = TestGateway::start_with(|c| {
        c.outbound.max_queued_bytes = QUEUE_BYTES;
        c.outbound.control_write_timeout = Duration::from_millis(300);
    })
    .await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    let sock = Provider::connect_small_window(&format!("{}/control", gw.url()), WINDOW).await;
    let mut slow = Control::from_sock(sock);
    let token = gw.handle.gateway().control_token().to_string();
    slow.ok("auth", json!({"token": token})).await;
    slow.ok("streams.follow", json!({"sessionId": session.id}))
        .await;
    let (mut good, _) = Control::authed(&gw).await;
    good.ok("streams.follow", json!({"sessionId": session.id}))
        .await;

    let push = |i| json!({"type": "push", "stream": "log", "event": pad(i), "level": "keep"});
    let mut i = 0;
    until_dropped(&gw, 1000, async |_| {
        p.send(push(i)).await;
        // The good follower reads every entry meanwhile.
        let e = good.event_of("stream.entry").await;
        assert_eq!(
            e["entry"]["event"].as_str().unwrap()[..6],
            format!("{i:06}")
        );
        i += 1;
    })
    .await;
    let d = diagnostics(&gw);
    assert_eq!(d.connections.control_clients.open, 1, "{d:?}");
    bounded_and_drained(&d.connections.control_clients.queued);
    p.send(push(i)).await;
    good.event_of("stream.entry").await;
}

#[tokio::test]
async fn a_provider_that_does_not_take_one_large_call_in_time_is_dropped() {
    // One frame larger than any kernel buffer on the way: the queue never fills, the write
    // stalls, and the write timeout ends it.
    let gw = TestGateway::start_with(|c| {
        c.outbound.peer_write_timeout = Duration::from_millis(300);
    })
    .await;
    let (host, session) = gw.host_with_session().await;
    let mut slow = Provider::connect_small_window(&gw.url(), WINDOW).await;
    slow.send(json!({"type": "auth", "token": gw.token()}))
        .await;
    slow.expect("sessions").await;
    slow.send(hello("slow", &session.id, json!({"tools": [tool("sink")]})))
        .await;
    expect_bound(&mut slow, &session.id).await;
    wait_until("the tool listed", || async {
        session_tool_names(&host, &session.id)
            .await
            .contains(&"sink".to_string())
    })
    .await;

    let big = "x".repeat(8 * 1024 * 1024);
    let r = result_of(invoke(&host, &session.id, "sink", json!({ "pad": big }))).await;
    assert_eq!(code(&r), Some("DISCONNECTED"), "{r:?}");
    let d = diagnostics(&gw);
    assert_eq!(slow_consumer_hits(&d), 1, "{:?}", d.limits);
    assert_eq!(d.connections.providers.bound, 0, "{d:?}");
    assert_eq!(d.connections.providers.queued.bytes, 0, "{d:?}");
}

//! `push` delivery and EventStreams: storage, retention, `stream.query`.

use tap_testkit::*;

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{Delivery, HostEvent};
use tap_protocol::limits::{MAX_STREAM_QUERY_LAST, STREAM_RETENTION};
use tap_protocol::provider::PushLevel;

async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

/// `stream.query` round trip; returns the `streams` object.
async fn query(p: &mut Provider, q: Value) -> Value {
    p.send(q.clone()).await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], q["queryId"], "{h}");
    h["streams"].clone()
}

fn events(entries: &Value) -> Vec<String> {
    entries
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {entries}"))
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn keep_push_is_stored_but_not_delivered() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("keeper", &session.id, json!([])).await;
    p.send(
        json!({"type": "push", "level": "keep", "event": "quiet", "stream": "log",
                  "metadata": {"k": 1}}),
    )
    .await;
    p.send(json!({"type": "push", "level": "surface", "event": "loud", "stream": "log"}))
        .await;
    // Pushes are handled in order, so the keep push would have been delivered first.
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "loud");
    let h = host
        .streams_history(&session.id, Some("log@keeper"), None)
        .await
        .unwrap();
    let entries = &h.streams["log@keeper"];
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].event, "loud");
    assert_eq!(entries[1].event, "quiet");
    assert_eq!(entries[1].level, Some(PushLevel::Keep));
    assert_eq!(entries[1].metadata.as_ref().unwrap()["k"], 1);
}

#[tokio::test]
async fn surface_push_is_delivered_to_the_session_host() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("ci-watcher", &session.id, json!([])).await;
    p.send(
        json!({"type": "push", "level": "surface", "event": "build failed",
                  "stream": "ci", "sessionId": session.id, "metadata": {"run": 42, "ok": false}}),
    )
    .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.session_id, session.id);
    assert_eq!(d.level, PushLevel::Surface);
    assert_eq!(d.stream, "ci");
    assert_eq!(d.provider, "ci-watcher");
    assert_eq!(d.event, "build failed");
    let meta = d.metadata.expect("metadata is kept");
    assert_eq!(meta["run"], 42);
    assert_eq!(meta["ok"], false);
    assert!(d.ts.len() >= 20 && d.ts.contains('T'), "RFC 3339: {}", d.ts);
}

#[tokio::test]
async fn inject_push_is_delivered_with_the_provider_name_as_default_stream() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("detour", &session.id, json!([])).await;
    p.send(
        json!({"type": "push", "level": "inject", "event": "Page asks for help",
                  "metadata": {"url": "https://example.test"}}),
    )
    .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.level, PushLevel::Inject);
    assert_eq!(d.stream, "detour");
    assert_eq!(d.provider, "detour");
    assert_eq!(d.event, "Page asks for help");
    assert_eq!(d.metadata.unwrap()["url"], "https://example.test");
    // Stored under the default stream, too.
    let streams = query(&mut p, json!({"type": "stream.query", "queryId": "q"})).await;
    assert_eq!(events(&streams["detour@detour"]), ["Page asks for help"]);
}

#[tokio::test]
async fn push_is_delivered_only_to_the_host_owning_the_session() {
    let gw = TestGateway::start().await;
    let (mut host_a, sa) = gw.host_with_session().await;
    let (mut host_b, sb) = gw.host_with_session().await;
    let mut pa = gw.bound("pa", &sa.id, json!([])).await;
    let mut pb = gw.bound("pb", &sb.id, json!([])).await;
    pa.send(json!({"type": "push", "level": "surface", "event": "for a"}))
        .await;
    pb.send(json!({"type": "push", "level": "surface", "event": "for b"}))
        .await;
    let da = next_delivery(&mut host_a).await;
    let db = next_delivery(&mut host_b).await;
    assert_eq!(
        (da.event.as_str(), da.session_id.as_str()),
        ("for a", sa.id.as_str())
    );
    assert_eq!(
        (db.event.as_str(), db.session_id.as_str()),
        ("for b", sb.id.as_str())
    );
}

#[tokio::test]
async fn push_with_empty_event_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    for bad in [
        json!({"type": "push", "level": "surface", "event": ""}),
        json!({"type": "push", "level": "surface"}),
        json!({"type": "push", "level": "surface", "event": 5}),
    ] {
        p.send(bad.clone()).await;
        let e = p.expect_error("INVALID_JSON").await;
        assert_eq!(e["replyTo"], "push", "{bad} -> {e}");
    }
    p.send(json!({"type": "push", "level": "surface", "event": "valid"}))
        .await;
    assert_eq!(next_delivery(&mut host).await.event, "valid");
    let streams = query(&mut p, json!({"type": "stream.query", "queryId": "q"})).await;
    assert_eq!(events(&streams["p@p"]), ["valid"]);
}

#[tokio::test]
async fn push_with_at_sign_in_stream_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    for stream in ["a@b", "@", "x@p"] {
        p.send(json!({"type": "push", "level": "keep", "event": "e", "stream": stream}))
            .await;
        let e = p.expect_error("INVALID_JSON").await;
        assert_eq!(e["replyTo"], "push", "{e}");
    }
    let streams = query(&mut p, json!({"type": "stream.query", "queryId": "q"})).await;
    assert_eq!(streams, json!({}));
}

#[tokio::test]
async fn push_for_another_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let other = host.register_session(Default::default()).await.unwrap();
    let mut p = gw.bound("p", &session.id, json!([])).await;
    for sid in [other.id.as_str(), "no-such-session"] {
        p.send(json!({"type": "push", "level": "surface", "event": "e", "sessionId": sid}))
            .await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["replyTo"], "push", "{e}");
        assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    }
    p.send(json!({"type": "push", "level": "surface", "event": "right", "sessionId": session.id}))
        .await;
    let d = next_delivery(&mut host).await;
    assert_eq!(d.event, "right");
    let h = host.streams_history(&other.id, None, None).await.unwrap();
    assert!(h.streams.is_empty(), "{:?}", h.streams);
}

#[tokio::test]
async fn streams_keep_only_the_200_newest_events() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("rec", &session.id, json!([])).await;
    for i in 0..250 {
        p.send(json!({"type": "push", "level": "keep", "event": i.to_string(), "stream": "s"}))
            .await;
    }
    // Provider view (after its own pushes, on the same connection): newest 100, newest first.
    let streams = query(
        &mut p,
        json!({"type": "stream.query", "queryId": "q", "streams": ["s@rec"], "last": 100}),
    )
    .await;
    let want: Vec<String> = (150..250).rev().map(|i: i32| i.to_string()).collect();
    assert_eq!(events(&streams["s@rec"]), want);
    let streams = query(
        &mut p,
        json!({"type": "stream.query", "queryId": "q2", "streams": ["s@rec"], "last": 3}),
    )
    .await;
    assert_eq!(events(&streams["s@rec"]), ["249", "248", "247"]);

    // Host view: every kept event, which is exactly the newest 200.
    let h = host
        .streams_history(&session.id, Some("s@rec"), None)
        .await
        .unwrap();
    let kept: Vec<&str> = h.streams["s@rec"]
        .iter()
        .map(|e| e.event.as_str())
        .collect();
    assert_eq!(kept.len(), STREAM_RETENTION);
    let want: Vec<String> = (50..250).rev().map(|i: i32| i.to_string()).collect();
    assert_eq!(kept, want);
    let h = host
        .streams_history(&session.id, Some("s@rec"), Some(1000))
        .await
        .unwrap();
    assert_eq!(h.streams["s@rec"].len(), STREAM_RETENTION);
}

#[tokio::test]
async fn stream_query_defaults_to_own_streams() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut a = gw.bound("alpha", &session.id, json!([])).await;
    let mut b = gw.bound("beta", &session.id, json!([])).await;
    a.send(json!({"type": "push", "level": "keep", "event": "a1", "stream": "x"}))
        .await;
    a.send(json!({"type": "push", "level": "keep", "event": "a2"}))
        .await;
    b.send(json!({"type": "push", "level": "keep", "event": "b1", "stream": "x"}))
        .await;
    query(&mut b, json!({"type": "stream.query", "queryId": "sync"})).await;
    let streams = query(&mut a, json!({"type": "stream.query", "queryId": "q"})).await;
    let keys: Vec<&String> = streams.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["alpha@alpha", "x@alpha"]);
    assert_eq!(events(&streams["x@alpha"]), ["a1"]);
    // A bare stream name means this provider's stream.
    let streams = query(
        &mut b,
        json!({"type": "stream.query", "queryId": "q", "streams": ["x"]}),
    )
    .await;
    assert_eq!(events(&streams["x"]), ["b1"]);
}

#[tokio::test]
async fn stream_query_for_another_providers_stream_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut owner = gw.bound("owner", &session.id, json!([])).await;
    let mut snoop = gw.bound("snoop", &session.id, json!([])).await;
    owner
        .send(json!({"type": "push", "level": "keep", "event": "secret", "stream": "private"}))
        .await;
    query(
        &mut owner,
        json!({"type": "stream.query", "queryId": "sync"}),
    )
    .await;
    for streams in [
        json!(["private@owner"]),
        json!(["snoop@snoop", "private@owner"]),
    ] {
        snoop
            .send(json!({"type": "stream.query", "queryId": "q", "streams": streams}))
            .await;
        let e = snoop.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], "stream.query", "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }
    // Its own streams remain readable.
    query(
        &mut snoop,
        json!({"type": "stream.query", "queryId": "own", "streams": ["snoop@snoop"]}),
    )
    .await;
}

#[tokio::test]
async fn stream_query_with_last_over_100_is_payload_too_large() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("p", &session.id, json!([])).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "last": MAX_STREAM_QUERY_LAST + 1}))
        .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");
    query(
        &mut p,
        json!({"type": "stream.query", "queryId": "ok", "last": MAX_STREAM_QUERY_LAST}),
    )
    .await;
}

#[tokio::test]
async fn stream_query_for_another_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let other = host.register_session(Default::default()).await.unwrap();
    let mut p = gw.bound("p", &session.id, json!([])).await;
    p.send(json!({"type": "stream.query", "queryId": "q", "sessionId": other.id}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "stream.query", "{e}");
}

#[tokio::test]
async fn keep_flood_of_10000_is_all_accepted_and_the_gateway_stays_responsive() {
    const N: usize = 10_000;
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("flood", &session.id, json!([tool("ping")])).await;
    // `keep`: surface/inject pushes are budgeted (10 a second, tests/push_budgets.rs).
    let flood = tokio::spawn(async move {
        for i in 0..N {
            p.send(json!({"type": "push", "level": "keep", "event": format!("e{i}")}))
                .await;
        }
        p
    });
    // Meanwhile the gateway answers the host.
    let status = host.status().await.unwrap();
    assert!(status.sessions.iter().any(|s| s.id == session.id));

    let mut p = flood.await.unwrap();
    // No push was refused: the next thing the provider hears is the query's answer.
    let streams = query(
        &mut p,
        json!({"type": "stream.query", "queryId": "after", "last": 1}),
    )
    .await;
    assert_eq!(events(&streams["flood@flood"]), [format!("e{}", N - 1)]);
    // And the gateway still serves calls promptly.
    let (_, rx) = host.start_invoke(&session.id, "ping", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "pong"}))
        .await;
    match tokio::time::timeout(PATIENCE, rx).await.unwrap().unwrap() {
        HostEvent::ToolResult(r) => assert_eq!(r.data, Some(json!("pong"))),
        other => panic!("{other:?}"),
    }
    let h = host
        .streams_history(&session.id, Some("flood@flood"), None)
        .await
        .unwrap();
    assert_eq!(h.streams["flood@flood"].len(), STREAM_RETENTION);
}

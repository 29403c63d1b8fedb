//! Size and connection limits, and isolation between providers.

use tap_testkit::*;

use futures_util::SinkExt;
use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, HostToolResult};
use tap_protocol::limits::{
    HARD_FRAME_CAP_BYTES, MAX_MESSAGE_BYTES, MAX_PROVIDER_CONNECTIONS, MAX_TOOL_RESULT_BYTES,
};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::{self, Message};

const MB: usize = 1024 * 1024;

fn code(r: &HostToolResult) -> Option<&str> {
    r.error_code.as_ref().map(|c| c.as_str())
}

/// A `push` whose JSON text is exactly `len` bytes.
fn push_of_len(len: usize) -> String {
    let head = r#"{"type":"push","level":"surface","stream":"big","event":""#;
    let tail = r#""}"#;
    let text = format!("{head}{}{tail}", "e".repeat(len - head.len() - tail.len()));
    assert_eq!(text.len(), len);
    text
}

/// Proves the provider's connection still works: a round trip through `stream.query`.
async fn still_alive(p: &mut Provider) {
    p.send(json!({"type": "stream.query", "queryId": "alive"}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["queryId"], "alive");
}

/// Starts a call and returns its receiver and the `tool.call` the provider got.
async fn start_call(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
    tool: &str,
) -> (oneshot::Receiver<HostEvent>, Value) {
    let (_, rx) = host.start_invoke(session, tool, json!({})).unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["tool"], tool);
    (rx, call)
}

#[tokio::test]
async fn push_over_2_mb_is_payload_too_large_and_the_connection_survives() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    p.send_raw(push_of_len(3 * MB)).await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    // A later, normal push goes through; the big one never did.
    p.send(json!({"type": "push", "level": "surface", "event": "small"}))
        .await;
    let HostEvent::Delivery(d) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await
    else {
        unreachable!()
    };
    assert_eq!(d.event, "small");
    let h = host
        .streams_history(&session.id, Some("big"), None)
        .await
        .unwrap();
    assert!(h.streams.is_empty(), "{:?}", h.streams.keys());
}

#[tokio::test]
async fn push_over_5_mb_is_payload_too_large_and_the_connection_survives() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    p.send_raw(push_of_len(6 * MB)).await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    still_alive(&mut p).await;
}

#[tokio::test]
async fn push_of_exactly_2_mb_is_accepted() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    p.send_raw(push_of_len(MAX_MESSAGE_BYTES)).await;
    let HostEvent::Delivery(d) =
        next_host_event(&mut host, |e| matches!(e, HostEvent::Delivery(_))).await
    else {
        unreachable!()
    };
    assert_eq!(d.stream, "big");
    assert!(d.event.len() > MAX_MESSAGE_BYTES - 100);
    // One byte more is refused.
    p.send_raw(push_of_len(MAX_MESSAGE_BYTES + 1)).await;
    p.expect_error("PAYLOAD_TOO_LARGE").await;
}

#[tokio::test]
async fn tool_result_of_4_mb_is_accepted() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("big", &session.id, json!([tool("dump")])).await;
    let (rx, call) = start_call(&host, &mut p, &session.id, "dump").await;
    let data = "d".repeat(4 * MB);
    let msg = json!({"type": "tool.result", "id": call["id"], "data": data});
    assert!(msg.to_string().len() > MAX_MESSAGE_BYTES);
    assert!(msg.to_string().len() < MAX_TOOL_RESULT_BYTES);
    p.send(msg).await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, None, "{:?}", r.error);
    assert_eq!(
        r.data.as_ref().and_then(Value::as_str).map(str::len),
        Some(4 * MB)
    );
    assert!(r.data == Some(Value::String(data)));
    still_alive(&mut p).await;
}

#[tokio::test]
async fn tool_result_over_5_mb_fails_its_call_with_payload_too_large() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("big", &session.id, json!([tool("dump")])).await;
    // Two calls pending: only the one the oversized result names fails.
    let (rx1, call1) = start_call(&host, &mut p, &session.id, "dump").await;
    let (rx2, call2) = start_call(&host, &mut p, &session.id, "dump").await;
    p.send(json!({"type": "tool.result", "id": call1["id"], "data": "x".repeat(6 * MB)}))
        .await;
    let e = p.expect_error("PAYLOAD_TOO_LARGE").await;
    assert_eq!(e["replyTo"], "tool.result", "{e}");
    let r1 = result_of(rx1).await;
    assert_eq!(code(&r1), Some("PAYLOAD_TOO_LARGE"), "{r1:?}");
    assert_eq!(r1.data, None);
    // The connection survives and the other call completes normally.
    p.send(json!({"type": "tool.result", "id": call2["id"], "data": "fine"}))
        .await;
    let r2 = result_of(rx2).await;
    assert_eq!(r2.data, Some(json!("fine")), "{r2:?}");
    // A late result for the failed call is ignored.
    p.send(json!({"type": "tool.result", "id": call1["id"], "data": "late"}))
        .await;
    still_alive(&mut p).await;
}

#[tokio::test]
async fn frame_over_16_mib_closes_the_socket() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("huge", &session.id, json!([tool("h")])).await;
    let (rx, _call) = start_call(&host, &mut p, &session.id, "h").await;
    let text = push_of_len(HARD_FRAME_CAP_BYTES + 1);
    // The gateway may reset the socket while the frame is still being written.
    let _ = p.ws.send(Message::text(text)).await;
    let seen = p.expect_closed().await;
    assert!(seen.iter().all(|m| m["type"] != "error"), "{seen:?}");
    // The provider is gone: its pending call fails, its tools leave the session.
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("DISCONNECTED"), "{r:?}");
    let status = host.status().await.unwrap();
    let s = status.sessions.iter().find(|s| s.id == session.id).unwrap();
    assert!(s.tools.is_empty(), "{:?}", s.tools);
}

#[tokio::test]
async fn fifty_first_provider_connection_is_refused_with_503() {
    let gw = TestGateway::start().await;
    let token = gw.token();
    let mut providers = Vec::new();
    for _ in 0..MAX_PROVIDER_CONNECTIONS {
        let mut p = gw.provider().await;
        p.send(json!({"type": "auth", "token": token})).await;
        p.expect("sessions").await;
        providers.push(p);
    }
    match tokio_tungstenite::connect_async(gw.url()).await {
        Err(tungstenite::Error::Http(resp)) => assert_eq!(resp.status().as_u16(), 503),
        Err(other) => panic!("expected an HTTP 503, got {other}"),
        Ok(_) => panic!("the 51st provider connection was accepted"),
    }
    // The first 50 all still work.
    for p in &mut providers {
        p.fence().await;
    }
    // The session-host endpoint is not counted.
    let _host = gw.host().await;
    // Once one leaves, its slot is free again (the slot frees when its task ends).
    let mut leaving = providers.pop().unwrap();
    leaving.send(json!({"type": "goodbye"})).await;
    leaving.expect_closed().await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut again = loop {
        match tokio_tungstenite::connect_async(gw.url()).await {
            Ok((ws, _)) => break Provider::from_ws(ws),
            Err(tungstenite::Error::Http(resp)) if resp.status().as_u16() == 503 => {
                assert!(tokio::time::Instant::now() < deadline, "slot never freed");
                tokio::task::yield_now().await;
            }
            Err(other) => panic!("{other}"),
        }
    };
    again.send(json!({"type": "auth", "token": token})).await;
    again.expect("sessions").await;
}

/// A flood of connections that never authenticate cannot keep a provider out: at the
/// limit, the oldest of them gives its slot to the newcomer, and the limit still holds.
#[tokio::test]
async fn at_the_limit_the_oldest_unauthenticated_connection_makes_room_for_a_provider() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut squatters = Vec::new();
    for _ in 0..MAX_PROVIDER_CONNECTIONS {
        squatters.push(gw.provider().await);
    }
    let mut p = gw.bound("late", &session.id, json!([tool("work")])).await;
    // The oldest squatter was closed; the next one still has its slot.
    let closed = squatters[0].expect_closed().await;
    assert!(closed.is_empty(), "{closed:?}");
    squatters[1].fence().await;
    let (_, rx) = host.start_invoke(&session.id, "work", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    answer(&mut p, &call, json!("done")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("done")));
    let open = gw.handle.gateway().diagnostics().connections.providers.open;
    assert!(open <= MAX_PROVIDER_CONNECTIONS, "{open} open");
}

#[tokio::test]
async fn misbehaving_provider_does_not_disturb_another_providers_calls() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut good = gw.bound("good", &session.id, json!([tool("work")])).await;
    let mut bad = gw.bound("bad", &session.id, json!([tool("noise")])).await;

    // The good provider answers every call it gets.
    let sid = session.id.clone();
    let answerer = tokio::spawn(async move {
        let mut answered = 0;
        loop {
            let m = good.recv().await;
            match m["type"].as_str() {
                Some("tool.call") => {
                    let n = m["args"]["n"].clone();
                    good.send(json!({"type": "tool.result", "id": m["id"], "data": n}))
                        .await;
                    answered += 1;
                }
                Some("error") => panic!("the good provider got an error: {m}"),
                _ => {}
            }
            if answered == 40 {
                return good;
            }
        }
    });

    // Calls run while the bad provider floods garbage and oversized frames.
    let mut pending = Vec::new();
    for n in 0..40 {
        pending.push((
            n,
            host.start_invoke(&sid, "work", json!({"n": n})).unwrap().1,
        ));
        match n % 4 {
            0 => bad.send_raw("{{{ garbage").await,
            1 => bad.send_raw(push_of_len(3 * MB)).await,
            2 => bad.send(json!({"type": "what.is.this"})).await,
            _ => {
                bad.send(json!({"type": "tools.update", "tools": [tool("work")]}))
                    .await
            }
        }
    }
    for (n, rx) in pending {
        let r = result_of(rx).await;
        assert_eq!(r.data, Some(json!(n)), "{r:?}");
    }
    let mut good = answerer.await.unwrap();
    // The bad provider got an error for each of its 40 frames, and still holds only its tool.
    let mut codes = Vec::new();
    for _ in 0..40 {
        codes.push(
            bad.expect("error").await["code"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(
        codes.iter().filter(|c| *c == "TOOL_CONFLICT").count(),
        10,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| *c == "PAYLOAD_TOO_LARGE").count(),
        10
    );
    assert_eq!(codes.iter().filter(|c| *c == "UNKNOWN_TYPE").count(), 10);
    assert_eq!(codes.iter().filter(|c| *c == "INVALID_JSON").count(), 10);

    // Finally it sends a frame over the hard cap and is dropped; the good one is unaffected.
    let _ = bad
        .ws
        .send(Message::text(push_of_len(HARD_FRAME_CAP_BYTES + 1)))
        .await;
    bad.expect_closed().await;
    let (rx, call) = start_call(&host, &mut good, &session.id, "work").await;
    good.send(json!({"type": "tool.result", "id": call["id"], "data": "after"}))
        .await;
    assert_eq!(result_of(rx).await.data, Some(json!("after")));
    let status = host.status().await.unwrap();
    let s = status.sessions.iter().find(|s| s.id == session.id).unwrap();
    assert_eq!(s.tools, ["work"]);
}

//! Tool-call semantics over real sockets: results, errors, ids, timeouts, cancellation,
//! duplicates, disconnects, progress, and the in-process call path.
use tap_testkit::*;

use futures_util::{FutureExt, SinkExt};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;
use tap_client::HostClient;
use tap_gateway::{
    CallError, CallRequest, ProgressSink, MAX_PROGRESS_QUEUED_BYTES_PER_CALL,
    MAX_PROGRESS_QUEUED_PER_CALL,
};
use tap_protocol::host::HostEvent;
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// Invokes `tool` and has `p` receive the `tool.call`; returns the receiver and the call.
async fn start(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
    tool: &str,
) -> (String, oneshot::Receiver<HostEvent>, Value) {
    let (call_id, rx) = host.start_invoke(session, tool, json!({})).unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["tool"], tool);
    assert_eq!(call["sessionId"], session);
    (call_id, rx, call)
}

/// One full call that succeeds with `data`, proving the provider and host still work.
async fn round_trip(host: &HostClient, p: &mut Provider, session: &str, tool: &str) {
    let (_, rx, call) = start(host, p, session, tool).await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "still fine"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!("still fine")), "{r:?}");
    assert_eq!(r.error_code, None);
}

/// Events already received by the host client, without waiting.
fn drain_events(host: &mut HostClient) -> Vec<HostEvent> {
    let mut seen = Vec::new();
    while let Some(Some(e)) = host.next_event().now_or_never() {
        seen.push(e);
    }
    seen
}

#[tokio::test]
async fn a_result_with_data_reaches_the_caller() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let (call_id, rx) = host
        .start_invoke(&s.id, "echo", json!({"text": "hi", "n": 3}))
        .unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["args"], json!({"text": "hi", "n": 3}));
    let data = json!({"echo": "hi", "list": [1, 2, 3], "nested": {"ok": true}});
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.call_id, call_id);
    assert_eq!(r.data, Some(data));
    assert_eq!(r.error, None);
    assert_eq!(r.error_code, None);
}

#[tokio::test]
async fn a_result_without_data_is_a_success_with_null() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("noop")])).await;
    let (_, rx, call) = start(&host, &mut p, &s.id, "noop").await;
    p.send(json!({"type": "tool.result", "id": call["id"]}))
        .await;
    let r = result_of(rx).await;
    // On the wire `"data": null`, which the client's `Option` reads as `None`.
    assert_eq!(r.data.unwrap_or(Value::Null), Value::Null);
    assert_eq!(r.error, None);
    assert_eq!(r.error_code, None);

    // In process the success value is exactly `null`.
    let gateway = gw.handle.gateway().clone();
    let session_id = s.id.clone();
    let task = tokio::spawn(async move {
        gateway
            .call_tool(CallRequest {
                session_id,
                tool: "noop".into(),
                ..Default::default()
            })
            .await
    });
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"]}))
        .await;
    assert_eq!(task.await.unwrap(), Ok(Value::Null));
}

#[tokio::test]
async fn error_and_error_code_pass_through() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("read")])).await;

    let (_, rx, call) = start(&host, &mut p, &s.id, "read").await;
    p.send(json!({"type": "tool.result", "id": call["id"],
                  "error": "no such file: a.txt", "errorCode": "NOT_FOUND"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::NotFound));
    assert_eq!(r.error.as_deref(), Some("no such file: a.txt"));
    assert_eq!(r.data, None);

    // A provider's own code is kept verbatim.
    let (_, rx, call) = start(&host, &mut p, &s.id, "read").await;
    p.send(json!({"type": "tool.result", "id": call["id"],
                  "error": "quota exceeded", "errorCode": "QUOTA"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Other("QUOTA".into())));
    assert_eq!(r.error.as_deref(), Some("quota exceeded"));
}

#[tokio::test]
async fn error_code_alone_uses_the_code_as_message() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("read")])).await;
    let (_, rx, call) = start(&host, &mut p, &s.id, "read").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "errorCode": "NOT_FOUND"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::NotFound));
    assert_eq!(r.error.as_deref(), Some("NOT_FOUND"));
    assert_eq!(r.data, None);
}

#[tokio::test]
async fn error_alone_is_internal() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("read")])).await;
    let (_, rx, call) = start(&host, &mut p, &s.id, "read").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "error": "disk on fire"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Internal));
    assert_eq!(r.error.as_deref(), Some("disk on fire"));
    assert_eq!(r.data, None);
}

#[tokio::test]
async fn call_ids_are_unique_across_calls_and_sessions() {
    const PER_SESSION: usize = 25;
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = host
        .register_session(tap_protocol::host::SessionRegister {
            label: Some("second".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut p1 = gw.bound("one", &s1.id, json!([tool("echo")])).await;
    let mut p2 = gw.bound("two", &s2.id, json!([tool("echo")])).await;

    let mut pending = Vec::new();
    for i in 0..PER_SESSION {
        for s in [&s1.id, &s2.id] {
            let (_, rx) = host
                .start_invoke(s, "echo", json!({"i": i, "s": s}))
                .unwrap();
            pending.push((s.clone(), i, rx));
        }
    }
    let mut ids = HashSet::new();
    for (p, s) in [(&mut p1, &s1.id), (&mut p2, &s2.id)] {
        for _ in 0..PER_SESSION {
            let call = p.expect("tool.call").await;
            assert_eq!(call["sessionId"], *s);
            let id = call["id"].as_str().expect("string id").to_string();
            assert!(ids.insert(id.clone()), "call id {id} used twice");
            // Echo the arguments back so each caller can check it got its own answer.
            p.send(json!({"type": "tool.result", "id": id, "data": call["args"]}))
                .await;
        }
    }
    assert_eq!(ids.len(), 2 * PER_SESSION);
    for (s, i, rx) in pending {
        let r = result_of(rx).await;
        assert_eq!(r.data, Some(json!({"i": i, "s": s})));
    }
}

#[tokio::test]
async fn an_unknown_tool_is_not_found() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let r = host.invoke(&s.id, "nope", json!({})).await.unwrap();
    assert_eq!(r.error_code, Some(ErrorCode::NotFound), "{r:?}");
    assert!(r.error.unwrap().contains("nope"));
    assert_eq!(r.data, None);
}

#[tokio::test]
async fn an_unknown_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let r = host
        .invoke("no-such-session", "echo", json!({}))
        .await
        .unwrap();
    assert_eq!(r.error_code, Some(ErrorCode::InvalidSession), "{r:?}");
    assert_eq!(r.data, None);
}

#[tokio::test]
async fn a_tool_timeout_cancels_the_call_at_the_provider_and_times_out_the_caller() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut slow = tool("slow");
    slow["timeout"] = json!(50);
    let mut p = gw.bound("prov", &s.id, json!([slow])).await;

    let (_, rx, call) = start(&host, &mut p, &s.id, "slow").await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["sessionId"], s.id.as_str());
    assert_eq!(cancel["reason"], "timeout");
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Timeout), "{r:?}");
    assert_eq!(r.data, None);

    // The late answer is ignored: no error to the provider, and the next call works.
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "too late"}))
        .await;
    let (_, rx, call2) = start(&host, &mut p, &s.id, "slow").await;
    assert_ne!(call2["id"], call["id"]);
    p.send(json!({"type": "tool.result", "id": call2["id"], "data": "in time"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!("in time")), "{r:?}");
}

#[tokio::test]
async fn the_default_tool_timeout_comes_from_the_config() {
    let gw = TestGateway::start_with(|c| c.default_tool_timeout = Duration::from_millis(50)).await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;

    // The host is told the timeout the gateway enforces.
    let tools = next_host_event(
        &mut host,
        |e| matches!(e, HostEvent::SessionTools(t) if !t.tools.is_empty()),
    )
    .await;
    let HostEvent::SessionTools(tools) = tools else {
        unreachable!()
    };
    assert_eq!(tools.tools[0].timeout_ms, 50);

    let (_, rx, call) = start(&host, &mut p, &s.id, "slow").await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["reason"], "timeout");
    let r = result_of(rx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Timeout), "{r:?}");
}

#[tokio::test]
async fn a_caller_cancel_reaches_the_provider_and_ends_the_call_cancelled() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("slow")])).await;
    let (call_id, rx, call) = start(&host, &mut p, &s.id, "slow").await;
    host.cancel(&call_id).unwrap();
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["sessionId"], s.id.as_str());
    assert_eq!(cancel["reason"], "cancelled");
    let r = result_of(rx).await;
    assert_eq!(r.call_id, call_id);
    assert_eq!(r.error_code, Some(ErrorCode::Cancelled), "{r:?}");

    // An answer after the cancel is ignored.
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ignored"}))
        .await;
    round_trip(&host, &mut p, &s.id, "slow").await;
}

#[tokio::test]
async fn a_duplicate_result_is_ignored() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let (call_id, rx, call) = start(&host, &mut p, &s.id, "echo").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "first"}))
        .await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "second"}))
        .await;
    p.send(json!({"type": "tool.result", "id": call["id"], "error": "third"}))
        .await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!("first")));

    // The provider got no error for the duplicates (its next message is the next call),
    // and the host never saw a second result for the first call.
    round_trip(&host, &mut p, &s.id, "echo").await;
    for e in drain_events(&mut host) {
        assert!(
            !matches!(&e, HostEvent::ToolResult(r) if r.call_id == call_id),
            "second result reached the host: {e:?}"
        );
    }
}

#[tokio::test]
async fn a_provider_disconnect_fails_its_calls_disconnected_while_others_succeed() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = gw.bound("alpha", &s.id, json!([tool("a")])).await;
    let mut b = gw.bound("beta", &s.id, json!([tool("b")])).await;

    let (_, rx_a1, _) = start(&host, &mut a, &s.id, "a").await;
    let (_, rx_a2, _) = start(&host, &mut a, &s.id, "a").await;
    let (_, rx_b, call_b) = start(&host, &mut b, &s.id, "b").await;

    drop(a);
    for rx in [rx_a1, rx_a2] {
        let r = result_of(rx).await;
        assert_eq!(r.error_code, Some(ErrorCode::Disconnected), "{r:?}");
        assert_eq!(r.data, None);
    }
    b.send(json!({"type": "tool.result", "id": call_b["id"], "data": "b ok"}))
        .await;
    let r = result_of(rx_b).await;
    assert_eq!(r.data, Some(json!("b ok")), "{r:?}");
}

#[tokio::test]
async fn progress_reaches_the_host_before_the_result() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("work")])).await;
    // Several rounds: progress and result arrive in one TCP write, so the gateway sees
    // them together; a race between forwarding the two would lose progress about half
    // the time.
    for round in 0..20 {
        let (call_id, rx, call) = start(&host, &mut p, &s.id, "work").await;
        let message = format!("halfway {round}");
        send_together(
            &mut p,
            &[
                json!({"type": "tool.progress", "id": call["id"], "message": message}),
                json!({"type": "tool.result", "id": call["id"], "data": "done"}),
            ],
        )
        .await;
        let r = result_of(rx).await;
        assert_eq!(r.data, Some(json!("done")));
        // The client reads frames in order, so a progress sent before the result is
        // already queued as an event once the result has arrived.
        let progress: Vec<_> = drain_events(&mut host)
            .into_iter()
            .filter_map(|e| match e {
                HostEvent::ToolProgress(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(progress.len(), 1, "round {round}: {progress:?}");
        assert_eq!(progress[0].call_id, call_id);
        assert_eq!(progress[0].message, message);
    }
}

/// Writes several frames and flushes once, so they reach the gateway together.
async fn send_together(p: &mut Provider, frames: &[Value]) {
    for f in frames {
        p.ws.feed(Message::text(f.to_string())).await.unwrap();
    }
    p.ws.flush().await.unwrap();
}

#[tokio::test]
async fn the_in_process_call_path_has_the_same_semantics() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    let gateway = gw.handle.gateway().clone();
    let call = |tool: &str, cancel: CancellationToken, progress| {
        let gateway = gateway.clone();
        let req = CallRequest {
            session_id: s.id.clone(),
            tool: tool.to_string(),
            args: json!({"x": 1}),
            cancel,
            progress,
            traceparent: None,
            ..Default::default()
        };
        tokio::spawn(async move { gateway.call_tool(req).await })
    };

    // Success, with progress.
    let (progress_tx, mut progress_rx) = ProgressSink::channel();
    let task = call("echo", CancellationToken::new(), Some(progress_tx));
    let c = p.expect("tool.call").await;
    assert_eq!(c["args"], json!({"x": 1}));
    p.send(json!({"type": "tool.progress", "id": c["id"], "message": "working"}))
        .await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": {"y": 2}}))
        .await;
    assert_eq!(task.await.unwrap(), Ok(json!({"y": 2})));
    assert_eq!(progress_rx.recv().await.as_deref(), Some("working"));

    // A provider error.
    let task = call("echo", CancellationToken::new(), None);
    let c = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "errorCode": "NOT_FOUND"}))
        .await;
    assert_eq!(
        task.await.unwrap(),
        Err(CallError::new(ErrorCode::NotFound, "NOT_FOUND"))
    );

    // Unknown tool and unknown session.
    let err = call("nope", CancellationToken::new(), None)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    let err = gateway
        .call_tool(CallRequest {
            session_id: "ghost".into(),
            tool: "echo".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidSession);

    // Cancellation by the caller.
    let cancel = CancellationToken::new();
    let task = call("echo", cancel.clone(), None);
    let c = p.expect("tool.call").await;
    cancel.cancel();
    let tc = p.expect("tool.cancel").await;
    assert_eq!(tc["id"], c["id"]);
    assert_eq!(tc["reason"], "cancelled");
    assert_eq!(task.await.unwrap().unwrap_err().code, ErrorCode::Cancelled);
}

/// A provider that sends progress as fast as its socket goes, to a caller that takes none:
/// the gateway keeps the oldest messages up to [`MAX_PROGRESS_QUEUED_PER_CALL`] (or
/// [`MAX_PROGRESS_QUEUED_BYTES_PER_CALL`] for big ones), counts the rest as dropped, and the
/// result still comes.
#[tokio::test]
async fn progress_flooding_a_caller_that_does_not_take_it_is_bounded_and_counted() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = gw.bound("prov", &s.id, json!([tool("echo")])).await;
    // Many small messages, then a few of 1 MiB each.
    let small = MAX_PROGRESS_QUEUED_PER_CALL + 500;
    let big = "x".repeat(1024 * 1024);
    for (count, message) in [(small, None), (10, Some(big.as_str()))] {
        let gateway = gw.handle.gateway().clone();
        let (sink, mut progress_rx) = ProgressSink::channel();
        let counted = sink.clone();
        let req = CallRequest {
            session_id: s.id.clone(),
            tool: "echo".into(),
            progress: Some(sink),
            ..Default::default()
        };
        let task = tokio::spawn(async move { gateway.call_tool(req).await });
        let c = p.expect("tool.call").await;
        let text = |i: usize| message.map_or_else(|| format!("p{i}"), str::to_string);
        let mut frames: Vec<Value> = (0..count)
            .map(|i| json!({"type": "tool.progress", "id": c["id"], "message": text(i)}))
            .collect();
        frames.push(json!({"type": "tool.result", "id": c["id"], "data": "done"}));
        send_together(&mut p, &frames).await;
        assert_eq!(task.await.unwrap(), Ok(json!("done")));
        let mut kept = Vec::new();
        while let Some(m) = progress_rx.try_recv() {
            kept.push(m);
        }
        let room = match message {
            None => MAX_PROGRESS_QUEUED_PER_CALL,
            Some(m) => MAX_PROGRESS_QUEUED_BYTES_PER_CALL / m.len(),
        };
        let oldest: Vec<String> = (0..room).map(text).collect();
        assert_eq!(kept, oldest, "the oldest messages, in order");
        assert_eq!(counted.dropped(), (count - room) as u64);
    }
    // The provider's connection is fine: the next call works.
    let gateway = gw.handle.gateway().clone();
    let session = s.id.clone();
    let next = tokio::spawn(async move {
        gateway
            .call_tool(CallRequest {
                session_id: session,
                tool: "echo".into(),
                ..Default::default()
            })
            .await
    });
    let c = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": c["id"], "data": 2}))
        .await;
    assert_eq!(next.await.unwrap(), Ok(json!(2)));
}

//! Tool concurrency limits over real sockets: `hello.concurrency {max, scope}`, the FIFO
//! queue of at most 10, `RATE_LIMITED` beyond it, and queued calls that time out or are
//! cancelled without the provider ever seeing them.
use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_gateway::{CallError, CallRequest};
use tap_protocol::ErrorCode;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

type Pending = JoinHandle<Result<Value, CallError>>;

async fn bind(gw: &TestGateway, hello: Value) -> Provider {
    let (mut p, _) = gw.authed().await;
    let mut h = json!({"type": "hello", "protocolVersion": 2});
    for (k, v) in hello.as_object().unwrap() {
        h[k] = v.clone();
    }
    p.send(h).await;
    p.expect("hello.ack").await;
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    p
}

/// Starts a call in-process and lets it run until it waits (sent, or queued).
async fn call_with(
    gw: &TestGateway,
    session: &str,
    tool: &str,
    n: u64,
    cancel: CancellationToken,
) -> Pending {
    let gateway = gw.handle.gateway().clone();
    let req = CallRequest {
        session_id: session.to_string(),
        tool: tool.to_string(),
        args: json!({"n": n}),
        cancel,
        ..Default::default()
    };
    let task = tokio::spawn(async move { gateway.call_tool(req).await });
    // Current-thread runtime: a few yields run the new task up to its first wait, so calls
    // join the queue in the order they were started.
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    task
}

async fn call(gw: &TestGateway, session: &str, tool: &str, n: u64) -> Pending {
    call_with(gw, session, tool, n, CancellationToken::new()).await
}

async fn answer(p: &mut Provider, call: &Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": call["args"]["n"]}))
        .await;
}

/// The provider receives nothing more for a while (a queued call stays queued).
async fn quiet(p: &mut Provider) {
    tokio::select! {
        v = p.recv() => panic!("expected nothing, got {v}"),
        _ = tokio::time::sleep(Duration::from_millis(200)) => {}
    }
}

fn timed(name: &str, ms: u64) -> Value {
    let mut t = tool(name);
    t["timeout"] = json!(ms);
    t
}

#[tokio::test]
async fn max_must_be_at_least_one() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "c", "protocolVersion": 2, "session": s.id,
                  "concurrency": {"max": 0, "scope": "instance"}}),
    )
    .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "hello");
}

#[tokio::test]
async fn instance_limit_queues_in_order_and_dispatches_as_results_arrive() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "one", "session": s.id, "tools": [tool("a"), tool("b")],
                                  "concurrency": {"max": 1, "scope": "instance"}}),
    )
    .await;
    let c1 = call(&gw, &s.id, "a", 1).await;
    let c2 = call(&gw, &s.id, "b", 2).await;
    let c3 = call(&gw, &s.id, "a", 3).await;
    let first = p.expect("tool.call").await;
    assert_eq!(first["args"]["n"], 1);
    quiet(&mut p).await;
    answer(&mut p, &first).await;
    assert_eq!(c1.await.unwrap().unwrap(), json!(1));
    let second = p.expect("tool.call").await;
    assert_eq!(second["args"]["n"], 2, "FIFO: {second}");
    assert_eq!(second["tool"], "b");
    quiet(&mut p).await;
    answer(&mut p, &second).await;
    assert_eq!(c2.await.unwrap().unwrap(), json!(2));
    let third = p.expect("tool.call").await;
    assert_eq!(third["args"]["n"], 3);
    answer(&mut p, &third).await;
    assert_eq!(c3.await.unwrap().unwrap(), json!(3));
}

#[tokio::test]
async fn more_than_ten_queued_calls_fail_rate_limited_at_once() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "q", "session": s.id, "tools": [tool("a")],
                                  "concurrency": {"max": 2}}),
    )
    .await;
    let mut pending = Vec::new();
    for n in 0..12 {
        pending.push(call(&gw, &s.id, "a", n).await);
    }
    // 2 in flight + 10 queued: the 13th is refused without waiting.
    let over = call(&gw, &s.id, "a", 99).await;
    let err = tokio::time::timeout(PATIENCE, over)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::RateLimited);

    let mut seen = Vec::new();
    for _ in 0..12 {
        let c = p.expect("tool.call").await;
        seen.push(c["args"]["n"].as_u64().unwrap());
        answer(&mut p, &c).await;
    }
    assert_eq!(seen, (0..12).collect::<Vec<_>>(), "dispatched in order");
    for (n, c) in pending.into_iter().enumerate() {
        assert_eq!(c.await.unwrap().unwrap(), json!(n));
    }
    quiet(&mut p).await;
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_times_out_and_is_never_sent() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "slow", "session": s.id,
                                  "tools": [timed("long", 60_000), timed("short", 1_000)],
                                  "concurrency": {"max": 1, "scope": "instance"}}),
    )
    .await;
    let busy = call(&gw, &s.id, "long", 1).await;
    let first = p.expect("tool.call").await;
    let queued = call(&gw, &s.id, "short", 2).await;
    let err = queued.await.unwrap().unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    answer(&mut p, &first).await;
    assert_eq!(busy.await.unwrap().unwrap(), json!(1));
    // The next thing the provider sees is a new call, not the timed-out one (nor a cancel).
    let next = call(&gw, &s.id, "long", 3).await;
    let c = p.expect("tool.call").await;
    assert_eq!(c["args"]["n"], 3, "{c}");
    answer(&mut p, &c).await;
    assert_eq!(next.await.unwrap().unwrap(), json!(3));
}

#[tokio::test]
async fn a_queued_call_cancelled_by_the_caller_is_never_sent() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "cx", "session": s.id, "tools": [tool("a")],
                                  "concurrency": {"max": 1}}),
    )
    .await;
    let busy = call(&gw, &s.id, "a", 1).await;
    let first = p.expect("tool.call").await;
    let cancel = CancellationToken::new();
    let queued = call_with(&gw, &s.id, "a", 2, cancel.clone()).await;
    let after = call(&gw, &s.id, "a", 3).await;
    cancel.cancel();
    let err = queued.await.unwrap().unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    answer(&mut p, &first).await;
    assert_eq!(busy.await.unwrap().unwrap(), json!(1));
    let c = p.expect("tool.call").await;
    assert_eq!(c["args"]["n"], 3, "the cancelled call was skipped: {c}");
    answer(&mut p, &c).await;
    assert_eq!(after.await.unwrap().unwrap(), json!(3));
}

#[tokio::test]
async fn provider_scope_counts_every_instance_of_the_name() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let limit = json!({"max": 1, "scope": "provider"});
    let mut a = bind(
        &gw,
        json!({"name": "tabs", "instance": "a", "session": s.id,
                                  "tools": [tool("ta")], "concurrency": limit}),
    )
    .await;
    let mut b = bind(
        &gw,
        json!({"name": "tabs", "instance": "b", "session": s.id,
                                  "tools": [tool("tb")], "concurrency": limit}),
    )
    .await;
    let ca = call(&gw, &s.id, "ta", 1).await;
    let cb = call(&gw, &s.id, "tb", 2).await;
    let first = a.expect("tool.call").await;
    quiet(&mut b).await;
    answer(&mut a, &first).await;
    assert_eq!(ca.await.unwrap().unwrap(), json!(1));
    let second = b.expect("tool.call").await;
    answer(&mut b, &second).await;
    assert_eq!(cb.await.unwrap().unwrap(), json!(2));
}

#[tokio::test]
async fn instance_scope_does_not_limit_other_instances() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let limit = json!({"max": 1, "scope": "instance"});
    let mut a = bind(
        &gw,
        json!({"name": "tabs", "instance": "a", "session": s.id,
                                  "tools": [tool("ta")], "concurrency": limit}),
    )
    .await;
    let mut b = bind(
        &gw,
        json!({"name": "tabs", "instance": "b", "session": s.id,
                                  "tools": [tool("tb")], "concurrency": limit}),
    )
    .await;
    let ca = call(&gw, &s.id, "ta", 1).await;
    let cb = call(&gw, &s.id, "tb", 2).await;
    let first = a.expect("tool.call").await;
    let second = b.expect("tool.call").await;
    answer(&mut b, &second).await;
    answer(&mut a, &first).await;
    assert_eq!(ca.await.unwrap().unwrap(), json!(1));
    assert_eq!(cb.await.unwrap().unwrap(), json!(2));
}

#[tokio::test]
async fn tool_scope_limits_each_tool_separately() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "pt", "session": s.id, "tools": [tool("x"), tool("y")],
                                  "concurrency": {"max": 1, "scope": "tool"}}),
    )
    .await;
    let x1 = call(&gw, &s.id, "x", 1).await;
    let y2 = call(&gw, &s.id, "y", 2).await;
    let x3 = call(&gw, &s.id, "x", 3).await;
    let a = p.expect("tool.call").await;
    let b = p.expect("tool.call").await;
    assert_eq!(
        (a["args"]["n"].clone(), b["args"]["n"].clone()),
        (json!(1), json!(2))
    );
    quiet(&mut p).await;
    answer(&mut p, &b).await;
    assert_eq!(y2.await.unwrap().unwrap(), json!(2));
    quiet(&mut p).await;
    answer(&mut p, &a).await;
    assert_eq!(x1.await.unwrap().unwrap(), json!(1));
    let c = p.expect("tool.call").await;
    assert_eq!(c["args"]["n"], 3);
    answer(&mut p, &c).await;
    assert_eq!(x3.await.unwrap().unwrap(), json!(3));
}

#[tokio::test]
async fn without_a_limit_calls_are_not_queued() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bind(
        &gw,
        json!({"name": "free", "session": s.id, "tools": [tool("a")]}),
    )
    .await;
    let mut pending = Vec::new();
    for n in 0..15 {
        pending.push(call(&gw, &s.id, "a", n).await);
    }
    let mut calls = Vec::new();
    for _ in 0..15 {
        calls.push(p.expect("tool.call").await);
    }
    for c in &calls {
        answer(&mut p, c).await;
    }
    for (n, c) in pending.into_iter().enumerate() {
        assert_eq!(c.await.unwrap().unwrap(), json!(n));
    }
}

//! Spec section "Tool concurrency" (Protocol rules): `hello.concurrency {max, scope}`,
//! calls beyond `max` queued and dispatched in order as results arrive, `RATE_LIMITED`
//! when the queue exceeds 10. Spec decision I5: 10 waiting calls allowed, the 11th fails;
//! `max: 0` refused; queued calls keep their timeout and cancel and never reach the
//! provider; scope `provider` counts every connected instance of the name.

use crate::common::*;
use tap_protocol::limits::MAX_QUEUED_CALLS;
use tokio::sync::oneshot;

/// Starts a call with `{"n": n}` and waits until the gateway has taken it (a status
/// round trip on the same host connection).
async fn start(
    host: &HostClient,
    session: &str,
    tool: &str,
    n: u64,
) -> oneshot::Receiver<HostEvent> {
    let rx = invoke(host, session, tool, json!({ "n": n }));
    host.status().await.unwrap();
    rx
}

async fn answer_n(p: &mut Provider, call: &Value) {
    answer(p, call, call["args"]["n"].clone()).await;
}

fn limited(name: &str, instance: &str, max: u32, scope: &str, tools: Value) -> Value {
    json!({"instance": instance, "tools": tools, "concurrency": {"max": max, "scope": scope}, "name": name})
}

#[tokio::test]
async fn without_a_limit_calls_are_not_queued() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("t")])).await;
    let mut rxs = Vec::new();
    for n in 0..(MAX_QUEUED_CALLS as u64 + 5) {
        rxs.push(start(&host, &s.id, "t", n).await);
    }
    let mut calls = Vec::new();
    for _ in 0..rxs.len() {
        calls.push(p.expect("tool.call").await);
    }
    for c in &calls {
        answer_n(&mut p, c).await;
    }
    for (n, rx) in rxs.into_iter().enumerate() {
        assert_eq!(result_of(rx).await.data, Some(json!(n)));
    }
}

#[tokio::test]
async fn calls_beyond_max_are_queued_and_dispatched_in_order_as_results_arrive() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "i", 1, "instance", json!([tool("a"), tool("b")])),
    )
    .await;
    let r1 = start(&host, &s.id, "a", 1).await;
    let r2 = start(&host, &s.id, "b", 2).await;
    let r3 = start(&host, &s.id, "a", 3).await;
    for (n, rx) in [(1, r1), (2, r2), (3, r3)] {
        let call = p.expect("tool.call").await;
        assert_eq!(call["args"]["n"], n, "FIFO: {call}");
        fence(&mut p).await; // the next call is still queued
        answer_n(&mut p, &call).await;
        assert_eq!(result_of(rx).await.data, Some(json!(n)));
    }
}

#[tokio::test]
async fn instance_scope_does_not_limit_other_instances() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut one, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "one", 1, "instance", json!([tool("a")])),
    )
    .await;
    let (mut two, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "two", 1, "instance", json!([tool("b")])),
    )
    .await;
    let ra = start(&host, &s.id, "a", 1).await;
    let rb = start(&host, &s.id, "b", 2).await;
    let ca = one.expect("tool.call").await;
    let cb = two.expect("tool.call").await;
    answer_n(&mut two, &cb).await;
    answer_n(&mut one, &ca).await;
    assert_eq!(result_of(ra).await.data, Some(json!(1)));
    assert_eq!(result_of(rb).await.data, Some(json!(2)));
}

#[tokio::test]
async fn provider_scope_counts_every_instance_of_the_name() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut one, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "one", 1, "provider", json!([tool("a")])),
    )
    .await;
    let (mut two, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "two", 1, "provider", json!([tool("b")])),
    )
    .await;
    let ra = start(&host, &s.id, "a", 1).await;
    let rb = start(&host, &s.id, "b", 2).await;
    let ca = one.expect("tool.call").await;
    fence(&mut two).await; // b waits for a's slot
    answer_n(&mut one, &ca).await;
    assert_eq!(result_of(ra).await.data, Some(json!(1)));
    let cb = two.expect("tool.call").await;
    answer_n(&mut two, &cb).await;
    assert_eq!(result_of(rb).await.data, Some(json!(2)));
}

#[tokio::test]
async fn tool_scope_limits_each_tool_separately() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "i", 1, "tool", json!([tool("a"), tool("b")])),
    )
    .await;
    let ra1 = start(&host, &s.id, "a", 1).await;
    let ra2 = start(&host, &s.id, "a", 2).await;
    let rb = start(&host, &s.id, "b", 3).await;
    let first = p.expect("tool.call").await;
    let second = p.expect("tool.call").await;
    assert_eq!(
        (first["args"]["n"].as_u64(), second["args"]["n"].as_u64()),
        (Some(1), Some(3))
    );
    fence(&mut p).await; // a#2 waits for a#1
    answer_n(&mut p, &second).await;
    assert_eq!(result_of(rb).await.data, Some(json!(3)));
    answer_n(&mut p, &first).await;
    assert_eq!(result_of(ra1).await.data, Some(json!(1)));
    let third = p.expect("tool.call").await;
    assert_eq!(third["args"]["n"], 2);
    answer_n(&mut p, &third).await;
    assert_eq!(result_of(ra2).await.data, Some(json!(2)));
}

#[tokio::test]
async fn a_call_beyond_10_queued_fails_rate_limited_at_once() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "i", 1, "instance", json!([tool("a")])),
    )
    .await;
    let mut rxs = Vec::new();
    for n in 0..=MAX_QUEUED_CALLS as u64 {
        rxs.push(start(&host, &s.id, "a", n).await);
    }
    // 1 in flight + 10 waiting: the next one is refused without waiting.
    let over = invoke_unanswered(&host, &s.id, "a").await;
    assert_eq!(code(&over), Some("RATE_LIMITED"), "{over:?}");
    for (n, rx) in rxs.into_iter().enumerate() {
        let call = p.expect("tool.call").await;
        assert_eq!(call["args"]["n"], n as u64);
        answer_n(&mut p, &call).await;
        assert_eq!(result_of(rx).await.data, Some(json!(n)));
    }
}

#[tokio::test]
async fn max_zero_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    hello_refused(
        &mut p,
        hello("p", &s.id, json!({"concurrency": {"max": 0}})),
        "INVALID_JSON",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_keeps_its_timeout_and_never_reaches_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        limited(
            "p",
            "i",
            1,
            "instance",
            json!([timed_tool("slow", 60_000), timed_tool("quick", 1_000)]),
        ),
    )
    .await;
    let r1 = start(&host, &s.id, "slow", 1).await;
    let first = p.expect("tool.call").await;
    let r2 = start(&host, &s.id, "quick", 2).await;
    let timed_out = result_of(r2).await;
    assert_eq!(code(&timed_out), Some("TIMEOUT"), "{timed_out:?}");
    fence(&mut p).await; // no tool.call, no tool.cancel for the queued call
    answer_n(&mut p, &first).await;
    assert_eq!(result_of(r1).await.data, Some(json!(1)));
    fence(&mut p).await;
}

#[tokio::test]
async fn a_queued_call_cancelled_by_its_caller_never_reaches_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        limited("p", "i", 1, "instance", json!([tool("a")])),
    )
    .await;
    let r1 = start(&host, &s.id, "a", 1).await;
    let first = p.expect("tool.call").await;
    let (queued, r2) = host.start_invoke(&s.id, "a", json!({"n": 2})).unwrap();
    host.status().await.unwrap();
    host.cancel(&queued).unwrap();
    assert_eq!(code(&result_of(r2).await), Some("CANCELLED"));
    answer_n(&mut p, &first).await;
    assert_eq!(result_of(r1).await.data, Some(json!(1)));
    fence(&mut p).await;
}

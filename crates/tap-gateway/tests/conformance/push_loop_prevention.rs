//! Spec section "Push loop prevention" (Protocol rules): budgets per (provider, session) —
//! 10 pushes a second, no second `inject` until the session is idle, a pause after 3
//! inject→response→inject cycles. Spec decisions S1–S4: `keep` is not budgeted; refused
//! pushes are neither stored nor delivered; refused, not queued; the pause lifts on a user
//! message; a `hello` resets the budgets.

use crate::common::*;
use tap_protocol::limits::MAX_PUSHES_PER_SECOND;

fn push(level: &str, event: &str) -> Value {
    json!({"type": "push", "stream": "s", "level": level, "event": event})
}

/// A provider subscribed to `user.message`, so the test knows when the host's report
/// arrived.
async fn injector(gw: &TestGateway, name: &str, session: &str) -> Provider {
    bind(gw, name, session, json!({"subscribe": ["user.message"]}))
        .await
        .0
}

/// One turn reported by the host (busy, then idle); returns once the provider heard idle.
async fn turn(host: &HostClient, p: &mut Provider, session: &str) {
    host.set_state(session, BusyState::Busy).unwrap();
    host.set_state(session, BusyState::Idle).unwrap();
    let idle = p.expect("session.lifecycle").await;
    assert_eq!(idle["state"], "idle", "{idle}");
}

#[tokio::test(start_paused = true)]
async fn more_than_10_pushes_a_second_are_rate_limited() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for i in 0..MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("e{i}"))).await;
    }
    p.send(push("surface", "11th")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "push", "{e}");
    assert_eq!(e["sessionId"], s.id.as_str(), "{e}");
    for i in 0..MAX_PUSHES_PER_SECOND {
        assert_eq!(next_delivery(&mut host).await.event, format!("e{i}"));
    }
}

#[tokio::test(start_paused = true)]
async fn a_rate_limited_push_is_neither_stored_nor_delivered() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for i in 0..=MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("e{i}"))).await;
    }
    p.expect_error("RATE_LIMITED").await;
    let kept = stored(&host, &s.id, "s@p").await;
    assert_eq!(kept.len(), MAX_PUSHES_PER_SECOND as usize);
    assert!(!kept.contains(&format!("e{MAX_PUSHES_PER_SECOND}")));
    tokio::time::sleep(Duration::from_secs(1)).await;
    p.send(push("surface", "later")).await;
    fence(&mut p).await;
    let mut events = Vec::new();
    for _ in 0..=MAX_PUSHES_PER_SECOND {
        events.push(next_delivery(&mut host).await.event);
    }
    assert_eq!(events.last().unwrap(), "later", "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn push_budgets_are_per_provider() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut a = bound(&gw, "a", &s.id, json!([])).await;
    let mut b = bound(&gw, "b", &s.id, json!([])).await;
    for i in 0..=MAX_PUSHES_PER_SECOND {
        a.send(push("surface", &format!("a{i}"))).await;
    }
    a.expect_error("RATE_LIMITED").await;
    b.send(push("surface", "b")).await;
    fence(&mut b).await;
}

#[tokio::test(start_paused = true)]
async fn a_rebind_starts_a_fresh_budget() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([])).await;
    for i in 0..=MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("e{i}"))).await;
    }
    p.expect_error("RATE_LIMITED").await;
    p.send(hello("p", &s2.id, json!({}))).await;
    expect_bound(&mut p, &s2.id).await;
    p.send(push("surface", "fresh")).await;
    fence(&mut p).await;
}

#[tokio::test(start_paused = true)]
async fn keep_pushes_are_not_budgeted() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for i in 0..50 {
        p.send(push("keep", &format!("k{i}"))).await;
    }
    for i in 0..MAX_PUSHES_PER_SECOND {
        p.send(push("surface", &format!("s{i}"))).await;
    }
    fence(&mut p).await;
    assert_eq!(
        stored(&host, &s.id, "s@p").await.len(),
        50 + MAX_PUSHES_PER_SECOND as usize
    );
}

#[tokio::test]
async fn no_second_inject_until_the_session_is_idle() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = injector(&gw, "ci", &s.id).await;
    p.send(push("inject", "first")).await;
    p.send(push("inject", "second")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert!(e["message"].as_str().unwrap().contains("idle"), "{e}");
    assert_eq!(next_delivery(&mut host).await.event, "first");
    assert_eq!(
        stored(&host, &s.id, "s@ci").await,
        ["first"],
        "refused, not queued"
    );
    turn(&host, &mut p, &s.id).await;
    p.send(push("inject", "third")).await;
    let d = next_delivery(&mut host).await;
    assert_eq!((d.event.as_str(), d.level), ("third", PushLevel::Inject));
}

#[tokio::test]
async fn a_pending_inject_holds_back_neither_surface_pushes_nor_other_providers() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = injector(&gw, "ci", &s.id).await;
    let mut other = injector(&gw, "other", &s.id).await;
    p.send(push("inject", "first")).await;
    p.send(push("surface", "fyi")).await;
    other.send(push("inject", "other's")).await;
    fence(&mut p).await;
    fence(&mut other).await;
    let events: Vec<String> = [
        next_delivery(&mut host).await,
        next_delivery(&mut host).await,
        next_delivery(&mut host).await,
    ]
    .into_iter()
    .map(|d| d.event)
    .collect();
    assert_eq!(events, ["first", "fyi", "other's"]);
}

#[tokio::test]
async fn injects_pause_after_3_cycles_until_the_user_speaks() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = injector(&gw, "looper", &s.id).await;
    for i in 0..4 {
        p.send(push("inject", &format!("i{i}"))).await;
        assert_eq!(next_delivery(&mut host).await.event, format!("i{i}"));
        turn(&host, &mut p, &s.id).await;
    }
    p.send(push("inject", "paused")).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert!(e["message"].as_str().unwrap().contains("paused"), "{e}");
    // Idle does not lift the pause; the user speaking does.
    turn(&host, &mut p, &s.id).await;
    p.send(push("inject", "still paused")).await;
    p.expect_error("RATE_LIMITED").await;
    host.session_event(&s.id, "user.message", json!({"content": "go on"}))
        .unwrap();
    p.expect("session.event").await;
    p.send(push("inject", "resumed")).await;
    assert_eq!(next_delivery(&mut host).await.event, "resumed");
}

#[tokio::test]
async fn a_filter_outcome_of_inject_is_budgeted_as_an_inject() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut p = injector(&gw, "f", &s.id).await;
    p.send(
        json!({"type": "filter.set", "requestId": "r", "stream": "s",
                  "rules": [{"match": "urgent", "outcome": "inject"}]}),
    )
    .await;
    p.expect("ack").await;
    p.send(push("keep", "urgent 1")).await;
    p.send(push("keep", "urgent 2")).await;
    p.expect_error("RATE_LIMITED").await;
    let d = next_delivery(&mut host).await;
    assert_eq!((d.event.as_str(), d.level), ("urgent 1", PushLevel::Inject));
}

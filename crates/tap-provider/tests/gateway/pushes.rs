//! Pushes: awaited, each gets its own verdict (a `RATE_LIMITED` refusal belongs to the push
//! over the budget, not to its neighbours); a refusal nobody awaits is an event; the
//! provider reads its own streams back.

use crate::common::*;
use tap_protocol::limits::MAX_PUSHES_PER_SECOND;
use tap_provider::{Event, PushLevel, PushOptions};
use tap_testkit::{stored, TestGateway};

/// Paused time: the budget's one-second window does not pass while the test runs, however
/// slow the machine.
#[tokio::test(start_paused = true)]
async fn each_push_is_answered_and_only_those_over_the_budget_are_refused() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "ci").connect().await.unwrap();
    let opts = || PushOptions::stream("builds");
    // Sent together, answered one by one.
    let pushed: Vec<_> = (0..MAX_PUSHES_PER_SECOND + 2)
        .map(|i| p.push(PushLevel::Surface, format!("build {i}"), opts()))
        .collect();
    let mut verdicts = Vec::new();
    for push in pushed {
        verdicts.push(soon("the verdict", push).await);
    }
    let refused: Vec<usize> = (verdicts.iter().enumerate())
        .filter(|(_, v)| v.is_err())
        .map(|(i, _)| i)
        .collect();
    let limit = MAX_PUSHES_PER_SECOND as usize;
    assert_eq!(refused, [limit, limit + 1], "{verdicts:?}");
    assert!(verdicts[limit].as_ref().unwrap_err().is_rate_limited());
    // `keep` has no budget.
    soon("the verdict", p.push(PushLevel::Keep, "kept", opts()))
        .await
        .unwrap();
    let kept = stored(&host, &session.id, "builds@ci").await;
    assert_eq!(kept.len(), limit + 1, "{kept:?}");
    assert_eq!(kept[0], "kept");
}

#[tokio::test(start_paused = true)]
async fn a_refusal_nobody_awaits_arrives_as_an_event() {
    let gw = TestGateway::start().await;
    let (_host, _session) = gw.host_with_session().await;
    let p = builder(&gw, "ci").connect().await.unwrap();
    let mut events = p.events();
    for i in 0..MAX_PUSHES_PER_SECOND {
        soon(
            "the verdict",
            p.push(PushLevel::Surface, format!("{i}"), PushOptions::default()),
        )
        .await
        .unwrap();
    }
    drop(p.push(PushLevel::Surface, "over", PushOptions::default()));
    let e = next_event(&mut events, |e| matches!(e, Event::Error { .. })).await;
    let Event::Error { code, reply_to, .. } = e else {
        unreachable!()
    };
    assert_eq!(
        (code.as_str(), reply_to.as_deref()),
        ("RATE_LIMITED", Some("push"))
    );
}

#[tokio::test]
async fn the_provider_reads_its_own_streams_newest_first() {
    let gw = TestGateway::start().await;
    let (_host, _session) = gw.host_with_session().await;
    let p = builder(&gw, "log").connect().await.unwrap();
    for text in ["one", "two", "three"] {
        p.push(PushLevel::Keep, text, PushOptions::stream("lines"))
            .await
            .unwrap();
    }
    let h = soon("the history", p.query(&["lines"], Some(2)))
        .await
        .unwrap();
    let texts: Vec<&str> = h["lines"].iter().map(|e| e.event.as_str()).collect();
    assert_eq!(texts, ["three", "two"]);
    let all = soon("the history", p.query(&[], None)).await.unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all["lines@log"].len(), 3);
}

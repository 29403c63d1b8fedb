//! `tap session open` as a session host: it starts no turns, so it reports the session idle
//! after each `inject` it prints, and a provider's next inject is accepted.

use crate::common::{GatewayProcess, SessionOpen};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_inject_is_delivered_after_the_first() {
    let gw = GatewayProcess::start().await;
    let mut session = SessionOpen::open(&gw, &["--label", "x"]).await;
    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    for n in 1..=2 {
        let event = format!("inject {n}");
        p.send(json!({"type": "push", "level": "inject", "stream": "s", "event": event}))
            .await;
        let line = session
            .wait_for(&event, |v| v["type"] == "delivery" || v["type"] == "error")
            .await;
        assert_eq!(line["event"], event.as_str(), "{line}");
        assert_eq!(line["level"], "inject", "{line}");
        // The pacing signal a provider waits for before its next inject.
        let idle = p.expect_next("session.lifecycle").await;
        assert_eq!(idle["state"], "idle", "{idle}");
    }
    // Both in the history (the ledger's writer thread stores them).
    let args = [
        "streams",
        "history",
        "--session",
        &session.id,
        "--stream",
        "s@pusher",
        "--json",
    ];
    crate::common::eventually("both injects in the history", || async {
        let out = gw.run(&args).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        (out.json().as_array().map(Vec::len) == Some(2)).then_some(())
    })
    .await;
}

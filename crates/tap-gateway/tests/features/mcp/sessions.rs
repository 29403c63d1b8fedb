//! Which gateway session an MCP client is: joined by id or label, or registered and ended
//! once its clients have been gone for the resume window; busy while a call runs.

use super::{client, client_with_tool, session_id, wait_listed, MODES};
use serde_json::json;
use std::time::Duration;
use tap_protocol::host::BusyState;
use tap_testkit::{eventually, tool, TestGateway};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_naming_an_existing_session_joins_it_by_label_or_id() {
    let gw = TestGateway::start().await;
    let (_host, info) = gw.host_with_session().await; // labelled "test"
    let mut p = gw.bound("prov", &info.id, json!([tool("hi")])).await;
    for name in ["test", info.id.as_str()] {
        let mut c = client(&gw, name, "legacy").await;
        wait_listed(&mut c, "hi").await;
        c.start_call("1", "hi", json!({}), false).await;
        let call = p.expect_next("tool.call").await;
        assert_eq!(call["sessionId"], info.id.as_str());
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
            .await;
        c.outcome("1").await;
    }
    assert_eq!(
        gw.handle.gateway().status().sessions.len(),
        1,
        "no session registered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_session_ends_after_its_last_client_has_been_gone_for_the_window() {
    for mode in MODES {
        let gw =
            TestGateway::start_with(|c| c.host_resume_grace = Duration::from_millis(300)).await;
        let mut c = client(&gw, "short-lived", mode).await;
        let session = session_id(&gw, "short-lived").await;
        // The client closes its MCP session (the initialize generation: `DELETE`).
        c.send(json!({"op": "exit"})).await;
        assert!(c.proc.wait().await.success(), "{mode}: {}", c.proc.log());
        eventually("the session ended", || async {
            let gone = !gw
                .handle
                .gateway()
                .status()
                .sessions
                .iter()
                .any(|s| s.id == session);
            gone.then_some(())
        })
        .await;
        // Naming it again registers a new one.
        let _c = client(&gw, "short-lived", mode).await;
        assert_ne!(session_id(&gw, "short-lived").await, session);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_is_busy_while_a_call_runs() {
    let gw = TestGateway::start().await;
    let (mut c, mut p, session) = client_with_tool(&gw, "2026-07-28", "prov", "slow").await;
    let busy = |want: BusyState| {
        let gw = &gw;
        let session = session.clone();
        async move {
            eventually(&format!("session {want:?}"), || async {
                let s = gw.handle.gateway().status().sessions;
                s.iter()
                    .any(|s| s.id == session && s.state == want)
                    .then_some(())
            })
            .await
        }
    };
    busy(BusyState::Idle).await;
    c.start_call("1", "slow", json!({}), false).await;
    let call = p.expect_next("tool.call").await;
    busy(BusyState::Busy).await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "done"}))
        .await;
    c.outcome("1").await;
    // Providers hear the move to idle, as from any session host.
    let idle = p.expect_next("session.lifecycle").await;
    assert_eq!(idle["state"], "idle", "{idle}");
    busy(BusyState::Idle).await;
}

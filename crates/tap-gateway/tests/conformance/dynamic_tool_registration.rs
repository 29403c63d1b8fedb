//! Core Profile section "Dynamic tool registration": the session's complete tool set is
//! re-published whenever a provider connects, sends `tools.update` or disconnects, batched
//! over a 200 ms window (spec decision 29 adds a 1 s maximum wait); one `hello` is one
//! update however many tools it carries. Toward the session host this is `session.tools`
//! with increasing revisions (docs/session-host-protocol.md).

use crate::common::*;
use tap_protocol::limits::TOOLSET_DEBOUNCE_MAX_WAIT;

fn names(t: &SessionTools) -> Vec<&str> {
    t.tools.iter().map(|t| t.name.as_str()).collect()
}

async fn next_tools(host: &mut HostClient) -> SessionTools {
    match next_host_event(host, |e| matches!(e, HostEvent::SessionTools(_))).await {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn providers_connecting_within_the_window_are_published_once() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    assert_eq!(next_tools(&mut host).await.revision, 0);
    // Five providers authenticate, then all say hello at once, two tools each.
    let mut providers = Vec::new();
    for _ in 0..5 {
        providers.push(authed(&gw).await.0);
    }
    for (i, p) in providers.iter_mut().enumerate() {
        p.send(hello(
            &format!("p{i}"),
            &s.id,
            json!({"tools": [tool(&format!("t{i}")), tool(&format!("u{i}"))]}),
        ))
        .await;
    }
    for p in &mut providers {
        expect_bound(p, &s.id).await;
    }
    let t = next_tools(&mut host).await;
    assert_eq!(t.revision, 1, "one publication for five binds");
    assert_eq!(t.tools.len(), 10);
    // Exactly one: the next change is revision 2.
    providers[0]
        .send(json!({"type": "tools.update", "tools": [tool("t0")]}))
        .await;
    let next = next_tools(&mut host).await;
    assert_eq!((next.revision, next.tools.len()), (2, 9));
}

#[tokio::test]
async fn tools_update_and_disconnect_republish_the_complete_set() {
    let gw = TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await;
    let (mut host, s) = gw.host_with_session().await;
    let _stay = bound(&gw, "stay", &s.id, json!([tool("a")])).await;
    let mut p = bound(&gw, "p", &s.id, json!([tool("b")])).await;
    let t = tools_published(&mut host, &s.id, &["a", "b"]).await;
    p.send(json!({"type": "tools.update", "tools": [tool("c")]}))
        .await;
    let t2 = tools_published(&mut host, &s.id, &["a", "c"]).await;
    assert!(t2.revision > t.revision);
    drop(p);
    let t3 = tools_published(&mut host, &s.id, &["a"]).await;
    assert!(t3.revision > t2.revision);
    assert_eq!(names(&t3), ["a"]);
    assert_eq!(t3.tools[0].provider, "stay");
}

#[tokio::test(start_paused = true)]
async fn a_steady_trickle_of_changes_still_publishes_within_the_maximum_wait() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    assert_eq!(next_tools(&mut host).await.revision, 0);
    let mut p = bound(&gw, "p", &s.id, json!([tool("t0")])).await;
    let started = tokio::time::Instant::now();
    // A change every 150 ms, each inside the 200 ms window of the one before.
    let mut i = 1;
    let t = loop {
        tokio::select! {
            t = next_tools(&mut host) => break t,
            _ = tokio::time::sleep(Duration::from_millis(150)) => {
                p.send(json!({"type": "tools.update", "tools": [tool(&format!("t{i}"))]})).await;
                i += 1;
            }
        }
    };
    assert_eq!(t.revision, 1);
    assert!(
        started.elapsed() <= TOOLSET_DEBOUNCE_MAX_WAIT + Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
}

//! Tool-set changes reach the session host debounced: a burst becomes one `session.tools`.
use tap_testkit::*;

use serde_json::json;
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, SessionTools};

async fn next_tools(host: &mut HostClient) -> SessionTools {
    match next_host_event(host, |e| matches!(e, HostEvent::SessionTools(_))).await {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

fn names(t: &SessionTools) -> Vec<String> {
    t.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn concurrent_binds_publish_one_tool_set() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let first = next_tools(&mut host).await;
    assert_eq!(first.revision, 0);
    assert_eq!(first.session_id, s.id);
    assert!(first.tools.is_empty());

    // Five providers authenticate first, then all say hello at once.
    let mut providers = Vec::new();
    for _ in 0..5 {
        providers.push(gw.authed().await.0);
    }
    for (i, p) in providers.iter_mut().enumerate() {
        p.send(
            json!({"type": "hello", "name": format!("p{i}"), "protocolVersion": 2,
                      "session": s.id, "tools": [tool(&format!("tool{i}"))]}),
        )
        .await;
    }
    for p in &mut providers {
        p.expect("hello.ack").await;
        p.expect("session.lifecycle").await;
    }

    let burst = next_tools(&mut host).await;
    assert_eq!(burst.revision, 1);
    assert_eq!(burst.session_id, s.id);
    assert_eq!(names(&burst), ["tool0", "tool1", "tool2", "tool3", "tool4"]);
    let p3 = burst.tools.iter().find(|t| t.name == "tool3").unwrap();
    assert_eq!(p3.provider, "p3");
    assert_eq!(p3.description, "test tool tool3");

    // Exactly one publish for the burst: the next change is revision 2.
    providers[0]
        .send(json!({"type": "tools.update", "requestId": "u1",
                     "tools": [tool("tool0"), tool("extra")]}))
        .await;
    let ack = providers[0].expect("ack").await;
    assert_eq!(ack["requestId"], "u1");
    let update = next_tools(&mut host).await;
    assert_eq!(update.revision, 2);
    assert_eq!(
        names(&update),
        ["extra", "tool0", "tool1", "tool2", "tool3", "tool4"]
    );
}

#[tokio::test]
async fn a_provider_disconnect_publishes_a_tool_set_without_its_tools() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let stays = gw
        .bound("stays", &s.id, json!([tool("keep1"), tool("keep2")]))
        .await;
    let leaves = gw.bound("leaves", &s.id, json!([tool("gone")])).await;

    let both = loop {
        let t = next_tools(&mut host).await;
        if t.tools.len() == 3 {
            break t;
        }
    };
    assert_eq!(names(&both), ["gone", "keep1", "keep2"]);

    drop(leaves);
    let after = next_tools(&mut host).await;
    assert_eq!(after.revision, both.revision + 1);
    assert_eq!(names(&after), ["keep1", "keep2"]);
    assert!(after.tools.iter().all(|t| t.provider == "stays"));

    // The gateway agrees: calling the departed tool is NOT_FOUND.
    let r = host.invoke(&s.id, "gone", json!({})).await.unwrap();
    assert_eq!(
        r.error_code,
        Some(tap_protocol::ErrorCode::NotFound),
        "{r:?}"
    );
    drop(stays);
}

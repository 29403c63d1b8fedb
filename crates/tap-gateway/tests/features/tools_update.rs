//! `tools.update`: replacement, deltas, acks, validation, and what the host sees.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, HostToolResult, SessionTools};
use tap_protocol::limits::MAX_TOOLS_PER_PROVIDER;

async fn start() -> TestGateway {
    TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await
}

/// The next `session.tools` for `session` whose tool names are exactly `want` (sorted).
async fn tools_event(host: &mut HostClient, session: &str, want: &[&str]) -> SessionTools {
    let e = next_host_event(host, |e| {
        matches!(e, HostEvent::SessionTools(t)
            if t.session_id == session && t.tools.iter().map(|t| t.name.as_str()).eq(want.iter().copied()))
    })
    .await;
    match e {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

async fn session_tools(host: &HostClient, session: &str) -> Vec<String> {
    let status = host.status().await.unwrap();
    let mut tools = status
        .sessions
        .into_iter()
        .find(|s| s.id == session)
        .expect("session listed")
        .tools;
    tools.sort();
    tools
}

/// Calls `tool` and, if the provider gets it, answers with the tool's name.
async fn call(host: &HostClient, p: &mut Provider, session: &str, tool: &str) -> HostToolResult {
    let (_, rx) = host.start_invoke(session, tool, json!({})).unwrap();
    let rx = async { rx.await.expect("host connection closed") };
    tokio::pin!(rx);
    let event = tokio::select! {
        e = &mut rx => e,
        m = p.recv() => {
            assert_eq!(m["type"], "tool.call", "{m}");
            assert_eq!(m["tool"], tool);
            p.send(json!({"type": "tool.result", "id": m["id"], "data": tool})).await;
            tokio::time::timeout(PATIENCE, rx).await.expect("no result")
        }
    };
    match event {
        HostEvent::ToolResult(r) => r,
        other => panic!("expected tool.result, got {other:?}"),
    }
}

fn ok_from(r: &HostToolResult, tool: &str) {
    assert_eq!(r.error_code, None, "{r:?}");
    assert_eq!(r.data, Some(json!(tool)));
}

fn code(r: &HostToolResult) -> Option<&str> {
    r.error_code.as_ref().map(|c| c.as_str())
}

#[tokio::test]
async fn tools_update_replaces_the_list_and_reaches_the_host() {
    let gw = start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw.bound("upd", &session.id, json!([tool("old")])).await;
    let before = tools_event(&mut host, &session.id, &["old"]).await;
    assert_eq!(before.tools[0].provider, "upd");

    let mut described = tool("new_b");
    described["description"] = json!("second tool");
    described["timeout"] = json!(5000);
    p.send(json!({"type": "tools.update", "requestId": "r1",
                  "tools": [tool("new_a"), described]}))
        .await;
    p.expect("ack").await;
    let after = tools_event(&mut host, &session.id, &["new_a", "new_b"]).await;
    assert!(
        after.revision > before.revision,
        "{} then {}",
        before.revision,
        after.revision
    );
    let b = &after.tools[1];
    assert_eq!(b.description, "second tool");
    assert_eq!(b.timeout_ms, 5000);
    assert_eq!(b.provider, "upd");

    ok_from(&call(&host, &mut p, &session.id, "new_a").await, "new_a");
    let r = call(&host, &mut p, &session.id, "old").await;
    assert_eq!(code(&r), Some("NOT_FOUND"), "{r:?}");
}

#[tokio::test]
async fn tools_update_to_an_empty_list_removes_every_tool() {
    let gw = start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw
        .bound("upd", &session.id, json!([tool("a"), tool("b")]))
        .await;
    tools_event(&mut host, &session.id, &["a", "b"]).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": []}))
        .await;
    p.expect("ack").await;
    tools_event(&mut host, &session.id, &[]).await;
    assert!(session_tools(&host, &session.id).await.is_empty());
}

#[tokio::test]
async fn invalid_tools_update_is_an_error_and_the_old_tools_stay_callable() {
    let gw = start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("upd", &session.id, json!([tool("keep_me")])).await;
    let too_many = Value::Array(
        (0..=MAX_TOOLS_PER_PROVIDER)
            .map(|i| tool(&format!("t{i}")))
            .collect(),
    );
    let cases = [
        (json!([tool("fine"), tool("bad name")]), "INVALID_JSON"),
        (json!([{"name": "p", "parameters": "nope"}]), "INVALID_JSON"),
        (
            json!([{"name": "z", "parameters": {}, "timeout": 0}]),
            "INVALID_JSON",
        ),
        (json!([tool("twice"), tool("twice")]), "TOOL_CONFLICT"),
        (too_many, "PAYLOAD_TOO_LARGE"),
    ];
    for (i, (tools, want)) in cases.into_iter().enumerate() {
        let request_id = format!("bad-{i}");
        p.send(json!({"type": "tools.update", "requestId": request_id, "tools": tools}))
            .await;
        let e = p.expect_error(want).await;
        assert_eq!(e["requestId"], request_id.as_str(), "{e}");
        assert_eq!(e["replyTo"], "tools.update", "{e}");
        assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    }
    assert_eq!(session_tools(&host, &session.id).await, ["keep_me"]);
    ok_from(
        &call(&host, &mut p, &session.id, "keep_me").await,
        "keep_me",
    );
    // Without a requestId the error simply has none.
    p.send(json!({"type": "tools.update", "tools": [tool("a.b")]}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert!(e.get("requestId").is_none(), "{e}");
}

#[tokio::test]
async fn tools_update_with_remove_is_a_delta() {
    let gw = start().await;
    let (mut host, session) = gw.host_with_session().await;
    let mut p = gw
        .bound(
            "delta",
            &session.id,
            json!([tool("a"), tool("b"), tool("c")]),
        )
        .await;
    // A changed definition would be held until accepted (docs/pins.md); this is about
    // the delta.
    let (mut control, _) = Control::authed(&gw).await;
    control
        .ok(
            "pins.setEnabled",
            json!({"provider": "delta", "enabled": false}),
        )
        .await;
    let mut b2 = tool("b");
    b2["description"] = json!("b, version 2");
    p.send(json!({"type": "tools.update", "requestId": "d1",
                  "remove": ["a", "not_there"], "tools": [b2, tool("d")]}))
        .await;
    p.expect("ack").await;
    let t = tools_event(&mut host, &session.id, &["b", "c", "d"]).await;
    assert_eq!(t.tools[0].description, "b, version 2");
    assert_eq!(t.tools[1].description, "test tool c");
    ok_from(&call(&host, &mut p, &session.id, "c").await, "c");
    ok_from(&call(&host, &mut p, &session.id, "d").await, "d");
    assert_eq!(
        code(&call(&host, &mut p, &session.id, "a").await),
        Some("NOT_FOUND")
    );

    // An empty delta changes nothing; an invalid delta is refused as a whole.
    p.send(json!({"type": "tools.update", "requestId": "d2", "remove": []}))
        .await;
    p.expect("ack").await;
    p.send(json!({"type": "tools.update", "requestId": "d3", "remove": ["b"], "tools": [tool("bad!")]}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["requestId"], "d3");
    assert_eq!(session_tools(&host, &session.id).await, ["b", "c", "d"]);
}

#[tokio::test]
async fn tools_update_ack_has_request_id_and_increasing_revision() {
    let gw = start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = host.register_session(Default::default()).await.unwrap();
    let mut p = gw.bound("acker", &s1.id, json!([])).await;
    for (i, id) in ["u1", "u2", "u3"].into_iter().enumerate() {
        p.send(json!({"type": "tools.update", "requestId": id, "tools": [tool(id)]}))
            .await;
        let ack = p.expect("ack").await;
        assert_eq!(ack["requestId"], id, "{ack}");
        assert_eq!(ack["sessionId"], s1.id.as_str(), "{ack}");
        assert_eq!(ack["revision"], i as u64 + 1, "{ack}");
    }
    // A refused update does not count.
    p.send(json!({"type": "tools.update", "requestId": "bad", "tools": [tool("")]}))
        .await;
    p.expect_error("INVALID_JSON").await;
    p.send(json!({"type": "tools.update", "requestId": "u4", "tools": []}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 4);
    // Revisions count per binding: a rebind starts again at 1.
    p.send(json!({"type": "hello", "name": "acker", "protocolVersion": 2, "session": s2.id}))
        .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "tools.update", "requestId": "v1", "tools": [tool("v")]}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["sessionId"], s2.id.as_str());
    assert_eq!(ack["revision"], 1);
}

#[tokio::test]
async fn tools_update_without_request_id_is_applied_without_ack() {
    let gw = start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = gw.bound("quiet", &session.id, json!([])).await;
    p.send(json!({"type": "tools.update", "tools": [tool("silent")]}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "sync"}))
        .await;
    // Nothing between: the next message is the query's answer.
    p.expect("stream.history").await;
    assert_eq!(session_tools(&host, &session.id).await, ["silent"]);
}

#[tokio::test]
async fn tools_update_conflicting_with_another_provider_is_tool_conflict() {
    let gw = start().await;
    let (host, session) = gw.host_with_session().await;
    let _owner = gw.bound("owner", &session.id, json!([tool("taken")])).await;
    let mut p = gw.bound("taker", &session.id, json!([tool("mine")])).await;
    for update in [
        json!({"type": "tools.update", "requestId": "c1", "tools": [tool("mine"), tool("taken")]}),
        json!({"type": "tools.update", "requestId": "c2", "remove": [], "tools": [tool("taken")]}),
    ] {
        p.send(update.clone()).await;
        let e = p.expect_error("TOOL_CONFLICT").await;
        assert_eq!(e["requestId"], update["requestId"], "{e}");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains("owner") && message.contains("taken"),
            "{e}"
        );
    }
    assert_eq!(session_tools(&host, &session.id).await, ["mine", "taken"]);
    ok_from(&call(&host, &mut p, &session.id, "mine").await, "mine");
}

#[tokio::test]
async fn tools_update_for_another_session_is_invalid_session() {
    let gw = start().await;
    let (host, session) = gw.host_with_session().await;
    let other = host.register_session(Default::default()).await.unwrap();
    let mut p = gw.bound("p", &session.id, json!([tool("t")])).await;
    for sid in [other.id.as_str(), "no-such-session"] {
        p.send(
            json!({"type": "tools.update", "requestId": "x", "sessionId": sid,
                      "tools": [tool("u")]}),
        )
        .await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["requestId"], "x", "{e}");
        assert_eq!(e["replyTo"], "tools.update", "{e}");
    }
    assert_eq!(session_tools(&host, &session.id).await, ["t"]);
    assert!(session_tools(&host, &other.id).await.is_empty());
    // The right sessionId is accepted.
    p.send(
        json!({"type": "tools.update", "requestId": "y", "sessionId": session.id,
                  "tools": [tool("u")]}),
    )
    .await;
    assert_eq!(p.expect("ack").await["requestId"], "y");
}

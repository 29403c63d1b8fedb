//! `hello`: version, session binding, tool validation, conflicts, rebinding.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::{GatewayStatus, HostEvent, SessionRegister};
use tap_protocol::limits::{MAX_REBINDS_PER_MINUTE, MAX_TOOLS_PER_PROVIDER, MAX_TOOL_NAME_LEN};
use tap_protocol::provider::SessionInfo;

fn hello(name: &str, session: &str, tools: Value) -> Value {
    json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session, "tools": tools})
}

/// Sends `hello` on a fresh authenticated connection and returns the error it gets.
async fn hello_error(gw: &TestGateway, msg: Value, code: &str) -> (Provider, Value) {
    let (mut p, _) = gw.authed().await;
    p.send(msg).await;
    let e = p.expect_error(code).await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    (p, e)
}

async fn expect_bound(p: &mut Provider, session: &str) -> Value {
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started");
    assert_eq!(started["sessionId"], session);
    ack
}

async fn session_tools(host: &HostClient, session: &str) -> Vec<String> {
    let status: GatewayStatus = host.status().await.unwrap();
    let mut tools = status
        .sessions
        .iter()
        .find(|s| s.id == session)
        .unwrap_or_else(|| panic!("no session {session} in {status:?}"))
        .tools
        .clone();
    tools.sort();
    tools
}

async fn second_session(host: &HostClient) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some("second".into()),
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn hello_with_protocol_version_1_is_fatal_unsupported_version() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let mut msg = hello("p", &session.id, json!([tool("t")]));
    msg["protocolVersion"] = json!(1);
    let (mut p, _) = hello_error(&gw, msg, "UNSUPPORTED_VERSION").await;
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "{after:?}");
}

#[tokio::test]
async fn hello_with_protocol_version_3_is_fatal_unsupported_version() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut msg = hello("p", &session.id, json!([tool("t")]));
    msg["protocolVersion"] = json!(3);
    let (mut p, _) = hello_error(&gw, msg, "UNSUPPORTED_VERSION").await;
    let after = p.expect_closed().await;
    assert!(after.is_empty(), "{after:?}");
    assert!(session_tools(&host, &session.id).await.is_empty());
}

#[tokio::test]
async fn hello_with_unknown_session_is_invalid_session_and_a_retry_succeeds() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, e) = hello_error(
        &gw,
        hello("p", "no-such-session", json!([tool("t")])),
        "INVALID_SESSION",
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("no-such-session"),
        "{e}"
    );
    p.send(hello("p", &session.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &session.id).await;
}

#[tokio::test]
async fn hello_without_session_is_invalid_session_and_a_retry_succeeds() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, _) = hello_error(
        &gw,
        json!({"type": "hello", "name": "p", "protocolVersion": 2, "tools": [tool("t")]}),
        "INVALID_SESSION",
    )
    .await;
    p.send(hello("p", &session.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &session.id).await;
}

#[tokio::test]
async fn hello_to_a_session_that_is_ending_is_invalid_session() {
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = Duration::from_secs(30)).await;
    let (host, session) = gw.host_with_session().await;
    let mut bound = gw.bound("holder", &session.id, json!([])).await;
    // The holder keeps the session in shutdown.pending until it answers.
    let end = {
        let sid = session.id.clone();
        tokio::spawn(async move {
            let r = host.end_session(&sid).await;
            (host, r)
        })
    };
    let pending = bound.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending");
    hello_error(
        &gw,
        hello("late", &session.id, json!([])),
        "INVALID_SESSION",
    )
    .await;
    bound
        .send(json!({"type": "shutdown.ready", "sessionId": session.id}))
        .await;
    let (_host, ended) = end.await.unwrap();
    ended.unwrap();
}

#[tokio::test]
async fn hello_to_all_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, _) = hello_error(&gw, hello("p", "all", json!([])), "UNAUTHORIZED").await;
    // Not fatal.
    p.send(hello("p", &session.id, json!([]))).await;
    expect_bound(&mut p, &session.id).await;
}

#[tokio::test]
async fn hello_ack_carries_version_provider_id_and_session_then_started() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(hello("acker", &session.id, json!([tool("t")])))
        .await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["protocolVersion"], 2, "{ack}");
    assert_eq!(ack["sessionId"], session.id.as_str(), "{ack}");
    let pid = ack["providerId"].as_str().expect("providerId is a string");
    assert!(pid.starts_with("p-") && pid.len() > 2, "{ack}");
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started", "{started}");
    assert_eq!(started["sessionId"], session.id.as_str(), "{started}");

    let status = host.status().await.unwrap();
    let me = status.providers.iter().find(|x| x.id == pid).unwrap();
    assert_eq!(me.name.as_deref(), Some("acker"));
    assert_eq!(me.state, "bound");
    assert_eq!(me.session.as_deref(), Some(session.id.as_str()));
    assert_eq!(me.trust, "project");
    assert_eq!(me.tools, ["t"]);
}

#[tokio::test]
async fn hello_with_invalid_tool_names_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let too_long = "x".repeat(MAX_TOOL_NAME_LEN + 1);
    for bad in [
        "",
        "has space",
        "dotted.name",
        "slash/name",
        "ünïcode",
        &too_long,
    ] {
        let (_p, e) = hello_error(
            &gw,
            hello("p", &session.id, json!([tool("fine"), tool(bad)])),
            "INVALID_JSON",
        )
        .await;
        assert!(e["message"].as_str().unwrap().contains("tools[1]"), "{e}");
    }
    assert!(session_tools(&host, &session.id).await.is_empty());
    // The longest allowed name, with every allowed character class, binds.
    let longest = format!("aZ0_-{}", "y".repeat(MAX_TOOL_NAME_LEN - 5));
    let mut p = gw.bound("p", &session.id, json!([tool(&longest)])).await;
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;
    assert_eq!(session_tools(&host, &session.id).await, [longest]);
}

#[tokio::test]
async fn hello_with_empty_name_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    for name in ["", "   "] {
        hello_error(&gw, hello(name, &session.id, json!([])), "INVALID_JSON").await;
    }
}

#[tokio::test]
async fn hello_with_non_object_parameters_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    for params in [
        json!("string"),
        json!([]),
        json!(1),
        json!(null),
        json!(true),
    ] {
        let t = json!({"name": "t", "description": "d", "parameters": params});
        let (_p, e) = hello_error(&gw, hello("p", &session.id, json!([t])), "INVALID_JSON").await;
        assert!(e["message"].as_str().unwrap().contains("parameters"), "{e}");
    }
    assert!(session_tools(&host, &session.id).await.is_empty());
    // Absent parameters default to an empty schema.
    gw.bound("p", &session.id, json!([{"name": "t", "description": "d"}]))
        .await;
}

#[tokio::test]
async fn hello_with_out_of_range_timeout_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    for timeout in [0u64, 3_600_001] {
        let mut t = tool("t");
        t["timeout"] = json!(timeout);
        hello_error(&gw, hello("p", &session.id, json!([t])), "INVALID_JSON").await;
    }
    let mut t = tool("t");
    t["timeout"] = json!(3_600_000);
    gw.bound("p", &session.id, json!([t])).await;
}

#[tokio::test]
async fn hello_with_a_tool_twice_in_the_list_is_tool_conflict() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (_p, e) = hello_error(
        &gw,
        hello(
            "p",
            &session.id,
            json!([tool("dup"), tool("other"), tool("dup")]),
        ),
        "TOOL_CONFLICT",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("dup"), "{e}");
    assert!(session_tools(&host, &session.id).await.is_empty());
}

#[tokio::test]
async fn hello_with_101_tools_is_payload_too_large_and_100_is_fine() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let tools = |n: usize| Value::Array((0..n).map(|i| tool(&format!("t{i}"))).collect());
    hello_error(
        &gw,
        hello("p", &session.id, tools(MAX_TOOLS_PER_PROVIDER + 1)),
        "PAYLOAD_TOO_LARGE",
    )
    .await;
    assert!(session_tools(&host, &session.id).await.is_empty());
    let _p = gw
        .bound("p", &session.id, tools(MAX_TOOLS_PER_PROVIDER))
        .await;
    assert_eq!(
        session_tools(&host, &session.id).await.len(),
        MAX_TOOLS_PER_PROVIDER
    );
}

#[tokio::test]
async fn hello_with_a_tool_held_by_another_provider_is_tool_conflict_naming_it() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let _first = gw
        .bound("first-owner", &session.id, json!([tool("shared")]))
        .await;
    let (mut p, e) = hello_error(
        &gw,
        hello("second", &session.id, json!([tool("mine"), tool("shared")])),
        "TOOL_CONFLICT",
    )
    .await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("first-owner"), "{e}");
    assert!(message.contains("shared"), "{e}");
    assert_eq!(e["sessionId"], session.id.as_str(), "{e}");
    // Nothing of the refused list was registered; a renamed retry binds.
    assert_eq!(session_tools(&host, &session.id).await, ["shared"]);
    p.send(hello(
        "second",
        &session.id,
        json!([tool("mine"), tool("shared2")]),
    ))
    .await;
    expect_bound(&mut p, &session.id).await;
    assert_eq!(
        session_tools(&host, &session.id).await,
        ["mine", "shared", "shared2"]
    );
}

#[tokio::test]
async fn same_tool_name_in_a_different_session_is_fine() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host).await;
    let _a = gw.bound("a", &s1.id, json!([tool("shared")])).await;
    let _b = gw.bound("b", &s2.id, json!([tool("shared")])).await;
    let status = host.status().await.unwrap();
    for (sid, owner) in [(&s1.id, "a"), (&s2.id, "b")] {
        let s = status.sessions.iter().find(|s| &s.id == sid).unwrap();
        assert_eq!(s.tools, ["shared"]);
        let p = status
            .providers
            .iter()
            .find(|p| p.name.as_deref() == Some(owner))
            .unwrap();
        assert_eq!(p.session.as_deref(), Some(sid.as_str()));
    }
}

#[tokio::test]
async fn hello_with_an_invalid_hook_rule_is_refused_and_binds_nothing() {
    // The rules themselves are tested in tests/hooks.rs.
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut msg = hello("p", &session.id, json!([tool("t")]));
    msg["hooks"] =
        json!({"onPreToolUse": [{"match": {"tool": "t", "args": "("}, "action": "deny"}]});
    let (mut p, _) = hello_error(&gw, msg, "INVALID_JSON").await;
    assert!(session_tools(&host, &session.id).await.is_empty());
    let mut msg = hello("p", &session.id, json!([tool("t")]));
    msg["hooks"] =
        json!({"onPreToolUse": [{"match": {"tool": "t"}, "action": "deny", "reason": "no"}]});
    p.send(msg).await;
    expect_bound(&mut p, &session.id).await;
}

#[tokio::test]
async fn hello_errors_carry_reply_to_and_provider_id() {
    let gw = TestGateway::start().await;
    let (_host, session) = gw.host_with_session().await;
    let (mut p, e1) = hello_error(&gw, hello("p", "nope", json!([])), "INVALID_SESSION").await;
    p.send(hello("p", &session.id, json!([tool("a b")]))).await;
    let e2 = p.expect_error("INVALID_JSON").await;
    p.send(hello("p", "all", json!([]))).await;
    let e3 = p.expect_error("UNAUTHORIZED").await;
    p.send(hello("p", &session.id, json!([]))).await;
    let ack = expect_bound(&mut p, &session.id).await;
    for e in [&e1, &e2, &e3] {
        assert_eq!(e["replyTo"], "hello", "{e}");
        assert_eq!(e["providerId"], ack["providerId"], "{e}");
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
    }
}

#[tokio::test]
async fn rebind_moves_tools_to_the_new_session() {
    let gw = TestGateway::start_with(|c| c.toolset_debounce = Duration::from_millis(20)).await;
    let (mut host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host).await;
    let mut p = gw.bound("mover", &s1.id, json!([tool("move_me")])).await;
    assert_eq!(session_tools(&host, &s1.id).await, ["move_me"]);

    // A call in flight in the old session is cancelled by the rebind.
    let (_call_id, rx) = host.start_invoke(&s1.id, "move_me", json!({})).unwrap();
    let call = p.expect("tool.call").await;

    p.send(hello("mover", &s2.id, json!([tool("move_me")])))
        .await;
    let cancel = p.expect("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    assert_eq!(cancel["sessionId"], s1.id.as_str());
    assert_eq!(cancel["reason"], "rebind");
    let ack = expect_bound(&mut p, &s2.id).await;
    assert!(ack["providerId"].as_str().unwrap().starts_with("p-"));

    let r = match tokio::time::timeout(PATIENCE, rx).await.unwrap().unwrap() {
        HostEvent::ToolResult(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        r.error_code.as_ref().map(|c| c.as_str()),
        Some("CANCELLED"),
        "{r:?}"
    );

    assert!(session_tools(&host, &s1.id).await.is_empty());
    assert_eq!(session_tools(&host, &s2.id).await, ["move_me"]);
    // The host sees both sessions' new tool sets.
    next_host_event(
        &mut host,
        |e| matches!(e, HostEvent::SessionTools(t) if t.session_id == s2.id && t.tools.len() == 1),
    )
    .await;

    // The tool is now called in the new session, and gone from the old one.
    let (_, rx) = host.start_invoke(&s2.id, "move_me", json!({})).unwrap();
    let call = p.expect("tool.call").await;
    assert_eq!(call["sessionId"], s2.id.as_str());
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "moved"}))
        .await;
    match tokio::time::timeout(PATIENCE, rx).await.unwrap().unwrap() {
        HostEvent::ToolResult(r) => assert_eq!(r.data, Some(json!("moved"))),
        other => panic!("{other:?}"),
    }
    let r = host.invoke(&s1.id, "move_me", json!({})).await.unwrap();
    assert_eq!(
        r.error_code.as_ref().map(|c| c.as_str()),
        Some("NOT_FOUND"),
        "{r:?}"
    );
}

#[tokio::test]
async fn failed_rebind_leaves_the_provider_unbound() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host).await;
    let _holder = gw.bound("holder", &s2.id, json!([tool("taken")])).await;
    let mut p = gw.bound("p", &s1.id, json!([tool("mine")])).await;
    p.send(hello("p", &s2.id, json!([tool("taken")]))).await;
    p.expect_error("TOOL_CONFLICT").await;
    assert!(session_tools(&host, &s1.id).await.is_empty());
    assert_eq!(session_tools(&host, &s2.id).await, ["taken"]);
    let status = host.status().await.unwrap();
    let me = status
        .providers
        .iter()
        .find(|x| x.name.as_deref() == Some("p"))
        .unwrap();
    assert_eq!(me.state, "unbound");
    assert_eq!(me.session, None);
}

#[tokio::test(start_paused = true)]
async fn more_than_10_rebinds_a_minute_is_rate_limited() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host).await;
    let mut p = gw.bound("churner", &s1.id, json!([tool("t")])).await;
    // Back-to-back frames must not wait on Nagle: under the paused clock a real-time
    // delay would let the clock jump past the test's patience.
    let sessions = [&s2.id, &s1.id];
    // The first hello bound; 10 rebinds are allowed.
    for i in 0..MAX_REBINDS_PER_MINUTE as usize {
        let target = sessions[i % 2];
        p.send(hello("churner", target, json!([tool("t")]))).await;
        expect_bound(&mut p, target).await;
    }
    // The 11th within the minute is refused, and leaves the binding alone.
    p.send(hello("churner", &s1.id, json!([tool("t")]))).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "hello");
    let bound_to = sessions[(MAX_REBINDS_PER_MINUTE as usize - 1) % 2];
    assert_eq!(session_tools(&host, bound_to).await, ["t"]);
    p.send(json!({"type": "push", "level": "keep", "event": "still bound"}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    p.expect("stream.history").await;

    // A minute later the window has moved on.
    tokio::time::sleep(Duration::from_secs(61)).await;
    p.send(hello("churner", &s1.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &s1.id).await;
}

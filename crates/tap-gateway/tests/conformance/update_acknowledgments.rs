//! Spec section "Update acknowledgments" (Protocol rules): `tools.update`, `hooks.update`,
//! `context.update` and `filter.set` with a `requestId` are answered `ack {requestId,
//! sessionId, revision}`; revisions increase per (provider, session); failures answer
//! `error` with the `requestId`; one update per (provider, session, type) in flight.
//! Spec decision 16: `ack` only when a `requestId` came; the revision counts successful
//! updates since the last successful `hello`. Decisions U1–U3: a `tools.update` is
//! acknowledged once its tool set has been published to the session host, so only it can
//! be in flight; an ack that can no longer come is answered `INVALID_SESSION`. The
//! revision barrier itself is tested in ordering_guarantees.rs.

use crate::common::*;

fn update(kind: &str, request_id: &str) -> Value {
    match kind {
        "tools.update" => json!({"type": kind, "requestId": request_id, "tools": [tool("t")]}),
        "hooks.update" => json!({"type": kind, "requestId": request_id, "onPreToolUse": []}),
        "context.update" => json!({"type": kind, "requestId": request_id, "context": "c"}),
        "filter.set" => json!({"type": kind, "requestId": request_id, "stream": "s",
                               "rules": [{"match": "x", "outcome": "keep"}]}),
        _ => unreachable!(),
    }
}

async fn acked(kind: &str) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(update(kind, "req-42")).await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["requestId"], "req-42", "{ack}");
    assert_eq!(ack["sessionId"], s.id.as_str(), "{ack}");
    assert_eq!(ack["revision"], 1, "{ack}");
}

#[tokio::test]
async fn tools_update_is_acked_with_request_id_session_id_and_revision() {
    acked("tools.update").await;
}

#[tokio::test]
async fn hooks_update_is_acked_with_request_id_session_id_and_revision() {
    acked("hooks.update").await;
}

#[tokio::test]
async fn context_update_is_acked_with_request_id_session_id_and_revision() {
    acked("context.update").await;
}

#[tokio::test]
async fn filter_set_is_acked_with_request_id_session_id_and_revision() {
    acked("filter.set").await;
}

#[tokio::test]
async fn revision_increases_per_provider_and_session_across_update_kinds() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let kinds = [
        "tools.update",
        "hooks.update",
        "context.update",
        "filter.set",
        "tools.update",
    ];
    for (i, kind) in kinds.into_iter().enumerate() {
        p.send(update(kind, &format!("r{i}"))).await;
        let ack = p.expect("ack").await;
        assert_eq!(ack["requestId"], format!("r{i}"));
        assert_eq!(ack["revision"], i as u64 + 1, "{ack}");
    }
}

#[tokio::test]
async fn revisions_are_counted_per_provider() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut a = bound(&gw, "a", &s.id, json!([])).await;
    let mut b = bound(&gw, "b", &s.id, json!([])).await;
    for r in ["a1", "a2"] {
        a.send(update("context.update", r)).await;
        a.expect("ack").await;
    }
    b.send(update("context.update", "b1")).await;
    assert_eq!(b.expect("ack").await["revision"], 1);
    a.send(update("context.update", "a3")).await;
    assert_eq!(a.expect("ack").await["revision"], 3);
}

#[tokio::test]
async fn revision_restarts_with_each_successful_hello() {
    let gw = TestGateway::start().await;
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s1.id, json!([])).await;
    for r in ["1", "2"] {
        p.send(update("context.update", r)).await;
        p.expect("ack").await;
    }
    p.send(hello("p", &s2.id, json!({}))).await;
    expect_bound(&mut p, &s2.id).await;
    p.send(update("context.update", "3")).await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["sessionId"], s2.id.as_str());
    assert_eq!(ack["revision"], 1, "{ack}");
}

#[tokio::test]
async fn an_update_without_request_id_is_applied_without_ack() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "tools": [tool("silent")]}))
        .await;
    fence(&mut p).await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["silent"]);
    // It still counts as a revision.
    p.send(update("context.update", "next")).await;
    assert_eq!(p.expect("ack").await["revision"], 2);
}

#[tokio::test]
async fn an_update_without_session_id_is_acked_for_the_bound_session() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "requestId": "r", "tools": []}))
        .await;
    let ack = p.expect("ack").await;
    assert_eq!(ack["sessionId"], s.id.as_str(), "{ack}");
    fence(&mut p).await;
}

/// A refused update answers `error` with its `requestId`, no `ack`, and takes no revision.
async fn refused(bad: Value, code: &str) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _other = bound(&gw, "other", &s.id, json!([tool("taken")])).await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(update("context.update", "ok-1")).await;
    assert_eq!(p.expect("ack").await["revision"], 1);
    p.send(bad.clone()).await;
    let e = p.expect_error(code).await;
    assert_eq!(e["requestId"], bad["requestId"], "{e}");
    assert_eq!(e["replyTo"], bad["type"], "{e}");
    p.send(update("context.update", "ok-2")).await;
    assert_eq!(
        p.expect("ack").await["revision"],
        2,
        "a failure takes no revision"
    );
}

#[tokio::test]
async fn a_failed_tools_update_answers_error_with_its_request_id() {
    refused(
        json!({"type": "tools.update", "requestId": "bad", "tools": [tool("taken")]}),
        "TOOL_CONFLICT",
    )
    .await;
}

#[tokio::test]
async fn a_failed_hooks_update_answers_error_with_its_request_id() {
    refused(
        json!({"type": "hooks.update", "requestId": "bad",
               "onPreToolUse": [{"match": {"args": "(unclosed"}, "action": "deny"}]}),
        "INVALID_JSON",
    )
    .await;
}

#[tokio::test]
async fn a_failed_context_update_answers_error_with_its_request_id() {
    refused(
        json!({"type": "context.update", "requestId": "bad", "sessionId": "elsewhere",
               "context": "c"}),
        "INVALID_SESSION",
    )
    .await;
}

#[tokio::test]
async fn a_failed_filter_set_answers_error_with_its_request_id() {
    refused(
        json!({"type": "filter.set", "requestId": "bad", "stream": "s@other", "rules": []}),
        "UNAUTHORIZED",
    )
    .await;
}

#[tokio::test]
async fn an_update_refused_before_hello_answers_error_with_its_request_id() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for kind in [
        "tools.update",
        "hooks.update",
        "context.update",
        "filter.set",
    ] {
        p.send(update(kind, &format!("{kind}-1"))).await;
        let e = p.expect_error("INVALID_SESSION").await;
        assert_eq!(e["replyTo"], kind, "{e}");
        assert_eq!(e["requestId"], format!("{kind}-1"), "{e}");
    }
}

async fn in_flight(kind: &str) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    // Both frames leave before the first ack can arrive.
    p.send(update(kind, "first")).await;
    p.send(update(kind, "second")).await;
    let mut acks = Vec::new();
    let mut limited = Vec::new();
    for _ in 0..2 {
        let m = p.recv().await;
        match m["type"].as_str() {
            Some("ack") => acks.push(m),
            Some("error") => limited.push(m),
            _ => panic!("unexpected {m}"),
        }
    }
    assert_eq!(acks.len(), 1, "{acks:?} {limited:?}");
    assert_eq!(acks[0]["requestId"], "first");
    assert_eq!(limited[0]["code"], "RATE_LIMITED", "{limited:?}");
    assert_eq!(limited[0]["requestId"], "second", "{limited:?}");
    assert_eq!(limited[0]["replyTo"], kind, "{limited:?}");
}

#[tokio::test]
async fn second_tools_update_in_flight_is_rate_limited() {
    in_flight("tools.update").await;
}

/// Decision U2: only a `tools.update` waits for anything; the other kinds are acknowledged
/// before the next frame is read, so a second one sent at once is accepted.
async fn acked_at_once(kind: &str) {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(update(kind, "first")).await;
    p.send(update(kind, "second")).await;
    for (id, revision) in [("first", 1), ("second", 2)] {
        let ack = p.expect("ack").await;
        assert_eq!(
            (ack["requestId"].as_str(), ack["revision"].as_u64()),
            (Some(id), Some(revision)),
            "{ack}"
        );
    }
}

#[tokio::test]
async fn a_second_hooks_update_sent_at_once_is_accepted() {
    acked_at_once("hooks.update").await;
}

#[tokio::test]
async fn a_second_context_update_sent_at_once_is_accepted() {
    acked_at_once("context.update").await;
}

#[tokio::test]
async fn a_second_filter_set_sent_at_once_is_accepted() {
    acked_at_once("filter.set").await;
}

#[tokio::test]
async fn a_tools_update_without_request_id_is_never_in_flight() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "tools.update", "tools": [tool("a")]}))
        .await;
    p.send(json!({"type": "tools.update", "tools": [tool("b")]}))
        .await;
    fence(&mut p).await;
    assert_eq!(session_tool_names(&host, &s.id).await, ["b"]);
}

#[tokio::test]
async fn revisions_are_given_in_acknowledgment_order() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(update("tools.update", "tools")).await;
    p.send(update("hooks.update", "hooks")).await;
    let first = p.expect("ack").await;
    let second = p.expect("ack").await;
    assert_eq!(
        (first["requestId"].as_str(), first["revision"].as_u64()),
        (Some("hooks"), Some(1))
    );
    assert_eq!(
        (second["requestId"].as_str(), second["revision"].as_u64()),
        (Some("tools"), Some(2))
    );
}

#[tokio::test]
async fn a_tools_update_waiting_for_its_ack_at_a_rebind_is_answered_invalid_session() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let s2 = second_session(&host, "two").await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(update("tools.update", "pending")).await;
    p.send(hello("p", &s2.id, json!({}))).await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(
        (e["requestId"].as_str(), e["replyTo"].as_str()),
        (Some("pending"), Some("tools.update")),
        "{e}"
    );
    expect_bound(&mut p, &s2.id).await;
}

#[tokio::test]
async fn a_tools_update_waiting_for_its_ack_at_teardown_is_answered_invalid_session() {
    let gw = far_deadline_gateway().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    p.send(update("tools.update", "pending")).await;
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["requestId"], "pending", "{e}");
    ended(end).await;
}

#[tokio::test]
async fn updates_of_different_kinds_may_be_in_flight_together() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    let kinds = [
        "tools.update",
        "hooks.update",
        "context.update",
        "filter.set",
    ];
    for kind in kinds {
        p.send(update(kind, kind)).await;
    }
    for _ in kinds {
        let ack = p.expect("ack").await;
        assert!(kinds.contains(&ack["requestId"].as_str().unwrap()), "{ack}");
    }
}

#[tokio::test]
async fn an_update_sent_after_the_previous_ack_is_accepted() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    for r in ["a", "b", "c"] {
        p.send(update("tools.update", r)).await;
        assert_eq!(p.expect("ack").await["requestId"], r);
    }
}

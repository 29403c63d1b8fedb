//! A resuming host lists the calls it still waits on (`auth.pendingCalls`), and each gets
//! exactly one terminal answer on the new socket, whatever the old socket lost: an answer
//! it delivered unread, a call it never delivered, a call still running, an answer kept
//! in the outbox. Raw frames on both sides, so every answer is counted.
use tap_testkit::*;

use serde_json::{json, Value};
use tap_protocol::limits::MAX_RESUME_PENDING_CALLS;

/// A raw session host: `auth` (with `extra` fields) answered `auth.ok`, which is returned.
async fn host_auth(gw: &TestGateway, extra: Value) -> (Provider, Value) {
    let mut h = Provider::connect(&format!("{}/session", gw.url())).await;
    let mut auth = json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                          "protocolVersion": 1, "hostName": "resume-test"});
    auth.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    h.send(auth).await;
    let ok = h.expect("auth.ok").await;
    (h, ok)
}

/// A raw host with session `s1`, and a provider bound to it with tool `echo`.
async fn host_and_provider(gw: &TestGateway) -> (Provider, String, Provider) {
    let (mut h, ok) = host_auth(gw, json!({})).await;
    h.send(
        json!({"type": "session.register", "requestId": "r1", "sessionId": "s1",
                  "label": "s1", "cwd": "/tmp", "foreground": true}),
    )
    .await;
    h.expect_next("session.registered").await;
    let p = gw.bound("prov", "s1", json!([tool("echo")])).await;
    let token = ok["resumeToken"].as_str().unwrap().to_string();
    (h, token, p)
}

fn invoke(call_id: &str) -> Value {
    json!({"type": "tool.invoke", "callId": call_id, "sessionId": "s1", "tool": "echo", "args": {}})
}

async fn wait_detached(gw: &TestGateway) {
    let g = gw.handle.gateway();
    wait_until("the host is detached", || {
        std::future::ready(g.status().sessions.iter().any(|s| s.host_detached))
    })
    .await;
}

/// Resumes with `pending`; returns the socket and every frame before a fence.
async fn resume(gw: &TestGateway, token: &str, pending: Value) -> (Provider, Vec<Value>) {
    let (mut h, ok) = host_auth(gw, json!({"resumeToken": token, "pendingCalls": pending})).await;
    assert_eq!(ok["resumed"], json!(["s1"]), "{ok}");
    let frames = until_fence(&mut h).await;
    (h, frames)
}

/// The one `tool.result` for `call_id` among `frames` (fails if there are more or none).
fn only_answer<'a>(frames: &'a [Value], call_id: &str) -> &'a Value {
    let answers = results_for(frames, call_id);
    assert_eq!(
        answers.len(),
        1,
        "exactly one answer for {call_id}: {frames:?}"
    );
    answers[0]
}

/// The `tool.result`s for `call_id` among `frames`.
fn results_for<'a>(frames: &'a [Value], call_id: &str) -> Vec<&'a Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "tool.result" && f["callId"] == call_id)
        .collect()
}

#[tokio::test]
async fn an_answer_the_old_socket_delivered_but_the_host_lost_is_sent_again() {
    let gw = TestGateway::start().await;
    let (mut h, token, mut p) = host_and_provider(&gw).await;
    h.send(invoke("c1")).await;
    let call = p.expect("tool.call").await;
    answer(&mut p, &call, json!("one")).await;
    // Written to the old socket: the host read it, then lost it (say, in a crash of its
    // own between reading and handling).
    let first = h.expect_next("tool.result").await;
    assert_eq!(first["data"], "one");
    drop(h);
    wait_detached(&gw).await;

    let (_h, frames) = resume(&gw, &token, json!(["c1"])).await;
    assert_eq!(only_answer(&frames, "c1")["data"], "one");
}

#[tokio::test]
async fn a_listed_call_that_never_reached_the_gateway_is_answered_disconnected_once() {
    let gw = TestGateway::start().await;
    let (h, token, mut p) = host_and_provider(&gw).await;
    drop(h);
    wait_detached(&gw).await;

    let (_h, frames) = resume(&gw, &token, json!(["ghost", "ghost"])).await;
    // One answer for a call listed twice.
    let answer = only_answer(&frames, "ghost");
    assert_eq!(answer["errorCode"], "DISCONNECTED");
    let error = answer["error"].as_str().unwrap();
    assert!(error.contains("it never ran"), "{error}");
    // It did not run.
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
}

#[tokio::test]
async fn a_listed_call_still_running_is_answered_once_when_it_finishes() {
    let gw = TestGateway::start().await;
    let (mut h, token, mut p) = host_and_provider(&gw).await;
    h.send(invoke("c2")).await;
    let call = p.expect("tool.call").await;
    drop(h);
    wait_detached(&gw).await;

    let (mut h, frames) = resume(&gw, &token, json!(["c2"])).await;
    assert!(
        results_for(&frames, "c2").is_empty(),
        "still running: {frames:?}"
    );
    answer(&mut p, &call, json!("two")).await;
    let r = h.expect_next("tool.result").await;
    assert_eq!(
        (r["callId"].as_str(), r["data"].as_str()),
        (Some("c2"), Some("two"))
    );
    let after = until_fence(&mut h).await;
    assert!(
        results_for(&after, "c2").is_empty(),
        "a second answer: {after:?}"
    );
}

#[tokio::test]
async fn a_listed_call_answered_while_away_comes_from_the_outbox_once() {
    let gw = TestGateway::start().await;
    let (mut h, token, mut p) = host_and_provider(&gw).await;
    h.send(invoke("c3")).await;
    let call = p.expect("tool.call").await;
    drop(h);
    wait_detached(&gw).await;
    answer(&mut p, &call, json!("three")).await;
    let g = gw.handle.gateway();
    wait_until("the call is answered", || {
        std::future::ready(g.status().providers.iter().all(|p| p.in_flight == 0))
    })
    .await;

    let (_h, frames) = resume(&gw, &token, json!(["c3"])).await;
    assert_eq!(only_answer(&frames, "c3")["data"], "three");
}

#[tokio::test]
async fn a_resume_sends_each_session_its_current_tool_set() {
    let gw = TestGateway::start().await;
    let (h, token, _p) = host_and_provider(&gw).await;
    drop(h);
    wait_detached(&gw).await;

    let (_h, frames) = resume(&gw, &token, json!([])).await;
    let tools: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "session.tools")
        .collect();
    let last = tools.last().expect("a tool set after the resume");
    assert_eq!(last["sessionId"], "s1");
    let names: Vec<&str> = last["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
}

#[tokio::test]
async fn calls_listed_by_a_host_that_is_gone_are_each_answered_disconnected() {
    let gw = TestGateway::start().await;
    let (mut h, ok) = host_auth(
        &gw,
        json!({"resumeToken": "hrt-from-another-run", "pendingCalls": ["a", "b"]}),
    )
    .await;
    assert_eq!(ok["resumed"], json!([]));
    let frames = until_fence(&mut h).await;
    for call in ["a", "b"] {
        let answer = only_answer(&frames, call);
        assert_eq!(answer["errorCode"], "DISCONNECTED");
        assert!(answer["error"].as_str().unwrap().contains("is gone"));
    }
}

#[tokio::test]
async fn a_resume_listing_too_many_calls_is_refused() {
    let gw = TestGateway::start().await;
    let (h, token, _p) = host_and_provider(&gw).await;
    drop(h);
    wait_detached(&gw).await;
    let many: Vec<String> = (0..=MAX_RESUME_PENDING_CALLS)
        .map(|i| format!("c{i}"))
        .collect();
    let mut h = Provider::connect(&format!("{}/session", gw.url())).await;
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 1, "resumeToken": token, "pendingCalls": many}),
    )
    .await;
    let e = h.expect_error("PAYLOAD_TOO_LARGE").await;
    assert!(
        e["message"].as_str().unwrap().contains("pendingCalls"),
        "{e}"
    );
    h.expect_closed().await;
    // The host is still there to resume properly.
    let (_h, frames) = resume(&gw, &token, json!([])).await;
    assert!(frames.iter().all(|f| f["type"] != "error"), "{frames:?}");
}

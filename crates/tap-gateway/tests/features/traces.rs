//! Traces (issue 11): the span tree of a tool call as the ledger keeps it — a gated,
//! progressing call from the playground, a queued call, a retried call — the host's
//! `traceparent` joined, and the provider handed a `traceparent` it can continue.

use serde_json::{json, Value};
use tap_protocol::limits::MAX_PROGRESS_EVENTS_PER_CALL;
use tap_testkit::*;

/// Every span of the one trace of `tool`, once the ledger has it.
async fn trace_of(gw: &TestGateway, c: &mut Control, tool: &str) -> Vec<Value> {
    gw.handle.gateway().flush_history().await;
    let list = c.ok("traces.list", json!({"tool": tool})).await;
    let traces = list["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "{list}");
    assert_eq!(traces[0]["name"], "tool.call", "{list}");
    let id = traces[0]["traceId"].as_str().unwrap();
    let t = c.ok("traces.get", json!({"traceId": id})).await;
    t["spans"].as_array().unwrap().clone()
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn one<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one '{name}' in {spans:#?}");
    found[0]
}

fn is_child(child: &Value, parent: &Value) {
    assert_eq!(
        child["parentSpanId"], parent["spanId"],
        "{child} under {parent}"
    );
    assert_eq!(child["traceId"], parent["traceId"]);
}

#[tokio::test]
async fn a_gated_progressing_call_is_one_tree_and_the_provider_gets_its_traceparent() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let s = c
        .ok("playground.open", json!({"name": "traced", "cwd": "/tmp"}))
        .await;
    let sid = s["sessionId"].as_str().unwrap().to_string();
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "ci", "protocolVersion": 2, "session": sid,
                  "tools": [tool("build")],
                  "hooks": {"onPreToolUse": [{"match": {"tool": "build"}, "action": "gate",
                                              "gateId": "g1"}]}}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    c.send(
        json!({"type": "request", "id": "r1", "method": "playground.call",
                  "params": {"callId": "r1", "sessionId": sid, "tool": "build", "args": {}}}),
    )
    .await;
    let check = p.expect("gate.check").await;
    p.send(json!({"type": "gate.result", "callId": check["callId"], "decision": "allow"}))
        .await;
    let call = p.expect("tool.call").await;
    let traceparent = call["traceparent"]
        .as_str()
        .expect("tool.call has traceparent");
    p.send(json!({"type": "tool.progress", "id": call["id"], "message": "compiling"}))
        .await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "built"}))
        .await;
    let r = c.response("r1").await;
    assert_eq!(r["result"]["data"], "built", "{r}");

    let spans = trace_of(&gw, &mut c, "build").await;
    let root = one(&spans, "tool.call");
    assert!(root.get("parentSpanId").is_none(), "{root}");
    assert_eq!(root["status"], "ok");
    assert_eq!(root["attributes"]["via"], "playground");
    assert_eq!(
        r["result"]["traceId"], root["traceId"],
        "the answer names its trace"
    );
    let precheck = one(&spans, "hook.precheck");
    is_child(precheck, root);
    let gate = one(&spans, "gate.check");
    is_child(gate, precheck);
    assert_eq!(gate["attributes"]["decision"], "allow");
    let provider_call = one(&spans, "provider.call");
    is_child(provider_call, root);
    assert_eq!(provider_call["status"], "ok");
    // The provider was handed its span: it may continue the trace under it.
    assert_eq!(
        traceparent,
        format!(
            "00-{}-{}-01",
            root["traceId"].as_str().unwrap(),
            provider_call["spanId"].as_str().unwrap()
        )
    );
    let progress: Vec<&Value> = root["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "tool.progress")
        .collect();
    assert_eq!(progress.len(), 1, "{root}");
    assert_eq!(progress[0]["attributes"]["message"], "compiling");
    // Nothing of the tree starts before its root or ends after the trace's last span.
    let start = root["startUs"].as_u64().unwrap();
    assert!(spans
        .iter()
        .all(|s| s["startUs"].as_u64().unwrap() >= start));
}

#[tokio::test]
async fn a_call_keeps_a_bounded_number_of_progress_events_and_counts_the_rest() {
    let gw = TestGateway::start().await;
    let (mut c, _) = Control::authed(&gw).await;
    let s = c
        .ok("playground.open", json!({"name": "chatty", "cwd": "/tmp"}))
        .await;
    let sid = s["sessionId"].as_str().unwrap().to_string();
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "ci", "protocolVersion": 2, "session": sid,
                  "tools": [tool("build")]}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    c.send(
        json!({"type": "request", "id": "r1", "method": "playground.call",
                  "params": {"callId": "r1", "sessionId": sid, "tool": "build", "args": {}}}),
    )
    .await;
    let call = p.expect("tool.call").await;
    let extra = 40;
    for i in 0..MAX_PROGRESS_EVENTS_PER_CALL + extra {
        p.send(json!({"type": "tool.progress", "id": call["id"], "message": format!("step {i}")}))
            .await;
    }
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "built"}))
        .await;
    let r = c.response("r1").await;
    assert_eq!(r["result"]["data"], "built", "{r}");

    let spans = trace_of(&gw, &mut c, "build").await;
    let root = one(&spans, "tool.call");
    let events = root["events"].as_array().unwrap();
    let progress = events.iter().filter(|e| e["name"] == "tool.progress");
    assert_eq!(progress.count(), MAX_PROGRESS_EVENTS_PER_CALL);
    let rest = events
        .iter()
        .find(|e| e["name"] == "tool.progress.unrecorded")
        .expect("the rest are counted");
    assert_eq!(rest["attributes"]["count"], extra as u64, "{rest}");
}

#[tokio::test]
async fn a_hosts_traceparent_is_joined_and_a_retry_is_a_second_provider_call() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let hello = |id: &str| {
        json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s.id,
               "instance": id, "tools": [tool("screenshot")]})
    };
    let (mut a, _) = gw.authed().await;
    a.send(hello("tab-a")).await;
    a.expect("hello.ack").await;
    a.expect("session.lifecycle").await;
    let (mut b, _) = gw.authed().await;
    b.send(hello("tab-b")).await;
    b.expect("hello.ack").await;
    b.expect("session.lifecycle").await;
    let host_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let host_span = "00f067aa0ba902b7";
    let (_, rx) = host
        .start_invoke_traced(
            &s.id,
            "screenshot",
            json!({}),
            Some(&format!("00-{host_trace}-{host_span}-01")),
        )
        .unwrap();
    // The most recently active instance (b) first; it fails retryably; then a.
    let first = b.expect("tool.call").await;
    b.send(
        json!({"type": "tool.result", "id": first["id"], "error": "busy",
                  "errorCode": "INTERNAL", "retryable": true}),
    )
    .await;
    let second = a.expect("tool.call").await;
    a.send(json!({"type": "tool.result", "id": second["id"], "data": 1}))
        .await;
    let r = result_of(rx).await;
    assert!(r.error.is_none(), "{r:?}");

    let (mut c, _) = Control::authed(&gw).await;
    let spans = trace_of(&gw, &mut c, "screenshot").await;
    let root = one(&spans, "tool.call");
    assert_eq!(root["traceId"], host_trace, "the host's trace is joined");
    assert_eq!(root["parentSpanId"], host_span);
    assert_eq!(root["remoteParent"], true);
    assert_eq!(root["attributes"]["via"], "host");
    let calls = named(&spans, "provider.call");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    for call in &calls {
        is_child(call, root);
    }
    let failed = calls.iter().find(|s| s["status"] == "error").unwrap();
    assert_eq!(failed["errorCode"], "INTERNAL");
    assert_eq!(failed["attributes"]["provider.instance"], "tab-b");
    let retried = calls.iter().find(|s| s["status"] == "ok").unwrap();
    assert_eq!(retried["attributes"]["retry"], true);
    assert_eq!(retried["attributes"]["provider.instance"], "tab-a");
    assert!(root["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "retry"));
    // Each attempt's tool.call named its own span.
    for (frame, span) in [(&first, "error"), (&second, "ok")] {
        let sp = calls.iter().find(|s| s["status"] == span).unwrap();
        assert!(frame["traceparent"]
            .as_str()
            .unwrap()
            .contains(sp["spanId"].as_str().unwrap()));
    }
}

#[tokio::test]
async fn a_queued_call_has_a_concurrency_wait_span_and_a_malformed_traceparent_starts_a_new_trace()
{
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    let mut quick = tool("quick");
    // Short enough to run out while queued behind `slow`, which is answered only after.
    quick["timeout"] = json!(300);
    p.send(
        json!({"type": "hello", "name": "one-at-a-time", "protocolVersion": 2,
                  "session": s.id, "tools": [tool("slow"), quick],
                  "concurrency": {"max": 1, "scope": "instance"}}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    let (_, slow_rx) = host
        .start_invoke_traced(&s.id, "slow", json!({}), Some("not-a-traceparent"))
        .unwrap();
    let slow = p.expect("tool.call").await;
    let (_, quick_rx) = host.start_invoke(&s.id, "quick", json!({})).unwrap();
    let r = result_of(quick_rx).await;
    assert_eq!(code(&r), Some("TIMEOUT"), "{r:?}");
    p.send(json!({"type": "tool.result", "id": slow["id"], "data": 1}))
        .await;
    result_of(slow_rx).await;

    let (mut c, _) = Control::authed(&gw).await;
    let queued = trace_of(&gw, &mut c, "quick").await;
    let root = one(&queued, "tool.call");
    assert_eq!(root["errorCode"], "TIMEOUT");
    let wait = one(&queued, "concurrency.wait");
    is_child(wait, root);
    assert_eq!(wait["errorCode"], "TIMEOUT");
    assert!(named(&queued, "provider.call").is_empty(), "never sent");
    let first = trace_of(&gw, &mut c, "slow").await;
    let root = one(&first, "tool.call");
    assert!(root.get("parentSpanId").is_none(), "a new trace: {root}");
    assert_eq!(root["attributes"]["traceparent.ignored"], true);
    assert!(
        named(&first, "concurrency.wait").is_empty(),
        "a free slot: no wait"
    );
}

#[tokio::test]
async fn an_unknown_trace_is_not_found_and_filters_narrow_the_list() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([tool("ok"), tool("bad")])).await;
    for (t, fail) in [("ok", false), ("bad", true)] {
        let (_, rx) = host.start_invoke(&s.id, t, json!({})).unwrap();
        let call = p.expect("tool.call").await;
        let answer = if fail {
            json!({"type": "tool.result", "id": call["id"], "error": "nope", "errorCode": "INTERNAL"})
        } else {
            json!({"type": "tool.result", "id": call["id"], "data": true})
        };
        p.send(answer).await;
        result_of(rx).await;
    }
    let (mut c, _) = Control::authed(&gw).await;
    gw.handle.gateway().flush_history().await;
    let errors = c
        .ok(
            "traces.list",
            json!({"status": "error", "name": "tool.call"}),
        )
        .await;
    let errors = errors["traces"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["tool"], "bad");
    assert_eq!(errors[0]["provider"], "p");
    assert_eq!(errors[0]["errorCode"], "INTERNAL");
    let mine = c
        .ok(
            "traces.list",
            json!({"sessionId": s.id, "name": "tool.call"}),
        )
        .await;
    assert_eq!(mine["traces"].as_array().unwrap().len(), 2);
    let paged = c
        .ok("traces.list", json!({"name": "tool.call", "limit": 1}))
        .await;
    assert_eq!(paged["traces"].as_array().unwrap().len(), 1);
    let before = paged["nextBeforeUs"].as_u64().expect("a next page");
    let older = c
        .ok(
            "traces.list",
            json!({"name": "tool.call", "beforeUs": before}),
        )
        .await;
    assert_eq!(older["traces"].as_array().unwrap().len(), 1);
    assert_ne!(older["traces"][0]["traceId"], paged["traces"][0]["traceId"]);
    c.err(
        "traces.get",
        json!({"traceId": "0123456789abcdef0123456789abcdef"}),
        "NOT_FOUND",
    )
    .await;
}

//! The Tap session-host protocol: every [`HostRequest`] and [`HostEvent`] variant
//! round-trips through serde_json, and the wire shapes use camelCase field names.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Debug;
use tap_protocol::host::*;

/// to_value → from_value gives back the same value; returns the JSON.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(v: &T) -> Value {
    let json = serde_json::to_value(v).unwrap();
    let back: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("does not deserialize back: {e}\n{json}"));
    assert_eq!(&back, v, "round trip changed the value\n{json}");
    // Through text too, as on the socket.
    let text = serde_json::to_string(v).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, v);
    json
}

fn no_snake_case_keys(v: &Value) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                assert!(!k.contains('_'), "snake_case key {k:?}");
                no_snake_case_keys(child);
            }
        }
        Value::Array(a) => a.iter().for_each(no_snake_case_keys),
        _ => {}
    }
}

#[path = "host_samples/mod.rs"]
mod samples;
use samples::*;

#[test]
fn every_host_request_round_trips() {
    let requests: Vec<HostRequest> = all_requests().into_iter().chain(ask_requests()).collect();
    let mut seen = BTreeSet::new();
    for req in &requests {
        let json = round_trip(req);
        assert_eq!(json["type"], json!(req.type_name()));
        no_snake_case_keys(&json);
        // The gateway's own decoder accepts what serde produced.
        let decoded = tap_protocol::decode::<HostRequest>(
            serde_json::to_string(req).unwrap().as_bytes(),
            HostRequest::TYPES,
        )
        .unwrap();
        assert_eq!(&decoded, req);
        seen.insert(req.type_name());
    }
    let all: BTreeSet<&str> = HostRequest::TYPES.iter().copied().collect();
    assert_eq!(seen, all, "every HostRequest variant is covered");
}

#[test]
fn every_host_event_round_trips() {
    let events: Vec<HostEvent> = all_events().into_iter().chain(ask_events()).collect();
    let mut seen = BTreeSet::new();
    for ev in &events {
        let json = round_trip(ev);
        assert_eq!(json["type"], json!(event_type(ev)));
        no_snake_case_keys(&json);
        seen.insert(event_type(ev));
    }
    assert_eq!(seen.len(), 17, "every HostEvent variant is covered");
}

#[test]
fn host_auth_shape() {
    let v = serde_json::to_value(&all_requests()[0]).unwrap();
    assert_eq!(
        v,
        json!({
            "type": "auth",
            "token": "htk-1",
            "protocolVersion": 1,
            "hostName": "tap-cli",
            "resumeToken": "rt-9",
            "pendingCalls": ["call-1", "call-2"]
        })
    );
    // Absent optionals are omitted, not null.
    let v = serde_json::to_value(&all_requests()[1]).unwrap();
    assert_eq!(
        v,
        json!({ "type": "auth", "token": "htk-1", "protocolVersion": 1 })
    );
}

#[test]
fn auth_ok_shape() {
    let v = serde_json::to_value(&all_events()[0]).unwrap();
    assert_eq!(
        v,
        json!({
            "type": "auth.ok",
            "protocolVersion": 1,
            "hostId": "h-1",
            "resumeToken": "rt-9",
            "resumed": ["abc123"]
        })
    );
    // `resumed` may be absent on a fresh connection.
    let ok: HostEvent = serde_json::from_value(
        json!({ "type": "auth.ok", "protocolVersion": 1, "hostId": "h", "resumeToken": "t" }),
    )
    .unwrap();
    let HostEvent::AuthOk(ok) = ok else {
        panic!("expected AuthOk")
    };
    assert!(ok.resumed.is_empty());
}

#[test]
fn session_register_and_end_shapes() {
    let reqs = all_requests();
    assert_eq!(
        serde_json::to_value(&reqs[2]).unwrap(),
        json!({
            "type": "session.register",
            "requestId": "r-1",
            "sessionId": "abc123",
            "label": "PR #42",
            "cwd": "/code/foo",
            "foreground": true
        })
    );
    assert_eq!(
        serde_json::to_value(&reqs[3]).unwrap(),
        json!({ "type": "session.end", "requestId": "r-2", "sessionId": "abc123" })
    );
    assert_eq!(
        serde_json::to_value(&reqs[4]).unwrap(),
        json!({ "type": "session.state", "sessionId": "abc123", "state": "busy" })
    );
    assert_eq!(
        serde_json::to_value(&reqs[5]).unwrap(),
        json!({ "type": "session.state", "sessionId": "abc123", "state": "idle",
                "mode": "autopilot", "model": "claude-sonnet-4.5",
                "capabilities": { "ui": { "confirm": false, "elicitation": false } } })
    );
    // A host that says nothing of its UI can do nothing: an empty object reads as such.
    let bare: SessionStateReport =
        serde_json::from_value(json!({ "sessionId": "s", "state": "idle", "capabilities": {} }))
            .unwrap();
    assert_eq!(bare.capabilities, Some(HostCapabilities::default()));
}

#[test]
fn session_register_reports_mode_model_and_capabilities() {
    let reported = HostRequest::SessionRegister(SessionRegister {
        request_id: "r-1b".into(),
        session_id: Some("abc124".into()),
        mode: Some("plan".into()),
        model: Some("gpt-5".into()),
        capabilities: Some(HostCapabilities {
            ui: UiCapabilities {
                confirm: true,
                elicitation: true,
            },
            modes: vec!["interactive".into(), "plan".into(), "autopilot".into()],
            client: Some(HostClient {
                name: "copilot-cli".into(),
                version: Some("1.0.102".into()),
            }),
        }),
        ..SessionRegister::default()
    });
    // What a host reports of its agent: mode, model, capabilities.
    assert_eq!(
        round_trip(&reported),
        json!({
            "type": "session.register",
            "requestId": "r-1b",
            "sessionId": "abc124",
            "foreground": false,
            "mode": "plan",
            "model": "gpt-5",
            "capabilities": {
                "ui": { "confirm": true, "elicitation": true },
                "modes": ["interactive", "plan", "autopilot"],
                "client": { "name": "copilot-cli", "version": "1.0.102" }
            }
        })
    );
    let decoded = tap_protocol::decode::<HostRequest>(
        serde_json::to_string(&reported).unwrap().as_bytes(),
        HostRequest::TYPES,
    )
    .unwrap();
    assert_eq!(decoded, reported);
}

#[test]
fn tool_invoke_cancel_and_result_shapes() {
    let reqs = all_requests();
    assert_eq!(
        serde_json::to_value(&reqs[7]).unwrap(),
        json!({
            "type": "tool.invoke",
            "callId": "c-1",
            "sessionId": "abc123",
            "tool": "greet",
            "args": { "name": "Alice" },
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        })
    );
    assert_eq!(
        serde_json::to_value(&reqs[8]).unwrap(),
        json!({ "type": "tool.cancel", "callId": "c-1" })
    );
    let evs = all_events();
    assert_eq!(
        serde_json::to_value(&evs[6]).unwrap(),
        json!({ "type": "tool.result", "callId": "c-1", "data": "Hello, Alice!" })
    );
    assert_eq!(
        serde_json::to_value(&evs[7]).unwrap(),
        json!({
            "type": "tool.result",
            "callId": "c-2",
            "error": "Provider disconnected",
            "errorCode": "DISCONNECTED"
        })
    );
    assert_eq!(
        serde_json::to_value(&evs[5]).unwrap(),
        json!({ "type": "tool.progress", "callId": "c-1", "message": "Capturing... 60%" })
    );
}

#[test]
fn session_ended_and_error_shapes() {
    let evs = all_events();
    assert_eq!(
        serde_json::to_value(&evs[2]).unwrap(),
        json!({
            "type": "session.ended",
            "requestId": "r-2",
            "sessionId": "abc123",
            "reason": "ended by host"
        })
    );
    assert_eq!(
        serde_json::to_value(&evs[3]).unwrap(),
        json!({ "type": "session.ended", "sessionId": "abc123", "reason": "host did not resume" })
    );
    assert_eq!(
        serde_json::to_value(
            evs.iter()
                .find(|e| matches!(e, HostEvent::Error(_)))
                .unwrap()
        )
        .unwrap(),
        json!({
            "type": "error",
            "code": "INVALID_SESSION",
            "message": "Session def456 does not exist",
            "replyTo": "tool.invoke",
            "requestId": "r-5"
        })
    );
}

#[test]
fn session_tools_and_delivery_shapes() {
    let evs = all_events();
    assert_eq!(
        serde_json::to_value(&evs[4]).unwrap(),
        json!({
            "type": "session.tools",
            "sessionId": "abc123",
            "revision": 4,
            "tools": [{
                "name": "greet",
                "description": "Say hello",
                "parameters": { "type": "object", "properties": { "name": { "type": "string" } } },
                "provider": "my-provider",
                "providerId": "p-8f3a",
                "timeoutMs": 120000
            }]
        })
    );
    assert_eq!(
        serde_json::to_value(&evs[8]).unwrap(),
        json!({
            "type": "delivery",
            "sessionId": "abc123",
            "level": "inject",
            "stream": "ci-watch",
            "provider": "ci-watcher",
            "event": "CI failed",
            "prompt": "Fix it",
            "metadata": { "kind": "ci-failure" },
            "ts": "2026-04-26T14:01:00Z"
        })
    );
}

#[test]
fn status_shape_is_camel_case() {
    let v = serde_json::to_value(&all_events()[9]).unwrap();
    assert_eq!(v["type"], "status");
    assert_eq!(v["requestId"], "r-3");
    let s = &v["status"];
    assert_eq!(s["startedAt"], "2026-04-26T14:00:00Z");
    assert_eq!(s["uptimeMs"], 60_000);
    assert_eq!(s["sessions"][0]["hostId"], "h-1");
    assert_eq!(s["sessions"][0]["hostName"], "copilot");
    assert_eq!(s["sessions"][0]["hostDetached"], false);
    assert_eq!(s["sessions"][0]["toolRevision"], 4);
    assert_eq!(s["sessions"][0]["state"], "idle");
    assert_eq!(s["providers"][0]["inFlight"], 2);
    assert_eq!(s["providers"][0]["connectedAt"], "2026-04-26T14:00:01Z");
    no_snake_case_keys(&v);
}

#[test]
fn streams_history_shapes() {
    assert_eq!(
        serde_json::to_value(&all_requests()[10]).unwrap(),
        json!({
            "type": "streams.history",
            "requestId": "r-4",
            "sessionId": "abc123",
            "stream": "ci-watch@ci-watcher",
            "last": 10
        })
    );
    let v = serde_json::to_value(&all_events()[10]).unwrap();
    assert_eq!(v["requestId"], "r-4");
    assert_eq!(v["sessionId"], "abc123");
    assert_eq!(
        v["streams"]["ci-watch@ci-watcher"][0],
        json!({ "ts": "2026-04-26T14:01:00Z", "event": "failed", "level": "surface", "metadata": { "runId": 1 } })
    );
}

#[test]
fn correlation_ids() {
    let requests = all_requests();
    let ids: Vec<Option<&str>> = requests.iter().map(HostRequest::correlation_id).collect();
    assert_eq!(
        ids,
        vec![
            None,        // auth
            None,        // auth
            Some("r-1"), // session.register
            Some("r-2"), // session.end
            None,        // session.state
            None,        // session.state
            None,        // session.event
            Some("c-1"), // tool.invoke
            Some("c-1"), // tool.cancel
            Some("r-3"), // status.get
            Some("r-4"), // streams.history
            Some("r-6"), // tool.precheck
            Some("r-7"), // prompt.apply
        ]
    );
}

#[test]
fn host_request_defaults() {
    let HostRequest::SessionEvent(e) = serde_json::from_value(
        json!({ "type": "session.event", "sessionId": "s", "event": "assistant.intent" }),
    )
    .unwrap() else {
        panic!("expected SessionEvent")
    };
    assert_eq!(e.data, Value::Null);
    let HostRequest::SessionRegister(r) =
        serde_json::from_value(json!({ "type": "session.register", "requestId": "r" })).unwrap()
    else {
        panic!("expected SessionRegister")
    };
    assert!(!r.foreground);
    assert_eq!(r.session_id, None);
}

/// Adds `"futureField": 1` to every object in `v`, except inside free-form payloads.
fn add_future_fields(v: &mut Value) {
    if let Value::Object(o) = v {
        for (k, child) in o.iter_mut() {
            if !matches!(k.as_str(), "data" | "args" | "parameters" | "metadata") {
                add_future_fields(child);
            }
        }
        o.insert("futureField".into(), json!(1));
    } else if let Value::Array(a) = v {
        a.iter_mut().for_each(add_future_fields);
    }
}

#[test]
fn unknown_fields_are_ignored_in_every_host_message() {
    for ev in all_events().into_iter().chain(ask_events()) {
        let mut v = serde_json::to_value(&ev).unwrap();
        add_future_fields(&mut v);
        if let Some(streams) = v.get_mut("streams").and_then(Value::as_object_mut) {
            // `streams` is a map keyed by stream name: the added key is not a stream.
            streams.remove("futureField");
        }
        if let Some(sections) = v.get_mut("sections").and_then(Value::as_object_mut) {
            // `sections` is a map keyed by section name, likewise.
            sections.remove("futureField");
        }
        let back: HostEvent = serde_json::from_value(v.clone())
            .unwrap_or_else(|e| panic!("unknown field rejected: {e}\n{v}"));
        assert_eq!(back, ev);
    }
    for req in all_requests().into_iter().chain(ask_requests()) {
        let mut v = serde_json::to_value(&req).unwrap();
        add_future_fields(&mut v);
        if let Some(sections) = v.get_mut("sections").and_then(Value::as_object_mut) {
            sections.remove("futureField");
        }
        let back =
            tap_protocol::decode::<HostRequest>(v.to_string().as_bytes(), HostRequest::TYPES)
                .unwrap_or_else(|e| panic!("unknown field rejected: {e:?}\n{v}"));
        assert_eq!(back, req);
    }
}

#[test]
fn prompt_apply_applied_and_session_context_shapes() {
    let req = all_requests().pop().unwrap();
    assert_eq!(
        serde_json::to_value(&req).unwrap(),
        json!({"type": "prompt.apply", "requestId": "r-7", "sessionId": "abc123",
               "prompt": "fix the bug", "sections": {"instructions": "Use pnpm."}})
    );
    // `prompt` and `sections` may be left out.
    let HostRequest::PromptApply(p) =
        serde_json::from_value(json!({"type": "prompt.apply", "requestId": "r", "sessionId": "s"}))
            .unwrap()
    else {
        panic!("expected PromptApply")
    };
    assert_eq!((p.prompt.as_str(), p.sections.len()), ("", 0));
    let evs = all_events();
    let n = evs.len();
    assert_eq!(
        serde_json::to_value(&evs[n - 2]).unwrap(),
        json!({"type": "prompt.applied", "requestId": "r-7", "sessionId": "abc123",
               "prompt": "fix the bug", "sections": {"safety": "Be safe."},
               "context": ["CI is passing."]})
    );
    assert_eq!(
        serde_json::to_value(&evs[n - 1]).unwrap(),
        json!({"type": "session.context", "sessionId": "abc123", "provider": "ci",
               "startupContext": "Provider loaded."})
    );
}

#[test]
fn session_warning_shape() {
    let w = HostEvent::SessionWarning(SessionWarning {
        session_id: "s".into(),
        message: "m".into(),
        config: None,
        provider: Some("ci".into()),
    });
    assert_eq!(
        serde_json::to_value(&w).unwrap(),
        json!({"type": "session.warning", "sessionId": "s", "message": "m", "provider": "ci"})
    );
}

#[test]
fn approval_ask_answer_withdrawn_and_mode_shapes() {
    let evs = ask_events();
    assert_eq!(
        serde_json::to_value(&evs[0]).unwrap(),
        json!({"type": "approval.ask", "sessionId": "abc123", "approvalId": "a-1",
               "tool": "delete_file", "provider": "files",
               "message": "Tap: approve the call to 'delete_file' of files?",
               "args": "{\"path\":\"/tmp/x\"}",
               "choices": [{"value": "once", "title": "Approve once"},
                           {"value": "deny", "title": "Deny"}]})
    );
    assert_eq!(
        serde_json::to_value(&evs[1]).unwrap(),
        json!({"type": "approval.withdrawn", "approvalId": "a-1", "outcome": "timed_out"})
    );
    assert_eq!(
        serde_json::to_value(&evs[2]).unwrap(),
        json!({"type": "session.mode.set", "requestId": "m-1", "sessionId": "abc123", "mode": "plan"})
    );
    let reqs = ask_requests();
    assert_eq!(
        serde_json::to_value(&reqs[0]).unwrap(),
        json!({"type": "approval.answer", "approvalId": "a-1", "answer": "session"})
    );
    assert_eq!(
        serde_json::to_value(&reqs[2]).unwrap(),
        json!({"type": "session.mode.result", "requestId": "m-2", "ok": false, "message": "not now"})
    );
    // Every answer the contract names, by its wire value; anything else is refused.
    for a in ["once", "session", "hour", "always", "deny", "dismissed"] {
        let frame = json!({"type": "approval.answer", "approvalId": "a", "answer": a}).to_string();
        let HostRequest::ApprovalAnswer(got) =
            tap_protocol::decode::<HostRequest>(frame.as_bytes(), HostRequest::TYPES).unwrap()
        else {
            panic!("expected ApprovalAnswer")
        };
        assert_eq!(got.answer.as_str(), a);
    }
    let frame = r#"{"type":"approval.answer","approvalId":"a","answer":"yes"}"#;
    assert!(tap_protocol::decode::<HostRequest>(frame.as_bytes(), HostRequest::TYPES).is_err());
    assert_eq!(
        reqs.iter()
            .map(HostRequest::correlation_id)
            .collect::<Vec<_>>(),
        vec![None, Some("m-1"), Some("m-2")]
    );
}

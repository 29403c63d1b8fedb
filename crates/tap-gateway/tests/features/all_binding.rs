//! `"all"` binding and `session.ready` (spec: "`"all"` binding and session churn",
//! "`session.ready`", capability matrix "Bind to any session / all"), through the in-process
//! transport (`Gateway::connect_local`, trust internal) and real session hosts.

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_gateway::LocalProvider;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_testkit::*;

/// An in-process provider speaking JSON, like the raw socket helper.
struct Local(LocalProvider);

impl Local {
    async fn connect(gw: &TestGateway) -> (Self, Value) {
        let mut l = Self(gw.handle.gateway().connect_local());
        let sessions = l.expect("sessions").await;
        (l, sessions)
    }

    fn send(&self, v: Value) {
        self.0.send_json(&v).unwrap();
    }

    async fn recv(&mut self) -> Value {
        tokio::time::timeout(PATIENCE, self.0.recv_json())
            .await
            .expect("timed out waiting for a message")
            .expect("local connection closed")
    }

    /// Next message other than `sessions.updated`, which must be `kind`.
    async fn expect(&mut self, kind: &str) -> Value {
        loop {
            let v = self.recv().await;
            if v["type"] == "sessions.updated" && kind != "sessions.updated" {
                continue;
            }
            assert_eq!(v["type"], kind, "expected '{kind}', got {v}");
            return v;
        }
    }

    async fn expect_error(&mut self, code: &str) -> Value {
        let v = self.expect("error").await;
        assert_eq!(v["code"], code, "unexpected error: {v}");
        v
    }

    /// `hello {session: "all"}`; returns the sessions it was registered in (from the
    /// `session.lifecycle started` that follow `hello.ack`), in order.
    async fn hello_all(&mut self, name: &str, extra: Value, live: usize) -> Vec<String> {
        let mut hello =
            json!({"type": "hello", "name": name, "protocolVersion": 2, "session": "all"});
        hello
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        self.send(hello);
        let ack = self.expect("hello.ack").await;
        assert_eq!(ack["sessionId"], "all", "{ack}");
        let mut started = Vec::new();
        for _ in 0..live {
            let m = self.expect("session.lifecycle").await;
            assert_eq!(m["state"], "started", "{m}");
            started.push(m["sessionId"].as_str().unwrap().to_string());
        }
        started
    }
}

async fn session(host: &HostClient, id: &str) -> String {
    host.register_session(SessionRegister {
        session_id: Some(id.into()),
        label: Some(id.into()),
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

/// The tool names registered in `session` right now (gateway state, not the debounced copy).
async fn tools_in(host: &HostClient, session: &str) -> Vec<String> {
    let status = host.status().await.unwrap();
    status
        .sessions
        .iter()
        .find(|s| s.id == session)
        .map(|s| s.tools.clone())
        .unwrap_or_default()
}

/// Invokes `tool` in `session` and has the local provider answer; returns the `tool.call`.
async fn call_through(host: &HostClient, p: &mut Local, session: &str, tool: &str) -> Value {
    let (_, rx) = host.start_invoke(session, tool, json!({})).unwrap();
    let call = p.expect("tool.call").await;
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}));
    assert_eq!(result_of(rx).await.data, Some(json!("ok")));
    call
}

#[tokio::test]
async fn a_local_provider_has_internal_trust_and_hears_sessions_first() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (_p, sessions) = Local::connect(&gw).await;
    assert_eq!(sessions["active"][0]["id"], s.id.as_str());
    assert!(sessions.get("token").is_none());
    let status = host.status().await.unwrap();
    assert_eq!(status.providers.len(), 1);
    assert_eq!(status.providers[0].trust, "internal");
    assert_eq!(status.providers[0].remote, "local");
}

#[tokio::test]
async fn socket_providers_may_not_bind_to_all() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "hello", "name": "p", "protocolVersion": 2, "session": "all"}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "hello");
}

#[tokio::test]
async fn hello_all_registers_in_every_active_session() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let a = session(&host, "a").await;
    let b = session(&host, "b").await;
    let (mut p, _) = Local::connect(&gw).await;
    let started = p
        .hello_all("everywhere", json!({"tools": [tool("where")]}), 2)
        .await;
    assert_eq!(started, [a.clone(), b.clone()]);
    assert_eq!(tools_in(&host, &a).await, ["where"]);
    assert_eq!(tools_in(&host, &b).await, ["where"]);
    assert_eq!(
        call_through(&host, &mut p, &a, "where").await["sessionId"],
        a
    );
    assert_eq!(
        call_through(&host, &mut p, &b, "where").await["sessionId"],
        b
    );
    let status = host.status().await.unwrap();
    assert_eq!(status.providers[0].session.as_deref(), Some("all"));
}

#[tokio::test]
async fn a_new_session_gets_nothing_until_session_ready() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let a = session(&host, "a").await;
    let (mut p, _) = Local::connect(&gw).await;
    let rule = json!({"match": {"tool": "shell"}, "action": "deny", "reason": "no shell"});
    p.hello_all(
        "late",
        json!({"tools": [tool("t")], "context": "ctx", "hooks": {"onPreToolUse": [rule]}}),
        1,
    )
    .await;
    let b = session(&host, "b").await;
    let updated = p.expect("sessions.updated").await;
    assert_eq!(updated["active"].as_array().unwrap().len(), 2);

    // Not registered in b: no tools, no rules (deferred too), no context.
    assert!(tools_in(&host, &b).await.is_empty());
    let r = host.invoke(&b, "t", json!({})).await.unwrap();
    assert_eq!(
        r.error_code.map(|c| c.to_string()).as_deref(),
        Some("NOT_FOUND")
    );
    let d = host.precheck(&b, "shell", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(d.decision).unwrap(), "allow");
    let applied = host
        .apply_prompt(&b, "hi", Default::default())
        .await
        .unwrap();
    assert!(applied.context.is_empty());
    // In a, everything is there.
    let d = host.precheck(&a, "shell", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(d.decision).unwrap(), "deny");

    p.send(json!({"type": "session.ready", "sessionId": b}));
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started");
    assert_eq!(started["sessionId"], b.as_str());
    assert_eq!(tools_in(&host, &b).await, ["t"]);
    assert_eq!(call_through(&host, &mut p, &b, "t").await["sessionId"], b);
    let d = host.precheck(&b, "shell", json!({})).await.unwrap();
    assert_eq!(d.reason.as_deref(), Some("no shell"));
    let applied = host
        .apply_prompt(&b, "hi", Default::default())
        .await
        .unwrap();
    assert_eq!(applied.context, ["ctx"]);
}

#[tokio::test]
async fn session_ready_for_an_unknown_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("x", json!({}), 0).await;
    p.send(json!({"type": "session.ready", "sessionId": "nope"}));
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "session.ready");
    assert_eq!(e["sessionId"], "nope");
}

#[tokio::test]
async fn session_ready_from_a_provider_bound_to_one_session_is_unauthorized() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = Local::connect(&gw).await;
    p.send(json!({"type": "hello", "name": "one", "protocolVersion": 2, "session": s.id}));
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "session.ready", "sessionId": s.id}));
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["replyTo"], "session.ready");
}

#[tokio::test]
async fn session_ready_with_a_tool_taken_in_that_session_is_tool_conflict() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("x", json!({"tools": [tool("shared")]}), 0)
        .await;
    let b = session(&host, "b").await;
    let _other = gw.bound("other", &b, json!([tool("shared")])).await;
    p.send(json!({"type": "session.ready", "sessionId": b}));
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert_eq!(e["replyTo"], "session.ready");
    assert!(e["message"].as_str().unwrap().contains("other"), "{e}");
    assert_eq!(tools_in(&host, &b).await, ["shared"]);
}

#[tokio::test]
async fn hello_all_with_a_tool_taken_in_one_session_binds_nowhere() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let a = session(&host, "a").await;
    let b = session(&host, "b").await;
    let _other = gw.bound("other", &b, json!([tool("shared")])).await;
    let (mut p, _) = Local::connect(&gw).await;
    p.send(
        json!({"type": "hello", "name": "x", "protocolVersion": 2, "session": "all",
                  "tools": [tool("shared")]}),
    );
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert_eq!(e["replyTo"], "hello");
    assert!(
        tools_in(&host, &a).await.is_empty(),
        "atomic: not in a either"
    );
}

#[tokio::test]
async fn a_session_ending_gets_shutdown_ready_and_the_provider_stays_bound_to_the_others() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let a = session(&host, "a").await;
    let b = session(&host, "b").await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("stay", json!({"tools": [tool("t")]}), 2).await;

    let ending = host.end_session(&a);
    tokio::pin!(ending);
    let pending = tokio::select! {
        m = p.expect("session.lifecycle") => m,
        _ = &mut ending => panic!("ended before the provider answered"),
    };
    assert_eq!(pending["state"], "shutdown.pending");
    assert_eq!(pending["sessionId"], a.as_str());
    p.send(json!({"type": "shutdown.ready", "sessionId": a}));
    let ended = tokio::time::timeout(PATIENCE, ending)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended.session_id, a);

    assert_eq!(call_through(&host, &mut p, &b, "t").await["sessionId"], b);
    let status = host.status().await.unwrap();
    assert_eq!(status.providers[0].state, "bound");
    assert_eq!(status.providers[0].session.as_deref(), Some("all"));
    // shutdown.ready for a session it is no longer in.
    p.send(json!({"type": "shutdown.ready", "sessionId": a}));
    p.expect_error("INVALID_SESSION").await;
}

#[tokio::test]
async fn push_from_an_all_provider_names_its_session_or_broadcasts() {
    let gw = TestGateway::start().await;
    let mut host_a = gw.host().await;
    let mut host_b = gw.host().await;
    let a = session(&host_a, "a").await;
    let b = session(&host_b, "b").await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("pusher", json!({}), 2).await;

    p.send(json!({"type": "push", "level": "surface", "event": "where?"}));
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "push");

    p.send(json!({"type": "push", "level": "surface", "event": "to b", "sessionId": b}));
    p.send(json!({"type": "push", "level": "surface", "event": "to all", "broadcast": true}));
    let d = next_host_event(&mut host_b, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    assert_eq!(
        (d.session_id.as_str(), d.event.as_str()),
        (b.as_str(), "to b")
    );
    let d = next_host_event(&mut host_b, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    assert_eq!(d.event, "to all");
    let d = next_host_event(&mut host_a, |e| matches!(e, HostEvent::Delivery(_))).await;
    let HostEvent::Delivery(d) = d else {
        unreachable!()
    };
    assert_eq!(
        (d.session_id.as_str(), d.event.as_str()),
        (a.as_str(), "to all")
    );

    p.send(json!({"type": "push", "level": "keep", "event": "x", "sessionId": "nope"}));
    p.expect_error("INVALID_SESSION").await;
}

#[tokio::test]
async fn updates_without_session_id_reach_every_session_with_one_ack_each() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let a = session(&host, "a").await;
    let b = session(&host, "b").await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("upd", json!({"tools": [tool("t0")]}), 2).await;

    p.send(json!({"type": "tools.update", "requestId": "r1", "tools": [tool("t1")]}));
    let mut acks = [p.expect("ack").await, p.expect("ack").await];
    acks.sort_by_key(|a| a["sessionId"].as_str().unwrap().to_string());
    assert_eq!(acks[0]["sessionId"], a.as_str());
    assert_eq!(acks[1]["sessionId"], b.as_str());
    assert!(acks
        .iter()
        .all(|x| x["requestId"] == "r1" && x["revision"] == 1));
    assert_eq!(tools_in(&host, &a).await, ["t1"]);
    assert_eq!(tools_in(&host, &b).await, ["t1"]);

    // With sessionId: that session only, its own revision.
    p.send(json!({"type": "tools.update", "requestId": "r2", "sessionId": a, "tools": [tool("only_a")]}));
    let ack = p.expect("ack").await;
    assert_eq!(
        (ack["sessionId"].as_str(), ack["revision"].as_u64()),
        (Some(a.as_str()), Some(2))
    );
    assert_eq!(tools_in(&host, &a).await, ["only_a"]);
    assert_eq!(tools_in(&host, &b).await, ["t1"]);

    // A later session gets the declarations as changed without sessionId.
    let c = session(&host, "c").await;
    p.send(json!({"type": "session.ready", "sessionId": c}));
    p.expect("session.lifecycle").await;
    assert_eq!(tools_in(&host, &c).await, ["t1"]);
}

#[tokio::test]
async fn an_update_before_any_session_is_acknowledged_as_all() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("early", json!({}), 0).await;
    p.send(json!({"type": "context.update", "requestId": "c1", "context": "later"}));
    let ack = p.expect("ack").await;
    assert_eq!(ack["sessionId"], "all");
    assert_eq!(ack["revision"], 1);
    let s = session(&host, "s").await;
    p.send(json!({"type": "session.ready", "sessionId": s}));
    p.expect("session.lifecycle").await;
    let applied = host
        .apply_prompt(&s, "hi", Default::default())
        .await
        .unwrap();
    assert_eq!(applied.context, ["later"]);
}

#[tokio::test]
async fn stream_query_from_an_all_provider_names_its_session_and_may_read_others() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let mut other = gw.bound("other", &s.id, json!([])).await;
    other
        .send(json!({"type": "push", "level": "keep", "event": "theirs", "stream": "log"}))
        .await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("reader", json!({}), 1).await;
    p.send(json!({"type": "stream.query", "queryId": "q0", "streams": ["log@other"]}));
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "stream.query");
    // Internal trust reads another provider's stream (the push above was stored first:
    // `other` answered nothing, so poll until it is there).
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        p.send(
            json!({"type": "stream.query", "queryId": "q1", "sessionId": s.id,
                      "streams": ["log@other"]}),
        );
        let h = p.expect("stream.history").await;
        if let Some(e) = h["streams"]["log@other"].as_array().and_then(|l| l.first()) {
            assert_eq!(e["event"], "theirs");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "push never stored");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn dropping_a_local_provider_disconnects_it() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = Local::connect(&gw).await;
    p.hello_all("gone", json!({"tools": [tool("t")]}), 1).await;
    let (_, rx) = host.start_invoke(&s.id, "t", json!({})).unwrap();
    p.expect("tool.call").await;
    drop(p);
    let r = result_of(rx).await;
    assert_eq!(
        r.error_code.map(|c| c.to_string()).as_deref(),
        Some("DISCONNECTED")
    );
    assert!(tools_in(&host, &s.id).await.is_empty());
}

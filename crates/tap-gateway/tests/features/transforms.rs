//! Prompt transforms, ambient context and startup context (spec: "Transform rules",
//! "Protected prompt sections", `transform.request` / `transform.result`,
//! `context.update`, `hooks.update` transforms, `hello` context / startup_context), driven
//! over real sockets: providers as raw WebSockets, the session host through `tap-client`.

use tap_testkit::*;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use tap_client::{ClientError, HostClient};
use tap_protocol::host::{HostEvent, PromptApplied};
use tap_protocol::limits::TRANSFORM_TIMEOUT;
use tap_protocol::ErrorCode;

/// A provider bound to `session` with the given `hello` extras (hooks, context, ...).
async fn bound_with(gw: &TestGateway, name: &str, session: &str, extra: Value) -> Provider {
    let (mut p, _) = gw.authed().await;
    let mut hello = json!({"type": "hello", "name": name, "protocolVersion": 2,
                           "session": session});
    for (k, v) in extra.as_object().unwrap() {
        hello[k] = v.clone();
    }
    p.send(hello).await;
    p.expect("hello.ack").await;
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    p
}

fn sections(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn apply(host: &HostClient, session: &str, pairs: &[(&str, &str)]) -> PromptApplied {
    tokio::time::timeout(
        PATIENCE,
        host.apply_prompt(session, "user text", sections(pairs)),
    )
    .await
    .expect("prompt.apply answered")
    .expect("prompt.apply succeeded")
}

fn transforms(t: Value) -> Value {
    json!({"hooks": {"transforms": t}})
}

#[tokio::test]
async fn append_prepend_replace_apply_static_content_to_sent_sections_only() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bound_with(
        &gw,
        "static",
        &s.id,
        transforms(json!({
            "custom_instructions": {"action": "append", "content": "Use pnpm."},
            "tone": {"action": "prepend", "content": "Be brief."},
            "environment": {"action": "replace", "content": "Linux"},
            "not_sent": {"action": "append", "content": "never seen"},
        })),
    )
    .await;
    let a = apply(
        &host,
        &s.id,
        &[
            ("custom_instructions", "Write tests."),
            ("tone", "Be kind."),
            ("environment", "Windows"),
            ("untouched", "same"),
            ("empty", ""),
        ],
    )
    .await;
    assert_eq!(a.session_id, s.id);
    assert_eq!(a.prompt, "user text");
    assert_eq!(
        a.sections,
        sections(&[
            ("custom_instructions", "Write tests.\nUse pnpm."),
            ("tone", "Be brief.\nBe kind."),
            ("environment", "Linux"),
            ("untouched", "same"),
            ("empty", ""),
        ]),
        "a transform for a section the host did not send creates nothing"
    );
    assert!(a.context.is_empty());
}

#[tokio::test]
async fn protected_sections_accept_only_append_and_refuse_the_rest() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    for (section, action) in [
        ("safety", "replace"),
        ("safety", "prepend"),
        ("safety", "callback"),
        ("identity", "replace"),
        ("identity", "prepend"),
        ("identity", "callback"),
    ] {
        let (mut p, _) = gw.authed().await;
        p.send(
            json!({"type": "hello", "name": "bad", "protocolVersion": 2, "session": s.id,
                      "hooks": {"transforms": {section: {"action": action, "content": "x"}}}}),
        )
        .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], "hello");
        assert!(
            e["message"].as_str().unwrap().contains(section),
            "{section}/{action}: {e}"
        );
    }
    // Appends from several providers: concatenated in registration order.
    let mut a = bound_with(
        &gw,
        "a",
        &s.id,
        transforms(json!({"safety": {"action": "append", "content": "a-safe"}})),
    )
    .await;
    let _b = bound_with(
        &gw,
        "b",
        &s.id,
        transforms(json!({"safety": {"action": "append", "content": "b-safe"},
                          "identity": {"action": "append", "content": "b-id"}})),
    )
    .await;
    // hooks.update cannot sneak a replace in either; the error echoes the requestId and
    // the old transforms stay.
    a.send(json!({"type": "hooks.update", "requestId": "r1",
                  "transforms": {"safety": {"action": "replace", "content": "pwned"}}}))
        .await;
    let e = a.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["requestId"], "r1");
    assert_eq!(e["replyTo"], "hooks.update");
    let r = apply(
        &host,
        &s.id,
        &[("safety", "Never harm."), ("identity", "I am Copilot.")],
    )
    .await;
    assert_eq!(r.sections["safety"], "Never harm.\na-safe\nb-safe");
    assert_eq!(r.sections["identity"], "I am Copilot.\nb-id");
}

#[tokio::test]
async fn callback_round_trip_replaces_the_section_with_the_providers_content() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _first = bound_with(
        &gw,
        "first",
        &s.id,
        transforms(json!({"code_change_rules": {"action": "append", "content": "static"}})),
    )
    .await;
    let mut p = bound_with(
        &gw,
        "dyn",
        &s.id,
        transforms(json!({"code_change_rules": {"action": "callback"}})),
    )
    .await;
    let apply = host.apply_prompt(
        &s.id,
        "hi",
        sections(&[("code_change_rules", "base"), ("other", "o")]),
    );
    tokio::pin!(apply);
    let req = tokio::select! {
        r = p.recv() => r,
        a = &mut apply => panic!("answered before the callback: {a:?}"),
    };
    assert_eq!(req["type"], "transform.request", "{req}");
    assert_eq!(req["sessionId"], s.id.as_str());
    assert_eq!(req["section"], "code_change_rules");
    // `current` is the section as the providers before this one left it.
    assert_eq!(req["current"], "base\nstatic");
    let call_id = req["callId"].as_str().unwrap().to_string();
    assert!(!call_id.is_empty());
    p.send(json!({"type": "transform.result", "callId": call_id,
                  "content": "base\nstatic\nlive: 3 deploys"}))
        .await;
    let a = tokio::time::timeout(PATIENCE, apply)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        a.sections["code_change_rules"],
        "base\nstatic\nlive: 3 deploys"
    );
    assert_eq!(a.sections["other"], "o");
    // A second answer for the same callId is late and ignored: no error comes back.
    p.send(json!({"type": "transform.result", "callId": call_id, "content": "late"}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    assert_eq!(p.expect("stream.history").await["queryId"], "q");
    // The apply is a trace: the callback's round trip is its child.
    gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&gw).await;
    let list = c.ok("traces.list", json!({"name": "prompt.apply"})).await;
    let id = &list["traces"][0]["traceId"];
    let spans = c.ok("traces.get", json!({"traceId": id})).await;
    let spans = spans["spans"].as_array().unwrap();
    let root = spans.iter().find(|s| s["name"] == "prompt.apply").unwrap();
    let tx = spans
        .iter()
        .find(|s| s["name"] == "transform.request")
        .unwrap();
    assert_eq!(tx["parentSpanId"], root["spanId"]);
    assert_eq!(tx["status"], "ok");
    assert_eq!(tx["attributes"]["section"], "code_change_rules");
}

#[tokio::test(start_paused = true)]
async fn callback_provider_disconnecting_leaves_the_section_unchanged_at_once() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound_with(
        &gw,
        "flaky",
        &s.id,
        transforms(json!({"x": {"action": "callback"}})),
    )
    .await;
    let _after = bound_with(
        &gw,
        "after",
        &s.id,
        transforms(json!({"x": {"action": "append", "content": "after"}})),
    )
    .await;
    let started = tokio::time::Instant::now();
    let apply = host.apply_prompt(&s.id, "hi", sections(&[("x", "x0")]));
    tokio::pin!(apply);
    let req = tokio::select! {
        r = p.recv() => r,
        a = &mut apply => panic!("answered before the callback: {a:?}"),
    };
    assert_eq!(req["type"], "transform.request");
    drop(p);
    let a = apply.await.unwrap();
    assert!(
        started.elapsed() < TRANSFORM_TIMEOUT,
        "waited {:?}: a disconnect must not wait for the timeout",
        started.elapsed()
    );
    assert_eq!(a.sections["x"], "x0\nafter");
}

#[tokio::test]
async fn transform_result_from_another_provider_does_not_complete_the_request() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound_with(
        &gw,
        "owner",
        &s.id,
        transforms(json!({"x": {"action": "callback"}})),
    )
    .await;
    let mut other = bound_with(&gw, "other", &s.id, json!({})).await;
    let apply = host.apply_prompt(&s.id, "hi", sections(&[("x", "x0")]));
    tokio::pin!(apply);
    let req = tokio::select! {
        r = p.recv() => r,
        a = &mut apply => panic!("answered before the callback: {a:?}"),
    };
    other
        .send(json!({"type": "transform.result", "callId": req["callId"], "content": "hijack"}))
        .await;
    // Let the foreign answer be processed before the real one.
    other
        .send(json!({"type": "stream.query", "queryId": "q"}))
        .await;
    other.expect("stream.history").await;
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "real"}))
        .await;
    let a = tokio::time::timeout(PATIENCE, apply)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.sections["x"], "real");
}

#[tokio::test]
async fn context_of_every_bound_provider_comes_with_every_prompt() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = bound_with(&gw, "ci", &s.id, json!({"context": "CI is passing."})).await;
    let _none = bound_with(&gw, "quiet", &s.id, json!({})).await;
    let _b = bound_with(
        &gw,
        "deploy",
        &s.id,
        json!({"context": "No active deploys."}),
    )
    .await;
    for _ in 0..2 {
        let r = apply(&host, &s.id, &[]).await;
        assert_eq!(r.context, vec!["CI is passing.", "No active deploys."]);
        assert!(r.sections.is_empty());
    }

    // context.update: ack with the requestId, the bound session and revision 1, 2, ...
    a.send(json!({"type": "context.update", "requestId": "c1",
                  "context": "CI is failing on main."}))
        .await;
    let ack = a.expect("ack").await;
    assert_eq!(
        ack,
        json!({"type": "ack", "requestId": "c1", "sessionId": s.id, "revision": 1})
    );
    let r = apply(&host, &s.id, &[]).await;
    assert_eq!(
        r.context,
        vec!["CI is failing on main.", "No active deploys."]
    );

    // A wrong sessionId: INVALID_SESSION with the requestId; the context stays.
    a.send(
        json!({"type": "context.update", "requestId": "c2", "sessionId": "elsewhere",
                  "context": "nope"}),
    )
    .await;
    let e = a.expect_error("INVALID_SESSION").await;
    assert_eq!(e["requestId"], "c2");
    assert_eq!(e["replyTo"], "context.update");

    // Without `context` the provider's context is cleared; the revision goes on.
    a.send(json!({"type": "context.update", "requestId": "c3", "sessionId": s.id}))
        .await;
    let ack = a.expect("ack").await;
    assert_eq!(ack["requestId"], "c3");
    assert_eq!(ack["revision"], 2);
    let r = apply(&host, &s.id, &[]).await;
    assert_eq!(r.context, vec!["No active deploys."]);
}

#[tokio::test]
async fn context_update_before_hello_is_invalid_session() {
    let gw = TestGateway::start().await;
    let (_host, _s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(json!({"type": "context.update", "requestId": "c1", "context": "x"}))
        .await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["replyTo"], "context.update");
}

#[tokio::test]
async fn hooks_update_sets_and_null_removes_transforms_with_acks() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound_with(
        &gw,
        "p",
        &s.id,
        transforms(json!({"a": {"action": "append", "content": "a1"}})),
    )
    .await;
    p.send(
        json!({"type": "hooks.update", "requestId": "h1", "sessionId": s.id,
                  "transforms": {"b": {"action": "prepend", "content": "b1"}}}),
    )
    .await;
    let ack = p.expect("ack").await;
    assert_eq!(
        ack,
        json!({"type": "ack", "requestId": "h1", "sessionId": s.id, "revision": 1})
    );
    let r = apply(&host, &s.id, &[("a", "A"), ("b", "B")]).await;
    assert_eq!(r.sections, sections(&[("a", "A\na1"), ("b", "b1\nB")]));

    p.send(json!({"type": "hooks.update", "requestId": "h2",
                  "transforms": {"a": null, "b": {"action": "replace", "content": "b2"}}}))
        .await;
    assert_eq!(p.expect("ack").await["revision"], 2);
    let r = apply(&host, &s.id, &[("a", "A"), ("b", "B")]).await;
    assert_eq!(r.sections, sections(&[("a", "A"), ("b", "b2")]));

    // An invalid update changes nothing and answers with the requestId.
    p.send(json!({"type": "hooks.update", "requestId": "h3",
                  "transforms": {"b": null, "c": {"action": "append"}}}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["requestId"], "h3");
    let r = apply(&host, &s.id, &[("b", "B"), ("c", "C")]).await;
    assert_eq!(r.sections, sections(&[("b", "b2"), ("c", "C")]));
}

#[tokio::test]
async fn hooks_update_with_rules_and_transforms_applies_both() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound_with(&gw, "p", &s.id, json!({})).await;
    p.send(json!({"type": "hooks.update", "requestId": "h1",
                  "onPreToolUse": [{"match": {"tool": "shell"}, "action": "deny", "reason": "no"}],
                  "transforms": {"t": {"action": "append", "content": "t1"}}}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "h1");
    let r = apply(&host, &s.id, &[("t", "T")]).await;
    assert_eq!(r.sections["t"], "T\nt1");
    // A bad rule refuses the whole message: the transform part is not applied either.
    p.send(json!({"type": "hooks.update", "requestId": "h2",
                  "onPreToolUse": [{"match": {"args": "("}, "action": "deny", "reason": "no"}],
                  "transforms": {"t": null}}))
        .await;
    let e = p.expect("error").await;
    assert_eq!(e["requestId"], "h2");
    let r = apply(&host, &s.id, &[("t", "T")]).await;
    assert_eq!(r.sections["t"], "T\nt1");
}

#[tokio::test]
async fn startup_context_reaches_the_host_once_per_bind() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let _p = bound_with(
        &gw,
        "mon",
        &s.id,
        json!({"startup_context": "Provider loaded. Monitoring 3 endpoints.",
               "context": "per prompt"}),
    )
    .await;
    let e = next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await;
    let HostEvent::SessionContext(c) = e else {
        unreachable!()
    };
    assert_eq!(c.session_id, s.id);
    assert_eq!(c.provider, "mon");
    assert_eq!(
        c.startup_context,
        "Provider loaded. Monitoring 3 endpoints."
    );
    // It is not part of every prompt; `context` is.
    let r = apply(&host, &s.id, &[]).await;
    assert_eq!(r.context, vec!["per prompt"]);
    // A provider without startup_context sends nothing; the next session.context is
    // the one from the provider bound after it.
    let _q = bound_with(&gw, "plain", &s.id, json!({})).await;
    let _r = bound_with(&gw, "second", &s.id, json!({"startup_context": "two"})).await;
    let e = next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await;
    let HostEvent::SessionContext(c) = e else {
        unreachable!()
    };
    assert_eq!(
        (c.provider.as_str(), c.startup_context.as_str()),
        ("second", "two")
    );
}

#[tokio::test]
async fn unbound_and_disconnected_providers_no_longer_transform() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let p = bound_with(
        &gw,
        "gone",
        &s.id,
        json!({"context": "ctx", "hooks": {"transforms": {"x": {"action": "append", "content": "g"}}}}),
    )
    .await;
    let mut q = bound_with(
        &gw,
        "moved",
        &s.id,
        json!({"context": "ctx2", "hooks": {"transforms": {"x": {"action": "append", "content": "m"}}}}),
    )
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "0")]).await.sections["x"],
        "0\ng\nm"
    );
    drop(p);
    // A failed rebind leaves `moved` unbound.
    q.send(json!({"type": "hello", "name": "moved", "protocolVersion": 2, "session": "nope"}))
        .await;
    q.expect_error("INVALID_SESSION").await;
    let r = tokio::time::timeout(PATIENCE, async {
        loop {
            let r = apply(&host, &s.id, &[("x", "0")]).await;
            if r.sections["x"] == "0" {
                return r;
            }
        }
    })
    .await
    .expect("transforms of gone providers stop applying");
    assert!(r.context.is_empty(), "{:?}", r.context);
}

#[tokio::test]
async fn prompt_apply_for_an_unknown_session_is_invalid_session() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let err = host
        .apply_prompt("no-such", "hi", BTreeMap::new())
        .await
        .unwrap_err();
    match err {
        ClientError::Refused(e) => {
            assert_eq!(e.code, ErrorCode::InvalidSession);
            assert_eq!(e.reply_to.as_deref(), Some("prompt.apply"));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn any_host_may_apply_a_session_prompt() {
    let gw = TestGateway::start().await;
    let (_owner, s) = gw.host_with_session().await;
    let _p = bound_with(&gw, "p", &s.id, json!({"context": "c"})).await;
    let other = gw.host().await;
    let r = apply(&other, &s.id, &[]).await;
    assert_eq!(r.context, vec!["c"]);
}

/// A paired (external) provider: `auth {mode: "pair"}`, the code the user would read from
/// the gateway's surfaces, `auth.confirm`; `sessions` consumed.
async fn paired(gw: &TestGateway) -> Provider {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::MaybeTlsStream;
    let g = gw.handle.gateway();
    let mut req = gw.url().into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", "https://app.example.test".parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true)
        .await
        .unwrap();
    let mut p = Provider::from_ws(ws);
    let me = match p.ws.get_ref() {
        MaybeTlsStream::Plain(s) => s.local_addr().unwrap().to_string(),
        _ => unreachable!("tests use plain TCP"),
    };
    p.send(json!({"type": "auth", "mode": "pair", "name": "ext"}))
        .await;
    p.expect("auth.pairing").await;
    let entry = g
        .pairing_list()
        .into_iter()
        .find(|e| e.remote == me)
        .expect("pairing entry");
    p.send(json!({"type": "auth.confirm", "code": entry.code.unwrap()}))
        .await;
    p.expect("sessions").await;
    p
}

#[tokio::test]
async fn external_providers_may_only_append_statically() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = paired(&gw).await;
    p.send(
        json!({"type": "hello", "name": "ext", "protocolVersion": 2, "session": s.id,
                  "hooks": {"transforms": {"x": {"action": "append", "content": "ext-x"}}}}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    let r = apply(&host, &s.id, &[("x", "0")]).await;
    assert_eq!(r.sections["x"], "0\next-x");

    p.send(json!({"type": "hooks.update", "requestId": "h1",
                  "transforms": {"y": {"action": "append", "content": "ext-y"}, "x": null}}))
        .await;
    assert_eq!(p.expect("ack").await["requestId"], "h1");
    for action in ["replace", "prepend", "callback"] {
        p.send(json!({"type": "hooks.update", "requestId": action,
                      "transforms": {"y": {"action": action, "content": "z"}}}))
            .await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["requestId"], action);
    }
    let r = apply(&host, &s.id, &[("x", "0"), ("y", "1")]).await;
    assert_eq!(r.sections, sections(&[("x", "0"), ("y", "1\next-y")]));
}

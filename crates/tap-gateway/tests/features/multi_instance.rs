//! Multi-instance providers over real sockets (spec "Multi-instance providers", decisions
//! M1–M6 and F4): instances of one provider name share their tools, the host sees one copy
//! with a `target` parameter and a generated `list_<name>_instances`; calls go to their
//! `target` or the most recently active instance; a `retryable` failure is retried once on
//! another instance. Includes the hostile cases: a `target` that is gone or not a string,
//! an instance leaving mid-call, instances racing to bind and to answer.
use tap_testkit::*;

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, HostToolResult, SessionTools};
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// An instance of provider `name` bound to `session`; `extra` hello fields win.
async fn instance(
    gw: &TestGateway,
    name: &str,
    session: &str,
    id: &str,
    extra: Value,
) -> (Provider, Value) {
    let (mut p, _) = gw.authed().await;
    let mut h = json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session,
                       "instance": id, "metadata": {"title": format!("Title of {id}")},
                       "tools": [tool("screenshot")]});
    for (k, v) in extra.as_object().unwrap() {
        h[k] = v.clone();
    }
    p.send(h).await;
    let ack = p.expect("hello.ack").await;
    assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    (p, ack)
}

/// A browser tab with the `screenshot` tool.
async fn tab(gw: &TestGateway, session: &str, id: &str) -> Provider {
    instance(gw, "browser", session, id, json!({})).await.0
}

fn invoke(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> oneshot::Receiver<HostEvent> {
    host.start_invoke(session, tool, args).unwrap().1
}

async fn answer(p: &mut Provider, call: &Value, data: Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
}

async fn fail(p: &mut Provider, call: &Value, code: &str, retryable: bool) {
    p.send(
        json!({"type": "tool.result", "id": call["id"], "error": format!("{code} here"),
                  "errorCode": code, "retryable": retryable}),
    )
    .await;
}

fn code(r: &HostToolResult) -> Option<&str> {
    r.error_code.as_ref().map(ErrorCode::as_str)
}

/// The next `session.tools` for `session` satisfying `pred`.
async fn tools_where(
    host: &mut HostClient,
    session: &str,
    pred: impl Fn(&SessionTools) -> bool,
) -> SessionTools {
    match next_host_event(
        host,
        |e| matches!(e, HostEvent::SessionTools(t) if t.session_id == session && pred(t)),
    )
    .await
    {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

fn names(t: &SessionTools) -> Vec<&str> {
    t.tools.iter().map(|t| t.name.as_str()).collect()
}

/// The `target` enum of `tool` in a published set (`null` when absent).
fn targets(t: &SessionTools, tool: &str) -> Value {
    t.tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| t.parameters.to_value()["properties"]["target"]["enum"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_shared_tool_offers_as_targets_only_the_instances_that_declare_it() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let _a = instance(
        &gw,
        "browser",
        &s.id,
        "tab-a",
        json!({"tools": [tool("screenshot"), tool("click")]}),
    )
    .await;
    let _b = tab(&gw, &s.id, "tab-b").await;
    let t = tools_where(&mut host, &s.id, |t| {
        targets(t, "screenshot") == json!(["tab-a", "tab-b"])
    })
    .await;
    assert_eq!(names(&t), ["click", "list_browser_instances", "screenshot"]);
    assert_eq!(targets(&t, "click"), json!(["tab-a"]));
    let shot = t.tools.iter().find(|t| t.name == "screenshot").unwrap();
    assert_eq!(shot.provider, "browser");
    // Optional: without it the most recently active instance runs the call.
    assert!(
        shot.parameters.to_value().get("required").is_none(),
        "{:?}",
        shot.parameters
    );
    let list = t
        .tools
        .iter()
        .find(|t| t.name == "list_browser_instances")
        .unwrap();
    assert_eq!(list.provider, "browser");
    assert_eq!(list.provider_id, "");
    assert_eq!(list.parameters, json!({"type": "object", "properties": {}}));
}

#[tokio::test]
async fn target_is_removed_from_the_args_the_instance_receives() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    let rx = invoke(
        &host,
        &s.id,
        "screenshot",
        json!({"target": "tab-a", "fullPage": true}),
    );
    let call = a.expect("tool.call").await;
    assert_eq!(call["args"], json!({"fullPage": true}), "{call}");
    assert_eq!(call["tool"], "screenshot");
    answer(&mut a, &call, json!("png-a")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("png-a")));
    b.fence().await;
}

#[tokio::test]
async fn a_provider_without_instance_keeps_its_target_argument() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("clicker", &s.id, json!([tool("click")])).await;
    let rx = invoke(&host, &s.id, "click", json!({"target": "#submit"}));
    let call = p.expect("tool.call").await;
    assert_eq!(call["args"], json!({"target": "#submit"}));
    answer(&mut p, &call, json!("clicked")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("clicked")));
}

#[tokio::test]
async fn a_target_naming_a_gone_instance_is_not_found_and_names_the_live_ones() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    b.send(json!({"type": "goodbye"})).await;
    b.expect_closed().await;
    let r = result_of(invoke(
        &host,
        &s.id,
        "screenshot",
        json!({"target": "tab-b"}),
    ))
    .await;
    assert_eq!(code(&r), Some("NOT_FOUND"), "{r:?}");
    let message = r.error.unwrap();
    assert!(
        message.contains("'tab-b'") && message.contains("live instances: tab-a"),
        "{message}"
    );
    assert!(message.contains("list_browser_instances"), "{message}");
    a.fence().await;
}

#[tokio::test]
async fn a_target_that_is_not_a_string_is_invalid_json() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let r = result_of(invoke(&host, &s.id, "screenshot", json!({"target": 1}))).await;
    assert_eq!(code(&r), Some("INVALID_JSON"), "{r:?}");
    // `null` is the same as omitting it.
    let rx = invoke(&host, &s.id, "screenshot", json!({"target": null}));
    let call = a.expect("tool.call").await;
    assert_eq!(call["args"], json!({}));
    answer(&mut a, &call, json!(1)).await;
    assert_eq!(result_of(rx).await.data, Some(json!(1)));
}

#[tokio::test]
async fn any_message_makes_an_instance_the_most_recently_active() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    // The tab gaining focus says so with any message, here a `keep` push.
    a.send(json!({"type": "push", "level": "keep", "event": "focused"}))
        .await;
    a.fence().await;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    let call = a.expect("tool.call").await;
    answer(&mut a, &call, json!("from a")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("from a")));
    b.fence().await;
}

#[tokio::test]
async fn list_instances_returns_each_instance_with_metadata_and_last_activity_most_recent_first() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (_a, ack_a) = instance(
        &gw,
        "browser",
        &s.id,
        "tab-a",
        json!({"metadata": {"title": "Dashboard", "url": "https://app.test/"}}),
    )
    .await;
    let (_b, ack_b) = instance(
        &gw,
        "browser",
        &s.id,
        "tab-b",
        json!({"metadata": {"url": "https://app.test/settings"}, "tools": []}),
    )
    .await;
    // Another provider's instances are not listed.
    let _other = instance(
        &gw,
        "editor",
        &s.id,
        "tab-a",
        json!({"tools": [tool("edit")]}),
    )
    .await;
    let r = result_of(invoke(&host, &s.id, "list_browser_instances", json!({}))).await;
    assert_eq!(r.error_code, None, "{r:?}");
    let data = r.data.unwrap();
    assert_eq!(data["provider"], "browser");
    assert_eq!(data["defaultTarget"], "tab-b", "{data}");
    let list = data["instances"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{data}");
    assert_eq!(list[0]["instance"], "tab-b");
    assert_eq!(list[0]["providerId"], ack_b["providerId"]);
    assert_eq!(list[0]["label"], "https://app.test/settings");
    assert_eq!(list[0]["tools"], json!([]));
    assert_eq!(list[1]["instance"], "tab-a");
    assert_eq!(list[1]["providerId"], ack_a["providerId"]);
    assert_eq!(list[1]["label"], "Dashboard");
    assert_eq!(
        list[1]["metadata"],
        json!({"title": "Dashboard", "url": "https://app.test/"})
    );
    assert_eq!(list[1]["tools"], json!(["screenshot"]));
    for i in list {
        let at = i["lastActive"].as_str().expect("lastActive");
        assert!(humantime::parse_rfc3339(at).is_ok(), "{at}");
    }
}

#[tokio::test]
async fn the_tool_set_follows_instances_as_they_come_and_go() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    tools_where(&mut host, &s.id, |t| {
        targets(t, "screenshot") == json!(["tab-a", "tab-b"])
    })
    .await;
    b.send(json!({"type": "goodbye"})).await;
    b.expect_closed().await;
    let t = tools_where(&mut host, &s.id, |t| {
        targets(t, "screenshot") == json!(["tab-a"])
    })
    .await;
    assert!(
        t.tools
            .iter()
            .find(|t| t.name == "screenshot")
            .unwrap()
            .parameters
            .to_value()["properties"]["target"]["description"]
            .as_str()
            .unwrap()
            .contains("tab-a (Title of tab-a)"),
        "{t:?}"
    );
    a.send(json!({"type": "goodbye"})).await;
    a.expect_closed().await;
    // The last instance gone: no shared tool, no list tool.
    tools_where(&mut host, &s.id, |t| t.tools.is_empty()).await;
    assert_eq!(
        code(&result_of(invoke(&host, &s.id, "list_browser_instances", json!({}))).await),
        Some("NOT_FOUND")
    );
}

#[tokio::test]
async fn an_instance_leaving_mid_call_fails_the_call_disconnected_and_it_is_not_retried() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    b.expect("tool.call").await;
    drop(b);
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("DISCONNECTED"), "{r:?}");
    a.fence().await;
}

#[tokio::test]
async fn a_retryable_failure_is_retried_once_and_never_on_the_failed_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    let mut c = tab(&gw, &s.id, "tab-c").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({"target": null, "q": 1}));
    let first = c.expect("tool.call").await;
    fail(&mut c, &first, "INTERNAL", true).await;
    // The retry goes to the most recently active of the others, with the same args.
    let second = b.expect("tool.call").await;
    assert_ne!(second["id"], first["id"], "a retry is a new call id");
    assert_eq!(second["args"], json!({"q": 1}));
    fail(&mut b, &second, "TIMEOUT", true).await;
    let r = result_of(rx).await;
    assert_eq!(
        (code(&r), r.error.as_deref()),
        (Some("TIMEOUT"), Some("TIMEOUT here"))
    );
    a.fence().await;
    c.fence().await;
}

#[tokio::test]
async fn a_retryable_failure_with_no_other_instance_reaches_the_caller() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut other = instance(
        &gw,
        "browser",
        &s.id,
        "tab-b",
        json!({"tools": [tool("click")]}),
    )
    .await
    .0;
    let rx = invoke(&host, &s.id, "screenshot", json!({}));
    let call = a.expect("tool.call").await;
    fail(&mut a, &call, "NOT_FOUND", true).await;
    assert_eq!(code(&result_of(rx).await), Some("NOT_FOUND"));
    // tab-b has no screenshot tool: it is never asked.
    other.fence().await;
    a.fence().await;
}

#[tokio::test]
async fn a_call_with_target_is_not_retried_on_another_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    let rx = invoke(&host, &s.id, "screenshot", json!({"target": "tab-a"}));
    let call = a.expect("tool.call").await;
    fail(&mut a, &call, "INTERNAL", true).await;
    assert_eq!(code(&result_of(rx).await), Some("INTERNAL"));
    b.fence().await;
}

#[tokio::test]
async fn a_retry_carries_progress_to_the_caller() {
    let gw = TestGateway::start().await;
    let gateway = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let mut a = tab(&gw, &s.id, "tab-a").await;
    let mut b = tab(&gw, &s.id, "tab-b").await;
    let (progress, mut progress_rx) = tap_gateway::ProgressSink::channel();
    let session = s.id.clone();
    let call = tokio::spawn(async move {
        gateway
            .call_tool(tap_gateway::CallRequest {
                session_id: session,
                tool: "screenshot".into(),
                args: json!({}),
                progress: Some(progress),
                ..Default::default()
            })
            .await
    });
    let first = b.expect("tool.call").await;
    b.send(json!({"type": "tool.progress", "id": first["id"], "message": "from b"}))
        .await;
    fail(&mut b, &first, "INTERNAL", true).await;
    let second = a.expect("tool.call").await;
    a.send(json!({"type": "tool.progress", "id": second["id"], "message": "from a"}))
        .await;
    answer(&mut a, &second, json!("ok")).await;
    assert_eq!(call.await.unwrap().unwrap(), json!("ok"));
    assert_eq!(progress_rx.recv().await.as_deref(), Some("from b"));
    assert_eq!(progress_rx.recv().await.as_deref(), Some("from a"));
}

#[tokio::test]
async fn two_instances_binding_at_once_share_one_copy() {
    let gw = TestGateway::start().await;
    let (mut host, s) = gw.host_with_session().await;
    let (mut a, _) = gw.authed().await;
    let (mut b, _) = gw.authed().await;
    for (p, id) in [(&mut a, "tab-a"), (&mut b, "tab-b")] {
        p.send(
            json!({"type": "hello", "name": "browser", "protocolVersion": 2,
                      "session": s.id, "instance": id, "tools": [tool("screenshot")]}),
        )
        .await;
    }
    for p in [&mut a, &mut b] {
        p.expect("hello.ack").await;
        assert_eq!(p.expect("session.lifecycle").await["state"], "started");
    }
    let t = tools_where(&mut host, &s.id, |t| {
        targets(t, "screenshot")
            .as_array()
            .is_some_and(|a| a.len() == 2)
    })
    .await;
    assert_eq!(names(&t), ["list_browser_instances", "screenshot"]);
}

#[tokio::test]
async fn concurrent_calls_to_different_targets_each_reach_their_instance() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let a = tab(&gw, &s.id, "tab-a").await;
    let b = tab(&gw, &s.id, "tab-b").await;
    let mut rxs = Vec::new();
    for n in 0..20u64 {
        let target = if n % 2 == 0 { "tab-a" } else { "tab-b" };
        rxs.push((
            n,
            invoke(
                &host,
                &s.id,
                "screenshot",
                json!({"target": target, "n": n}),
            ),
        ));
    }
    // Each instance answers its ten calls, in reverse order, racing the other.
    let serve = |mut p: Provider, parity: u64| async move {
        let mut calls = Vec::new();
        for _ in 0..10 {
            let c = p.expect("tool.call").await;
            assert_eq!(c["args"]["n"].as_u64().unwrap() % 2, parity, "{c}");
            calls.push(c);
        }
        for c in calls.iter().rev() {
            answer(&mut p, c, c["args"]["n"].clone()).await;
        }
        p.fence().await;
    };
    tokio::join!(serve(a, 0), serve(b, 1));
    for (n, rx) in rxs {
        assert_eq!(result_of(rx).await.data, Some(json!(n)));
    }
}

#[tokio::test]
async fn instance_scope_limits_each_instance_of_a_shared_tool_separately() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let limit = json!({"concurrency": {"max": 1, "scope": "instance"}});
    let mut a = instance(&gw, "browser", &s.id, "tab-a", limit.clone())
        .await
        .0;
    let mut b = instance(&gw, "browser", &s.id, "tab-b", limit).await.0;
    let r1 = invoke(
        &host,
        &s.id,
        "screenshot",
        json!({"target": "tab-a", "n": 1}),
    );
    let c1 = a.expect("tool.call").await;
    let r2 = invoke(
        &host,
        &s.id,
        "screenshot",
        json!({"target": "tab-b", "n": 2}),
    );
    let c2 = b.expect("tool.call").await; // not held back by tab-a's call
    let r3 = invoke(
        &host,
        &s.id,
        "screenshot",
        json!({"target": "tab-a", "n": 3}),
    );
    host.status().await.unwrap(); // the invoke has been processed
    a.fence().await; // #3 waits for #1
    answer(&mut b, &c2, json!(2)).await;
    assert_eq!(result_of(r2).await.data, Some(json!(2)));
    answer(&mut a, &c1, json!(1)).await;
    assert_eq!(result_of(r1).await.data, Some(json!(1)));
    let c3 = a.expect("tool.call").await;
    assert_eq!(c3["args"]["n"], 3);
    answer(&mut a, &c3, json!(3)).await;
    assert_eq!(result_of(r3).await.data, Some(json!(3)));
}

#[tokio::test]
async fn provider_scope_counts_a_shared_tool_across_its_instances() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let limit = json!({"concurrency": {"max": 1, "scope": "provider"}});
    let mut a = instance(&gw, "browser", &s.id, "tab-a", limit.clone())
        .await
        .0;
    let mut b = instance(&gw, "browser", &s.id, "tab-b", limit).await.0;
    let r1 = invoke(&host, &s.id, "screenshot", json!({"target": "tab-a"}));
    let c1 = a.expect("tool.call").await;
    let r2 = invoke(&host, &s.id, "screenshot", json!({"target": "tab-b"}));
    host.status().await.unwrap();
    b.fence().await; // waits for tab-a's call: one pool for the name
    answer(&mut a, &c1, json!("a")).await;
    assert_eq!(result_of(r1).await.data, Some(json!("a")));
    let c2 = b.expect("tool.call").await;
    answer(&mut b, &c2, json!("b")).await;
    assert_eq!(result_of(r2).await.data, Some(json!("b")));
}

#[tokio::test]
async fn a_provider_without_instance_and_its_instances_do_not_share_tools() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _a = tab(&gw, &s.id, "tab-a").await;
    let (mut plain, _) = gw.authed().await;
    plain
        .send(
            json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s.id,
                     "tools": [tool("screenshot")]}),
        )
        .await;
    let e = plain.expect_error("TOOL_CONFLICT").await;
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("send 'instance' in hello"), "{message}");
    // The other way round: a plain holder first, then an instance of the same name.
    let (_host2, s2) = gw.host_with_session().await;
    let _plain = gw
        .bound("browser", &s2.id, json!([tool("screenshot")]))
        .await;
    let (mut inst, _) = gw.authed().await;
    inst.send(
        json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s2.id,
                     "instance": "tab-z", "tools": [tool("screenshot")]}),
    )
    .await;
    let e = inst.expect_error("TOOL_CONFLICT").await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("without an instance"),
        "{e}"
    );
}

#[tokio::test]
async fn instances_of_different_provider_names_still_conflict() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _a = tab(&gw, &s.id, "tab-a").await;
    let (mut other, _) = gw.authed().await;
    other
        .send(
            json!({"type": "hello", "name": "viewer", "protocolVersion": 2, "session": s.id,
                     "instance": "tab-a", "tools": [tool("screenshot")]}),
        )
        .await;
    let e = other.expect_error("TOOL_CONFLICT").await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("provider 'browser'"),
        "{e}"
    );
}

#[tokio::test]
async fn an_instance_may_not_declare_its_own_target_parameter() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let click = json!({"name": "click", "parameters": {"type": "object",
                       "properties": {"target": {"type": "string"}}}});
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s.id,
                  "instance": "tab-a", "tools": [click.clone()]}),
    )
    .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert!(e["message"].as_str().unwrap().contains("'target'"), "{e}");
    // The same in tools.update once bound.
    p.send(
        json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s.id,
                  "instance": "tab-a", "tools": []}),
    )
    .await;
    p.expect("hello.ack").await;
    p.expect("session.lifecycle").await;
    p.send(json!({"type": "tools.update", "requestId": "u1", "tools": [click]}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["requestId"], "u1");
}

#[tokio::test]
async fn an_instance_id_is_at_most_128_printable_characters() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    for bad in ["x".repeat(129), "tab\u{7}".to_string()] {
        p.send(
            json!({"type": "hello", "name": "browser", "protocolVersion": 2, "session": s.id,
                      "instance": bad}),
        )
        .await;
        assert_eq!(p.expect_error("INVALID_JSON").await["replyTo"], "hello");
    }
}

#[tokio::test]
async fn generated_list_names_are_reserved_even_with_no_such_provider() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    p.send(
        json!({"type": "hello", "name": "vm", "protocolVersion": 2, "session": s.id,
                  "tools": [tool("list_ghost_instances")]}),
    )
    .await;
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert!(e["message"].as_str().unwrap().contains("reserved"), "{e}");
    // `list_instances` is not the generated shape.
    p.send(
        json!({"type": "hello", "name": "vm", "protocolVersion": 2, "session": s.id,
                  "tools": [tool("list_instances")]}),
    )
    .await;
    p.expect("hello.ack").await;
}

#[tokio::test]
async fn list_followed_by_another_providers_name_is_reserved_as_a_whole_word() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let _git = gw.bound("git", &s.id, json!([tool("log")])).await;
    let mut p = gw.bound("hub", &s.id, json!([])).await;
    p.send(
        json!({"type": "tools.update", "requestId": "r1", "tools": [tool("list_git_branches")]}),
    )
    .await;
    let e = p.expect_error("TOOL_CONFLICT").await;
    assert_eq!(e["requestId"], "r1");
    assert!(
        e["message"].as_str().unwrap().contains("provider 'git'"),
        "{e}"
    );
    p.send(
        json!({"type": "tools.update", "requestId": "r2", "tools": [tool("list_github_repos")]}),
    )
    .await;
    assert_eq!(p.expect("ack").await["requestId"], "r2");
}

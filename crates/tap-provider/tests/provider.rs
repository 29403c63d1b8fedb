//! The SDK against a real gateway (the engine in this process on 127.0.0.1:0, real
//! sockets) and a real session host (`tap-client`).

use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tap_client::HostClient;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_provider::{
    ConnectError, Endpoint, Event, Hooks, Provider, PushLevel, PushOptions, SessionChoice, Tool,
    ToolError,
};
use tap_testkit::{TestGateway, PATIENCE};
use tokio::net::TcpListener;

fn endpoint(gw: &TestGateway) -> Endpoint {
    Endpoint {
        url: gw.url(),
        token: gw.token(),
    }
}

fn greet() -> Tool {
    Tool::new(
        "greet",
        "Says hello",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        |args, _| async move { Ok(json!(format!("Hello, {}!", args["name"].as_str().unwrap()))) },
    )
    .unwrap()
}

async fn invoke(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> (Option<Value>, Option<String>, String) {
    let r = tokio::time::timeout(PATIENCE, host.invoke(session, tool, args))
        .await
        .expect("a result in time")
        .expect("tool.result");
    (
        r.data,
        r.error_code.map(|c| c.to_string()),
        r.error.unwrap_or_default(),
    )
}

async fn next_event(
    rx: &mut tokio::sync::broadcast::Receiver<Event>,
    what: impl Fn(&Event) -> bool,
) -> Event {
    loop {
        let e = tokio::time::timeout(PATIENCE, rx.recv())
            .await
            .expect("an event in time")
            .unwrap();
        if what(&e) {
            return e;
        }
    }
}

#[tokio::test]
async fn a_tool_is_called_and_its_handler_answers() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = Provider::builder("greeter")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    assert_eq!(p.session_id(), session.id);
    let (data, code, _) = invoke(&host, &session.id, "greet", json!({"name": "Ada"})).await;
    assert_eq!((data, code), (Some(json!("Hello, Ada!")), None));
}

#[tokio::test]
async fn it_waits_for_a_session_when_none_exists() {
    let gw = TestGateway::start().await;
    let ep = endpoint(&gw);
    let connecting = tokio::spawn(async move {
        Provider::builder("early")
            .tool(greet())
            .endpoint(ep)
            .connect()
            .await
    });
    let (host, session) = gw.host_with_session().await;
    let p = tokio::time::timeout(PATIENCE, connecting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(p.session_id(), session.id);
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "Bo"})).await;
    assert_eq!(data, Some(json!("Hello, Bo!")));
}

#[tokio::test]
async fn handler_errors_keep_their_code_and_a_panic_is_internal_and_harmless() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let fails = Tool::new("fails", "", json!({}), |_, _| async move {
        Err::<Value, _>(ToolError::new(
            "DEPLOY_FROZEN",
            "Deploys are frozen until Monday",
        ))
    })
    .unwrap();
    let panics = Tool::new("panics", "", json!({}), |_, _| async move {
        if true {
            panic!("index out of bounds");
        }
        Ok(json!(null))
    })
    .unwrap();
    let io = Tool::new("io", "", json!({}), |_, _| async move {
        std::fs::read("/nonexistent/file")?;
        Ok(json!(null))
    })
    .unwrap();
    let _p = Provider::builder("faulty")
        .tool(fails)
        .tool(panics)
        .tool(io)
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let (_, code, msg) = invoke(&host, &session.id, "fails", json!({})).await;
    assert_eq!(
        (code.as_deref(), msg.as_str()),
        (Some("DEPLOY_FROZEN"), "Deploys are frozen until Monday")
    );
    let (_, code, msg) = invoke(&host, &session.id, "panics", json!({})).await;
    assert_eq!(code.as_deref(), Some("INTERNAL"));
    assert!(msg.contains("index out of bounds"), "{msg}");
    let (_, code, msg) = invoke(&host, &session.id, "io", json!({})).await;
    assert_eq!(code.as_deref(), Some("INTERNAL"));
    assert!(msg.contains("No such file"), "{msg}");
    // Still serving.
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "Cy"})).await;
    assert_eq!(data, Some(json!("Hello, Cy!")));
}

#[tokio::test]
async fn cancel_reaches_the_handler_and_a_timeout_ends_the_call() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (saw_cancel, mut cancelled) = tokio::sync::mpsc::unbounded_channel();
    let waits = Tool::new("waits", "", json!({}), move |_, ctx| {
        let saw_cancel = saw_cancel.clone();
        async move {
            ctx.cancelled.cancelled().await;
            let _ = saw_cancel.send(ctx.call_id.clone());
            Ok(json!("never sent"))
        }
    })
    .unwrap();
    let sleeps = Tool::new("sleeps", "", json!({}), |_, _| async move {
        std::future::pending::<()>().await;
        Ok(json!(null))
    })
    .unwrap()
    .timeout(Duration::from_millis(200));
    let _p = Provider::builder("slow")
        .tool(waits)
        .tool(sleeps)
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();

    let (call_id, result) = host.start_invoke(&session.id, "waits", json!({})).unwrap();
    // Cancel once the call has reached the provider (its handler is waiting).
    tokio::task::yield_now().await;
    host.cancel(&call_id).unwrap();
    tokio::time::timeout(PATIENCE, cancelled.recv())
        .await
        .expect("the handler saw the cancel");
    match tokio::time::timeout(PATIENCE, result)
        .await
        .unwrap()
        .unwrap()
    {
        HostEvent::ToolResult(r) => assert_eq!(
            r.error_code.map(|c| c.to_string()).as_deref(),
            Some("CANCELLED")
        ),
        other => panic!("{other:?}"),
    }
    let (_, code, _) = invoke(&host, &session.id, "sleeps", json!({})).await;
    assert_eq!(code.as_deref(), Some("TIMEOUT"));
}

#[tokio::test]
async fn progress_reaches_the_session_host() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let build = Tool::new("build", "", json!({}), |_, ctx| async move {
        ctx.progress("compiling");
        Ok(json!("built"))
    })
    .unwrap();
    let _p = Provider::builder("builder")
        .tool(build)
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let (_, result) = host.start_invoke(&session.id, "build", json!({})).unwrap();
    let progress =
        tap_testkit::next_host_event(&mut host, |e| matches!(e, HostEvent::ToolProgress(_))).await;
    assert!(
        matches!(&progress, HostEvent::ToolProgress(p) if p.message == "compiling"),
        "{progress:?}"
    );
    assert!(
        matches!(result.await.unwrap(), HostEvent::ToolResult(r) if r.data == Some(json!("built")))
    );
}

#[tokio::test]
async fn pushes_are_stored_and_over_the_budget_come_back_as_rate_limited() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = Provider::builder("ci")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let mut events = p.events();
    let opts = || PushOptions {
        stream: Some("builds".into()),
        ..Default::default()
    };
    for i in 0..tap_protocol::limits::MAX_PUSHES_PER_SECOND + 2 {
        p.push(PushLevel::Surface, format!("build {i}"), opts());
    }
    let e = next_event(&mut events, |e| matches!(e, Event::Error { .. })).await;
    let Event::Error { code, reply_to, .. } = e else {
        unreachable!()
    };
    assert_eq!(
        (code.as_str(), reply_to.as_deref()),
        ("RATE_LIMITED", Some("push"))
    );
    let history = host
        .streams_history(&session.id, Some("builds"), None)
        .await
        .unwrap();
    let stored: usize = history.streams.values().map(Vec::len).sum();
    assert_eq!(stored, tap_protocol::limits::MAX_PUSHES_PER_SECOND as usize);
}

#[tokio::test]
async fn set_tools_replaces_the_tool_set_once_acknowledged() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = Provider::builder("changing")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let ping = Tool::new(
        "ping",
        "",
        json!({}),
        |_, _| async move { Ok(json!("pong")) },
    )
    .unwrap();
    tokio::time::timeout(PATIENCE, p.set_tools(vec![ping]))
        .await
        .unwrap()
        .unwrap();
    let (data, _, _) = invoke(&host, &session.id, "ping", json!({})).await;
    assert_eq!(data, Some(json!("pong")));
    let r = host
        .invoke(&session.id, "greet", json!({"name": "x"}))
        .await;
    assert!(
        r.is_err() || r.unwrap().error_code.is_some(),
        "greet is gone"
    );
}

#[tokio::test]
async fn hook_rules_in_the_builder_deny_matching_calls() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let hooks: Hooks = serde_json::from_value(json!({"onPreToolUse": [
        {"match": {"tool": "greet", "args": "Mallory"}, "action": "deny", "reason": "Not her."}]}))
    .unwrap();
    let _p = Provider::builder("guarded")
        .tool(greet())
        .hooks(hooks)
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let d = host
        .precheck(&session.id, "greet", json!({"name": "Mallory"}))
        .await
        .unwrap();
    assert_eq!(d.reason.as_deref(), Some("Not her."));
}

#[tokio::test]
async fn a_second_instance_with_the_same_identity_is_refused() {
    let gw = TestGateway::start().await;
    let (_host, _session) = gw.host_with_session().await;
    let _a = Provider::builder("twin")
        .instance("one")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let b = Provider::builder("twin")
        .instance("one")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await;
    match b {
        Err(ConnectError::Refused { code, .. }) => assert_eq!(code.as_str(), "DUPLICATE_INSTANCE"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn the_provider_says_goodbye_when_its_session_ends() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let mut p = Provider::builder("polite")
        .tool(greet())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    let ending = tokio::spawn(async move { host.end_session(&session.id).await });
    let why = tokio::time::timeout(PATIENCE, p.run())
        .await
        .expect("ended in time");
    assert!(why.contains("ended"), "{why}");
    // The goodbye let the session end at once rather than at the shutdown deadline.
    tokio::time::timeout(PATIENCE, ending)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// A TCP relay the test can cut, to drop the provider's socket as a network would; while
/// `blocked` is set it also refuses new connections (accepts and drops them).
async fn relay(
    to: std::net::SocketAddr,
) -> (String, tokio::sync::watch::Sender<u32>, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let (cut, cuts) = tokio::sync::watch::channel(0u32);
    let blocked = Arc::new(AtomicBool::new(false));
    let blocking = blocked.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            if blocking.load(Ordering::SeqCst) {
                continue;
            }
            // Only cuts after this connection was made end it.
            let mut cuts = cuts.clone();
            cuts.mark_unchanged();
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(to).await.unwrap();
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cuts.changed() => {}
                }
            });
        }
    });
    (url, cut, blocked)
}

#[tokio::test]
async fn a_dropped_socket_reconnects_with_the_token_and_keeps_the_binding() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (url, cut, _) = relay(gw.handle.gateway().address()).await;
    let p = Provider::builder("roaming")
        .tool(greet())
        .endpoint(Endpoint {
            url,
            token: gw.token(),
        })
        .session(SessionChoice::Named("test".into()))
        .connect()
        .await
        .unwrap();
    let mut events = p.events();
    cut.send(1).unwrap();
    next_event(&mut events, |e| matches!(e, Event::Disconnected)).await;
    let e = next_event(&mut events, |e| matches!(e, Event::Reconnected { .. })).await;
    assert!(matches!(e, Event::Reconnected { restored: true }), "{e:?}");
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "again"})).await;
    assert_eq!(data, Some(json!("Hello, again!")));
}

#[tokio::test]
async fn a_session_named_by_label_is_waited_for_and_bound() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let ep = endpoint(&gw);
    let connecting = tokio::spawn(async move {
        Provider::builder("picky")
            .tool(greet())
            .endpoint(ep)
            .session(SessionChoice::Named("wanted".into()))
            .connect()
            .await
    });
    let other = host
        .register_session(SessionRegister {
            label: Some("other".into()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let wanted = host
        .register_session(SessionRegister {
            label: Some("wanted".into()),
            foreground: false,
            ..Default::default()
        })
        .await
        .unwrap();
    let p = tokio::time::timeout(PATIENCE, connecting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(p.session_id(), wanted.id);
    assert_ne!(p.session_id(), other.id);
}

/// Past the reconnect window the binding is gone; the SDK binds afresh. Takes the window's
/// 30 s of real time: that lifetime is what is tested.
#[tokio::test]
async fn past_the_reconnect_window_it_binds_afresh() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (url, cut, blocked) = relay(gw.handle.gateway().address()).await;
    let p = Provider::builder("late")
        .tool(greet())
        .endpoint(Endpoint {
            url,
            token: gw.token(),
        })
        .connect()
        .await
        .unwrap();
    let mut events = p.events();
    blocked.store(true, Ordering::SeqCst);
    cut.send(1).unwrap();
    next_event(&mut events, |e| matches!(e, Event::Disconnected)).await;
    // The reconnect token's lifetime, from the drop: the condition under test, so waited
    // for in real time (there is nothing to observe until it runs out).
    tokio::time::sleep(tap_provider::RECONNECT_WINDOW + Duration::from_secs(1)).await;
    blocked.store(false, Ordering::SeqCst);
    let e = tokio::time::timeout(
        tap_provider::RECONNECT_WINDOW,
        next_event(&mut events, |e| matches!(e, Event::Reconnected { .. })),
    )
    .await
    .expect("reconnected");
    assert!(matches!(e, Event::Reconnected { restored: false }), "{e:?}");
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "later"})).await;
    assert_eq!(data, Some(json!("Hello, later!")));
}

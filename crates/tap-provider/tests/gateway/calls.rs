//! Calls: a handler answers, waits for a session, errors keep their code, a panic is
//! harmless, cancel and timeouts reach the handler, progress reaches the host; a second
//! instance is refused; the session's end says goodbye.

use crate::common::*;
use serde_json::json;
use std::time::Duration;
use tap_protocol::host::HostEvent;
use tap_provider::{Error, Provider, Tool, ToolError, Value};
use tap_testkit::{TestGateway, PATIENCE};

#[tokio::test]
async fn a_tool_is_called_and_its_handler_answers() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "greeter").connect().await.unwrap();
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
        Err(Error::Refused { code, .. }) => assert_eq!(code.as_str(), "DUPLICATE_INSTANCE"),
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

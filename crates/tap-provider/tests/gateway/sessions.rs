//! The session side: which session a provider binds to (by label, by a chooser), the
//! session events it subscribed to, and its context reaching the session.

use crate::common::*;
use tap_protocol::host::{HostEvent, SessionRegister};
use tap_provider::{json, Event, SessionChoice};
use tap_testkit::{apply, next_host_event, second_session, TestGateway};

#[tokio::test]
async fn a_session_named_by_label_is_waited_for_and_bound() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let connecting = tokio::spawn(
        builder(&gw, "picky")
            .session(SessionChoice::Named("wanted".into()))
            .connect(),
    );
    let other = host
        .register_session(SessionRegister {
            label: Some("other".into()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let wanted = second_session(&host, "wanted").await;
    let p = soon("the bind", connecting).await.unwrap().unwrap();
    assert_eq!(p.session_id(), wanted.id);
    assert_ne!(p.session_id(), other.id);
}

#[tokio::test]
async fn the_chooser_is_asked_again_until_it_picks_and_its_pick_is_bound() {
    let gw = TestGateway::start().await;
    let (host, foreground) = gw.host_with_session().await;
    let (asked, mut lists) = tokio::sync::mpsc::unbounded_channel();
    // Wants the session working in /work/api, whatever is in the foreground.
    let chooser = SessionChoice::chooser(move |sessions| {
        let _ = asked.send(sessions.len());
        let api = sessions
            .iter()
            .find(|s| s.cwd.as_deref() == Some("/work/api"));
        api.map(|s| s.id.clone())
    });
    let connecting = tokio::spawn(builder(&gw, "api-tools").session(chooser).connect());
    assert_eq!(soon("the first ask", lists.recv()).await, Some(1));
    let api = second_session(&host, "api").await;
    let p = soon("the bind", connecting).await.unwrap().unwrap();
    assert_eq!(p.session_id(), api.id);
    assert_ne!(p.session_id(), foreground.id);
    let (data, _, _) = invoke(&host, &api.id, "greet", json!({"name": "api"})).await;
    assert_eq!(data, Some(json!("Hello, api!")));
}

#[tokio::test]
async fn subscribed_session_events_arrive_and_others_do_not() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "listener")
        .subscribe(&["user.message"])
        .connect()
        .await
        .unwrap();
    let mut events = p.events();
    host.session_event(
        &session.id,
        "assistant.message",
        json!({"text": "not for it"}),
    )
    .unwrap();
    host.session_event(
        &session.id,
        "user.message",
        json!({"text": "deploy please"}),
    )
    .unwrap();
    let e = next_event(&mut events, |e| matches!(e, Event::Session { .. })).await;
    let Event::Session {
        session_id,
        event,
        data,
    } = e
    else {
        unreachable!()
    };
    assert_eq!(
        (session_id.as_str(), event.as_str(), &data),
        (
            session.id.as_str(),
            "user.message",
            &json!({"text": "deploy please"})
        )
    );
}

#[tokio::test]
async fn context_and_startup_context_reach_the_session() {
    let gw = TestGateway::start().await;
    let (mut host, session) = gw.host_with_session().await;
    let _p = builder(&gw, "conventions")
        .context("This repo uses pnpm.")
        .startup_context("The release branch is frozen.")
        .connect()
        .await
        .unwrap();
    let started = next_host_event(&mut host, |e| matches!(e, HostEvent::SessionContext(_))).await;
    let HostEvent::SessionContext(c) = started else {
        unreachable!()
    };
    assert_eq!(
        (c.provider.as_str(), c.startup_context.as_str()),
        ("conventions", "The release branch is frozen.")
    );
    let applied = apply(&host, &session.id, &[]).await;
    assert_eq!(applied.context, ["This repo uses pnpm."]);
}

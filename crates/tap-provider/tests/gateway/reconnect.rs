//! Reconnecting after a dropped socket: within the 30 s window the gateway gives the
//! binding back under the same provider id (and the SDK sets its filters again); after it,
//! or when the session is gone, or when the gateway refuses the token, the SDK binds afresh
//! at once and reports the new id.

use crate::common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tap_provider::{
    json, Event, FilterOutcome, FilterRule, Provider, PushLevel, PushOptions, SessionChoice,
    RECONNECT_WINDOW,
};
use tap_testkit::{second_session, stored, TestGateway};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

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
                // Nagle off, as the SDK and the gateway have it: under paused time a frame
                // held back for an ACK would let the clock run past every deadline.
                inbound.set_nodelay(true).unwrap();
                outbound.set_nodelay(true).unwrap();
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cuts.changed() => {}
                }
            });
        }
    });
    (url, cut, blocked)
}

/// A provider on `gw` through a relay; returns it with the relay's controls.
async fn relayed(
    gw: &TestGateway,
    name: &str,
    configure: impl FnOnce(tap_provider::Builder) -> tap_provider::Builder,
) -> (Provider, tokio::sync::watch::Sender<u32>, Arc<AtomicBool>) {
    let (url, cut, blocked) = relay(gw.handle.gateway().address()).await;
    let mut ep = endpoint(gw);
    ep.url = url;
    let p = configure(Provider::builder(name).tool(greet()).endpoint(ep))
        .connect()
        .await
        .unwrap();
    (p, cut, blocked)
}

async fn reconnected(events: &mut tokio::sync::broadcast::Receiver<Event>) -> bool {
    match next_event(events, |e| matches!(e, Event::Reconnected { .. })).await {
        Event::Reconnected { restored } => restored,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn within_the_window_the_binding_comes_back_with_the_same_id_and_its_filters() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let quiet = vec![FilterRule {
        pattern: "^debug".into(),
        outcome: FilterOutcome::Drop,
    }];
    let (p, cut, _) = relayed(&gw, "roaming", |b| b.filter("log", quiet)).await;
    let id = p.provider_id();
    let mut events = p.events();
    cut.send(1).unwrap();
    next_event(&mut events, |e| matches!(e, Event::Disconnected)).await;
    assert!(reconnected(&mut events).await, "restored");
    assert_eq!(p.provider_id(), id);
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "again"})).await;
    assert_eq!(data, Some(json!("Hello, again!")));
    // The gateway starts a binding without filters; the SDK set them again.
    p.push(PushLevel::Keep, "debug: noise", PushOptions::stream("log"))
        .await
        .unwrap();
    p.push(PushLevel::Keep, "started", PushOptions::stream("log"))
        .await
        .unwrap();
    assert_eq!(stored(&host, &session.id, "log@roaming").await, ["started"]);
}

/// Paused time: the window's 30 s pass at once, for the gateway (which forgets the token)
/// and the SDK (which stops offering it) alike.
#[tokio::test(start_paused = true)]
async fn past_the_window_it_binds_afresh_under_a_new_id() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (p, cut, blocked) = relayed(&gw, "late", |b| b).await;
    let id = p.provider_id();
    let mut events = p.events();
    blocked.store(true, Ordering::SeqCst);
    cut.send(1).unwrap();
    next_event(&mut events, |e| matches!(e, Event::Disconnected)).await;
    tokio::time::sleep(RECONNECT_WINDOW + Duration::from_secs(1)).await;
    blocked.store(false, Ordering::SeqCst);
    assert!(!reconnected(&mut events).await, "a fresh bind");
    assert_ne!(p.provider_id(), id);
    assert_eq!(p.session_id(), session.id);
    let (data, _, _) = invoke(&host, &session.id, "greet", json!({"name": "later"})).await;
    assert_eq!(data, Some(json!("Hello, later!")));
}

#[tokio::test(start_paused = true)]
async fn when_its_session_ended_meanwhile_it_binds_afresh_to_the_one_it_would_choose() {
    let gw = TestGateway::start().await;
    let (host, first) = gw.host_with_session().await;
    let (p, cut, blocked) = relayed(&gw, "mover", |b| {
        b.session(SessionChoice::chooser(|s| s.last().map(|s| s.id.clone())))
    })
    .await;
    let id = p.provider_id();
    let mut events = p.events();
    blocked.store(true, Ordering::SeqCst);
    cut.send(1).unwrap();
    next_event(&mut events, |e| matches!(e, Event::Disconnected)).await;
    soon("the end", host.end_session(&first.id)).await.unwrap();
    let next = second_session(&host, "next").await;
    blocked.store(false, Ordering::SeqCst);
    assert!(!reconnected(&mut events).await, "a fresh bind");
    assert_eq!(p.session_id(), next.id);
    assert_ne!(p.provider_id(), id);
}

/// A gateway that plays a script: binds the provider, drops it when `go` fires, then
/// refuses the reconnect token with the session gone and lists another session.
async fn scripted_gateway(
    go: tokio::sync::oneshot::Receiver<()>,
) -> (String, tokio::task::JoinHandle<Vec<Value>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let script = tokio::spawn(async move {
        let mut hellos = Vec::new();
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        read(&mut ws).await; // auth
        say(
            &mut ws,
            json!({"type": "sessions", "active": [{"id": "s1", "foreground": true}]}),
        )
        .await;
        hellos.push(read(&mut ws).await);
        say(
            &mut ws,
            json!({"type": "hello.ack", "protocolVersion": 2, "providerId": "p1",
                            "sessionId": "s1", "reconnectToken": "rtk-1"}),
        )
        .await;
        go.await.unwrap();
        drop(ws);
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        read(&mut ws).await; // auth
        say(
            &mut ws,
            json!({"type": "sessions", "active": [{"id": "s1", "foreground": true}]}),
        )
        .await;
        hellos.push(read(&mut ws).await);
        say(
            &mut ws,
            json!({"type": "error", "code": "INVALID_SESSION", "replyTo": "hello",
                            "sessionId": "s1", "message": "Session 's1' ended"}),
        )
        .await;
        say(
            &mut ws,
            json!({"type": "sessions.updated", "active": [{"id": "s2", "foreground": true}]}),
        )
        .await;
        hellos.push(read(&mut ws).await);
        say(
            &mut ws,
            json!({"type": "hello.ack", "protocolVersion": 2, "providerId": "p2",
                            "sessionId": "s2", "reconnectToken": "rtk-2"}),
        )
        .await;
        // Keep the socket open until the test has looked.
        let _ = ws.next().await;
        hellos
    });
    (url, script)
}

type ServerWs = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn read(ws: &mut ServerWs) -> Value {
    loop {
        if let Message::Text(t) = ws.next().await.unwrap().unwrap() {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

async fn say(ws: &mut ServerWs, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

#[tokio::test]
async fn a_refused_reconnect_token_falls_back_to_a_fresh_hello_on_the_same_socket() {
    let (go, ready) = tokio::sync::oneshot::channel();
    let (url, script) = scripted_gateway(ready).await;
    let ep = tap_provider::Endpoint {
        url,
        token: "ptk-test".into(),
    };
    let p = Provider::builder("scripted")
        .tool(greet())
        .endpoint(ep)
        .connect()
        .await
        .unwrap();
    let mut events = p.events();
    go.send(()).unwrap();
    assert!(!reconnected(&mut events).await, "a fresh bind");
    assert_eq!(
        (p.provider_id(), p.session_id()),
        ("p2".into(), "s2".into())
    );
    p.close().await;
    let hellos = soon("the script", script).await.unwrap();
    let token = |h: &Value| h["reconnectToken"].as_str().map(str::to_string);
    assert_eq!(
        hellos.iter().map(token).collect::<Vec<_>>(),
        [None, Some("rtk-1".into()), None],
        "{hellos:?}"
    );
    assert_eq!(hellos[2]["session"], "s2");
}

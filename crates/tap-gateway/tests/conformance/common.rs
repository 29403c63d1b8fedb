//! Helpers shared by the conformance modules. Providers are raw WebSockets sending JSON
//! text frames, as a provider written in any language would; session hosts go through
//! `tap-client` (a real socket too). The user's side of pairing (reading the code) uses
//! the engine API the tray and panel use.
#![allow(dead_code)]

pub use crate::support::*;
pub use serde_json::{json, Value};
pub use std::sync::Arc;
pub use std::time::Duration;
pub use tap_client::HostClient;
pub use tap_protocol::host::{
    BusyState, Delivery, HostEvent, HostToolResult, PrecheckDecision, PromptApplied, SessionEnded,
    SessionRegister, SessionTools, ToolDecision,
};
pub use tap_protocol::provider::{PushLevel, SessionInfo};
pub use tap_protocol::ErrorCode;

use std::collections::BTreeMap;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::MaybeTlsStream;

/// Far enough away that reaching it would fail the test by [`PATIENCE`] first.
pub const FAR: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------- providers

/// Back-to-back frames must not wait on Nagle: under the paused clock a real-time delay
/// would let the clock jump past a deadline or the test's patience.
pub fn no_delay(p: &Provider) {
    match p.ws.get_ref() {
        MaybeTlsStream::Plain(s) => s.set_nodelay(true).unwrap(),
        _ => unreachable!("tests use plain TCP"),
    }
}

fn local_addr(p: &Provider) -> String {
    match p.ws.get_ref() {
        MaybeTlsStream::Plain(s) => s.local_addr().unwrap().to_string(),
        _ => unreachable!("tests use plain TCP"),
    }
}

/// A raw provider socket (not authenticated), Nagle off.
pub async fn connect(gw: &TestGateway) -> Provider {
    let p = gw.provider().await;
    no_delay(&p);
    p
}

/// A provider past `auth` with the gateway token (trust "project"); returns `sessions`.
pub async fn authed(gw: &TestGateway) -> (Provider, Value) {
    let mut p = connect(gw).await;
    p.send(json!({"type": "auth", "token": gw.token()})).await;
    let sessions = p.expect("sessions").await;
    (p, sessions)
}

/// A `hello` for `session` with `extra` fields merged in (they win).
pub fn hello(name: &str, session: &str, extra: Value) -> Value {
    let mut h = json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session});
    for (k, v) in extra.as_object().expect("extra is an object") {
        h[k] = v.clone();
    }
    h
}

/// Sends `hello` and consumes `hello.ack` and `session.lifecycle started`; returns the ack.
pub async fn expect_bound(p: &mut Provider, session: &str) -> Value {
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started", "{started}");
    assert_eq!(started["sessionId"], session, "{started}");
    ack
}

/// An authenticated provider bound to `session` with the `hello` fields in `extra`.
pub async fn bind(gw: &TestGateway, name: &str, session: &str, extra: Value) -> (Provider, Value) {
    let (mut p, _) = authed(gw).await;
    p.send(hello(name, session, extra)).await;
    let ack = expect_bound(&mut p, session).await;
    (p, ack)
}

/// Like [`bind`], without the ack.
pub async fn bound(gw: &TestGateway, name: &str, session: &str, tools: Value) -> Provider {
    bind(gw, name, session, json!({ "tools": tools })).await.0
}

/// Sends `hello` on an authenticated provider and expects the `error` `code` for it.
pub async fn hello_refused(p: &mut Provider, msg: Value, code: &str) -> Value {
    p.send(msg).await;
    let e = p.expect_error(code).await;
    assert_eq!(e["replyTo"], "hello", "{e}");
    e
}

/// Proves that nothing is queued for `p` before this point: an unknown type is answered
/// `UNKNOWN_TYPE` in every state, so that answer must be the next frame.
pub async fn fence(p: &mut Provider) {
    p.send(json!({"type": "conformance.fence"})).await;
    let e = p.recv().await;
    assert_eq!(
        e["type"], "error",
        "expected only the fence's answer, got {e}"
    );
    assert_eq!(e["code"], "UNKNOWN_TYPE", "{e}");
    assert_eq!(e["replyTo"], "conformance.fence", "{e}");
}

/// Every frame that arrives before the answer to a fence (see [`fence`]).
pub async fn until_fence(p: &mut Provider) -> Vec<Value> {
    p.send(json!({"type": "conformance.fence"})).await;
    let mut seen = Vec::new();
    loop {
        let m = p.recv().await;
        if m["type"] == "error" && m["replyTo"] == "conformance.fence" {
            assert_eq!(m["code"], "UNKNOWN_TYPE", "{m}");
            return seen;
        }
        seen.push(m);
    }
}

/// Next frame of type `kind`, skipping frames whose type is in `skip`.
pub async fn expect_skipping(p: &mut Provider, kind: &str, skip: &[&str]) -> Value {
    loop {
        let v = p.recv().await;
        if v["type"] == kind {
            return v;
        }
        assert!(
            skip.iter().any(|s| v["type"] == *s),
            "expected '{kind}', got {v}"
        );
    }
}

/// Expects the connection to stay silent for `d` (paused clock: virtual time).
pub async fn silent_for(p: &mut Provider, d: Duration) {
    tokio::select! {
        v = p.recv() => panic!("expected nothing, got {v}"),
        _ = tokio::time::sleep(d) => {}
    }
}

/// A tool definition with a `timeout` in ms.
pub fn timed_tool(name: &str, ms: u64) -> Value {
    let mut t = tool(name);
    t["timeout"] = json!(ms);
    t
}

/// Answers `call` with `data`.
pub async fn answer(p: &mut Provider, call: &Value, data: Value) {
    p.send(json!({"type": "tool.result", "id": call["id"], "data": data}))
        .await;
}

/// `active[].id` of a `sessions` / `sessions.updated` message.
pub fn session_ids(msg: &Value) -> Vec<String> {
    msg["active"]
        .as_array()
        .expect("'active' list")
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------- internal providers

/// An internal (in-process) provider: the spec's LocalProviderTransport, the same message
/// shapes without a socket or `auth` (spec decision A1). Frames are JSON, as on a socket.
pub struct Internal(pub tap_gateway::LocalProvider);

impl Internal {
    /// Connects; returns the provider and its first message, `sessions`.
    pub async fn connect(gw: &TestGateway) -> (Self, Value) {
        let mut p = Self(gw.handle.gateway().connect_local());
        let sessions = p.expect("sessions").await;
        (p, sessions)
    }

    pub fn send(&self, v: Value) {
        self.0.send_json(&v).expect("local connection open");
    }

    pub async fn recv(&mut self) -> Value {
        tokio::time::timeout(PATIENCE, self.0.recv_json())
            .await
            .expect("timed out waiting for a message")
            .expect("local connection closed")
    }

    pub async fn expect(&mut self, kind: &str) -> Value {
        let v = self.recv().await;
        assert_eq!(v["type"], kind, "expected '{kind}', got {v}");
        v
    }

    pub async fn expect_error(&mut self, code: &str) -> Value {
        let v = self.expect("error").await;
        assert_eq!(v["code"], code, "unexpected error: {v}");
        v
    }

    /// Every message before the answer to an unknown-type fence (see [`fence`]).
    pub async fn until_fence(&mut self) -> Vec<Value> {
        self.send(json!({"type": "conformance.fence"}));
        let mut seen = Vec::new();
        loop {
            let m = self.recv().await;
            if m["type"] == "error" && m["replyTo"] == "conformance.fence" {
                return seen;
            }
            seen.push(m);
        }
    }

    pub async fn fence(&mut self) {
        let seen = self.until_fence().await;
        assert!(
            seen.is_empty(),
            "expected nothing before the fence, got {seen:?}"
        );
    }

    /// `hello` for `session` (an id or "all"); consumes `hello.ack` and returns it with the
    /// sessions of the `session.lifecycle started` messages that follow (spec decision A2).
    pub async fn hello(&mut self, name: &str, session: &str, extra: Value) -> (Value, Vec<String>) {
        self.send(hello(name, session, extra));
        let ack = self.expect("hello.ack").await;
        let mut started = Vec::new();
        for m in self.until_fence().await {
            assert_eq!(
                (m["type"].as_str(), m["state"].as_str()),
                (Some("session.lifecycle"), Some("started")),
                "{m}"
            );
            started.push(m["sessionId"].as_str().unwrap().to_string());
        }
        (ack, started)
    }
}

/// An internal provider bound to `session` (an id or "all") with `extra` hello fields.
pub async fn internal(gw: &TestGateway, name: &str, session: &str, extra: Value) -> Internal {
    let (mut p, _) = Internal::connect(gw).await;
    p.hello(name, session, extra).await;
    p
}

// ---------------------------------------------------------------- external providers

/// A paired (external trust) provider: `auth {mode: "pair"}`, the code read where the
/// user reads it (the gateway's own surfaces), `auth.confirm`. Returns the provider, its
/// `sessions` message (with the issued token) and the pairing id.
pub async fn paired(gw: &TestGateway) -> (Provider, Value, String) {
    let g = gw.handle.gateway();
    let mut req = format!("ws://{}", g.address())
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("Origin", "https://app.example.test".parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async_with_config(req, None, true)
        .await
        .unwrap();
    let mut p = Provider { ws };
    no_delay(&p);
    let me = local_addr(&p);
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    p.expect("auth.pairing").await;
    let entry = g
        .pairing_list()
        .into_iter()
        .find(|e| e.remote == me)
        .expect("a pending pairing for this socket");
    p.send(json!({"type": "auth.confirm", "code": entry.code.clone().unwrap()}))
        .await;
    let sessions = p.expect("sessions").await;
    (p, sessions, entry.id)
}

/// A paired provider bound to `session` (the foreground one) with `extra` hello fields.
pub async fn paired_bound(gw: &TestGateway, name: &str, session: &str, extra: Value) -> Provider {
    let (mut p, _, _) = paired(gw).await;
    p.send(hello(name, session, extra)).await;
    expect_bound(&mut p, session).await;
    p
}

// ---------------------------------------------------------------- session hosts

/// A session host as raw frames (for exact wire text), authenticated.
pub async fn raw_host(gw: &TestGateway) -> Provider {
    let mut h = Provider::connect(&format!("{}/session", gw.url())).await;
    no_delay(&h);
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 1, "hostName": "conformance"}),
    )
    .await;
    h.expect("auth.ok").await;
    h
}

/// Registers another session on `host` (not in the foreground).
pub async fn second_session(host: &HostClient, label: &str) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some(label.into()),
        cwd: Some(format!("/work/{label}")),
        foreground: false,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Starts an invocation from `host`; the receiver yields its one `tool.result`.
pub fn invoke(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> oneshot::Receiver<HostEvent> {
    host.start_invoke(session, tool, args).unwrap().1
}

/// Invokes `tool` and answers the provider's `tool.call` with `data`; returns the result.
pub async fn call_and_answer(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
    tool: &str,
    data: Value,
) -> HostToolResult {
    let rx = invoke(host, session, tool, json!({}));
    let call = p.expect("tool.call").await;
    assert_eq!(call["tool"], tool, "{call}");
    answer(p, &call, data).await;
    result_of(rx).await
}

/// The result of invoking a tool nobody answers in time is decided by the gateway alone
/// (NOT_FOUND, INVALID_SESSION, RATE_LIMITED, ...).
pub async fn invoke_unanswered(host: &HostClient, session: &str, tool: &str) -> HostToolResult {
    result_of(invoke(host, session, tool, json!({}))).await
}

pub fn code(r: &HostToolResult) -> Option<&str> {
    r.error_code.as_ref().map(ErrorCode::as_str)
}

/// Next `delivery` to `host`, skipping other events.
pub async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

/// Next `session.tools` for `session` whose tool names are exactly `want` (sorted).
pub async fn tools_published(host: &mut HostClient, session: &str, want: &[&str]) -> SessionTools {
    let e = next_host_event(host, |e| {
        matches!(e, HostEvent::SessionTools(t) if t.session_id == session
            && t.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>() == want)
    })
    .await;
    match e {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

/// Event texts stored in `key` (`stream@provider`) of `session`, newest first.
pub async fn stored(host: &HostClient, session: &str, key: &str) -> Vec<String> {
    let h = host
        .streams_history(session, Some(key), None)
        .await
        .unwrap();
    h.streams
        .get(key)
        .map(|v| v.iter().map(|e| e.event.clone()).collect())
        .unwrap_or_default()
}

/// The session's tool names as `status` reports them, sorted.
pub async fn session_tool_names(host: &HostClient, session: &str) -> Vec<String> {
    let status = host.status().await.unwrap();
    let s = status
        .sessions
        .iter()
        .find(|s| s.id == session)
        .unwrap_or_else(|| panic!("no session {session} in {status:?}"));
    let mut names = s.tools.clone();
    names.sort();
    names
}

pub async fn precheck(host: &HostClient, session: &str, tool: &str, args: Value) -> ToolDecision {
    tokio::time::timeout(PATIENCE, host.precheck(session, tool, args))
        .await
        .expect("no tool.decision")
        .expect("precheck refused")
}

pub fn sections(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub async fn apply(host: &HostClient, session: &str, pairs: &[(&str, &str)]) -> PromptApplied {
    tokio::time::timeout(
        PATIENCE,
        host.apply_prompt(session, "prompt", sections(pairs)),
    )
    .await
    .expect("prompt.apply answered")
    .expect("prompt.apply succeeded")
}

/// Ends `session` from a task, so the test can act as the provider meanwhile.
pub fn end_in_background(host: &Arc<HostClient>, session: &str) -> JoinHandle<SessionEnded> {
    let host = host.clone();
    let session = session.to_string();
    tokio::spawn(async move { host.end_session(&session).await.unwrap() })
}

pub async fn ended(task: JoinHandle<SessionEnded>) -> SessionEnded {
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("the session did not end")
        .unwrap()
}

/// The provider's view of `session` ending: `shutdown.pending` (returned), then
/// `sessions.updated` without it.
pub async fn expect_shutdown(p: &mut Provider, session: &str) -> Value {
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    assert_eq!(pending["sessionId"], session, "{pending}");
    let updated = p.expect("sessions.updated").await;
    assert!(
        !session_ids(&updated).contains(&session.to_string()),
        "{updated}"
    );
    pending
}

/// A gateway whose sessions wait up to a minute for their providers when ending.
pub async fn far_deadline_gateway() -> TestGateway {
    TestGateway::start_with(|c| c.shutdown_deadline = FAR).await
}

/// Polls `cond` (every 10 ms of test time) until it holds, for at most [`PATIENCE`].
pub async fn wait_until<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cond().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether the gateway still lists a provider named `name`.
pub async fn provider_listed(host: &HostClient, name: &str) -> bool {
    host.status()
        .await
        .unwrap()
        .providers
        .iter()
        .any(|p| p.name.as_deref() == Some(name))
}

//! Pairing of external providers (spec: "External providers", `auth.pairing`,
//! `auth.confirm`, "Provider capabilities", "Identity protection"), over real sockets
//! against an in-process gateway. The user's side (reading the code, deny, revoke,
//! configure) goes through the engine API the control plane uses.

use tap_testkit::*;

use serde_json::{json, Value};
use std::time::Duration;
use tap_gateway::{CallRequest, Error, Gateway, GatewayConfig, GatewayEvent, GatewayHandle};
use tap_protocol::host::SessionRegister;
use tap_protocol::limits::{
    MAX_PAIRING_ATTEMPTS_PER_MINUTE, MAX_PENDING_PAIRINGS, PAIRING_CODE_TTL,
};
use tap_protocol::pairing::{PairingEntry, PairingState};
use tap_protocol::ErrorCode;
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const ORIGIN: &str = "https://app.example.test";

// ---------------------------------------------------------------- helpers

/// A raw provider socket, optionally sending an `Origin` header like a browser does.
async fn connect(gw: &Gateway, origin: Option<&str>) -> Provider {
    let mut req = format!("ws://{}", gw.address())
        .into_client_request()
        .unwrap();
    if let Some(o) = origin {
        req.headers_mut().insert("Origin", o.parse().unwrap());
    }
    Provider::connect_request(req).await
}

/// The pairing entry this provider's request created (matched by its socket address).
fn entry_of(gw: &Gateway, p: &Provider) -> PairingEntry {
    let me = p.local_addr();
    gw.pairing_list()
        .into_iter()
        .find(|e| e.remote == me)
        .unwrap_or_else(|| panic!("no pairing entry for {me}: {:?}", gw.pairing_list()))
}

/// A provider that sent `auth` (pair mode, with `extra` fields) and got `auth.pairing`.
async fn request_pairing(gw: &Gateway, extra: Value) -> (Provider, PairingEntry) {
    let mut p = connect(gw, Some(ORIGIN)).await;
    let mut auth = json!({"type": "auth", "mode": "pair"});
    auth.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    p.send(auth).await;
    let prompt = p.expect("auth.pairing").await;
    assert!(
        prompt["prompt"].as_str().is_some_and(|s| !s.is_empty()),
        "{prompt}"
    );
    let entry = entry_of(gw, &p);
    (p, entry)
}

fn code_of(e: &PairingEntry) -> String {
    e.code.clone().expect("pending entries carry their code")
}

/// A 6-digit code that is certainly not `code`.
fn wrong(code: &str) -> String {
    let n: u32 = code.parse().unwrap();
    format!("{:06}", (n + 1) % 1_000_000)
}

/// A paired provider (code confirmed; `sessions` consumed). Returns it, its token, the
/// `sessions` message and the pairing id.
async fn pair(gw: &Gateway, extra: Value) -> (Provider, String, Value, String) {
    let (mut p, entry) = request_pairing(gw, extra).await;
    p.send(json!({"type": "auth.confirm", "code": code_of(&entry)}))
        .await;
    let sessions = p.expect("sessions").await;
    let token = sessions["token"].as_str().expect("a token").to_string();
    (p, token, sessions, entry.id)
}

fn hello(name: &str, session: &str, tools: Value) -> Value {
    json!({"type": "hello", "name": name, "protocolVersion": 2, "session": session, "tools": tools})
}

async fn expect_bound(p: &mut Provider, session: &str) {
    let ack = p.expect("hello.ack").await;
    assert_eq!(ack["sessionId"], session, "{ack}");
    let started = p.expect("session.lifecycle").await;
    assert_eq!(started["state"], "started");
}

fn listed(gw: &Gateway, id: &str) -> Option<PairingEntry> {
    gw.pairing_list().into_iter().find(|e| e.id == id)
}

/// The next pairing event, skipping status changes.
async fn pairing_event(rx: &mut broadcast::Receiver<GatewayEvent>) -> GatewayEvent {
    loop {
        let e = tokio::time::timeout(PATIENCE, rx.recv())
            .await
            .expect("timed out waiting for a pairing event")
            .expect("event stream broken");
        if matches!(
            e,
            GatewayEvent::PairingChanged(_) | GatewayEvent::PairingRemoved { .. }
        ) {
            return e;
        }
    }
}

async fn changed(rx: &mut broadcast::Receiver<GatewayEvent>) -> PairingEntry {
    match pairing_event(rx).await {
        GatewayEvent::PairingChanged(e) => *e,
        other => panic!("expected PairingChanged, got {other:?}"),
    }
}

async fn removed(rx: &mut broadcast::Receiver<GatewayEvent>) -> (String, String) {
    match pairing_event(rx).await {
        GatewayEvent::PairingRemoved { id, reason } => (id, reason),
        other => panic!("expected PairingRemoved, got {other:?}"),
    }
}

async fn second_session(host: &tap_client::HostClient, foreground: bool) -> String {
    host.register_session(SessionRegister {
        label: Some("second".into()),
        cwd: Some("/second".into()),
        foreground,
        ..Default::default()
    })
    .await
    .unwrap()
    .id
}

/// A gateway on `home`, e.g. to restart one on the data directory of another.
async fn start_in(home: std::path::PathBuf) -> GatewayHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    GatewayHandle::start(listener, GatewayConfig::new(home))
        .await
        .unwrap()
}

// ---------------------------------------------------------------- the flow

#[tokio::test]
async fn full_flow_pair_confirm_bind_and_call_and_the_code_never_crosses_the_socket() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;

    // Every frame the provider receives, as text.
    let mut wire: Vec<String> = Vec::new();
    let mut p = connect(&g, Some(ORIGIN)).await;
    p.send(json!({"type": "auth", "mode": "pair", "name": "browser",
                  "metadata": {"url": "https://app.example.test/page"}}))
        .await;
    let prompt = p.expect("auth.pairing").await;
    wire.push(prompt.to_string());
    assert_eq!(
        prompt.as_object().unwrap().len(),
        2,
        "only type and prompt: {prompt}"
    );

    // What the user sees.
    let entry = entry_of(&g, &p);
    assert!(entry.id.starts_with("pr-"), "{entry:?}");
    assert_eq!(entry.state, PairingState::Pending);
    let code = code_of(&entry);
    assert_eq!(code.len(), 6);
    assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");
    assert_eq!(entry.origin.as_deref(), Some(ORIGIN));
    assert_eq!(entry.name.as_deref(), Some("browser"));
    assert_eq!(
        entry.metadata.as_ref().unwrap()["url"],
        "https://app.example.test/page"
    );
    assert_eq!(entry.remote, p.local_addr());
    let created = humantime::parse_rfc3339(&entry.created_at).unwrap();
    let expires = humantime::parse_rfc3339(entry.expires_at.as_ref().unwrap()).unwrap();
    assert_eq!(expires.duration_since(created).unwrap(), PAIRING_CODE_TTL);
    assert_eq!(entry.session, None);
    assert!(!entry.remember);
    assert!(!entry.connected);

    p.send(json!({"type": "auth.confirm", "code": code})).await;
    let sessions = p.expect("sessions").await;
    wire.push(sessions.to_string());
    let token = sessions["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("ext-"), "{token}");
    assert_eq!(token.len(), 4 + 43, "256 random bits, base64url");
    assert_eq!(sessions["active"][0]["id"], s.id.as_str());
    assert_eq!(sessions["active"][0]["cwd"], "/tmp");

    // Paired now, limited to the foreground session; the code is gone.
    let entry = listed(&g, &entry.id).unwrap();
    assert_eq!(entry.state, PairingState::Paired);
    assert_eq!(entry.code, None);
    assert_eq!(entry.expires_at, None);
    assert_eq!(entry.session.as_deref(), Some(s.id.as_str()));
    assert!(entry.connected);

    p.send(hello("browser", &s.id, json!([tool("page_title")])))
        .await;
    let ack = p.expect("hello.ack").await;
    wire.push(ack.to_string());
    let started = p.expect("session.lifecycle").await;
    wire.push(started.to_string());
    let provider_id = ack["providerId"].as_str().unwrap().to_string();
    let status = g.status();
    let me = status
        .providers
        .iter()
        .find(|p| p.id == provider_id)
        .unwrap();
    assert_eq!(me.trust, "external");
    assert_eq!(me.state, "bound");

    let call = tokio::spawn({
        let g = g.clone();
        let session = s.id.clone();
        async move {
            g.call_tool(CallRequest {
                session_id: session,
                tool: "page_title".into(),
                args: json!({}),
                ..Default::default()
            })
            .await
        }
    });
    let c = p.expect("tool.call").await;
    wire.push(c.to_string());
    p.send(json!({"type": "tool.result", "id": c["id"], "data": "Example page"}))
        .await;
    let result = tokio::time::timeout(PATIENCE, call).await.unwrap().unwrap();
    assert_eq!(result.unwrap(), json!("Example page"));

    p.send(json!({"type": "goodbye"})).await;
    wire.extend(p.expect_closed().await.iter().map(Value::to_string));
    for frame in &wire {
        assert!(
            !frame.contains(&code),
            "the code went over the socket: {frame}"
        );
    }
}

#[tokio::test]
async fn reconnecting_with_the_issued_token_gives_external_trust_without_a_new_token() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let (mut p, token, _, id) = pair(&g, json!({})).await;
    p.send(json!({"type": "goodbye"})).await;
    p.expect_closed().await;

    let mut again = connect(&g, None).await;
    again.send(json!({"type": "auth", "token": token})).await;
    let sessions = again.expect("sessions").await;
    assert!(sessions.get("token").is_none(), "{sessions}");
    assert!(listed(&g, &id).unwrap().connected);
    again.send(hello("ext", &s.id, json!([tool("t")]))).await;
    expect_bound(&mut again, &s.id).await;
    let trust: Vec<String> = g.status().providers.into_iter().map(|p| p.trust).collect();
    assert_eq!(trust, ["external"]);

    // A token that was never issued still fails as before.
    let mut stranger = connect(&g, None).await;
    stranger
        .send(json!({"type": "auth", "token": format!("{token}x")}))
        .await;
    let e = stranger.expect_error("AUTH_FAILED").await;
    assert_eq!(e["message"], "Invalid token");
    stranger.expect_closed().await;
}

#[tokio::test]
async fn a_wrong_code_is_fatal_and_ends_the_request() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut events = g.subscribe();
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    assert_eq!(changed(&mut events).await.id, entry.id);
    p.send(json!({"type": "auth.confirm", "code": wrong(&code_of(&entry))}))
        .await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert_eq!(e["replyTo"], "auth.confirm");
    assert!(p.expect_closed().await.is_empty());
    assert!(g.pairing_list().is_empty());
    assert_eq!(removed(&mut events).await, (entry.id, "failed".into()));
}

#[tokio::test]
async fn while_pairing_only_auth_confirm_is_legal() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    for (msg, kind) in [
        (hello("x", &s.id, json!([])), "hello"),
        (json!({"type": "auth", "token": gw.token()}), "auth"),
        (json!({"type": "auth", "mode": "pair"}), "auth"),
        (
            json!({"type": "push", "level": "keep", "event": "e"}),
            "push",
        ),
    ] {
        p.send(msg).await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], kind, "{e}");
    }
    p.send(json!({"type": "no.such.type"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
    p.send_raw("not json").await;
    p.expect_error("INVALID_JSON").await;
    // Still pending, and the gateway token did not slip in: the code still works.
    assert_eq!(g.pairing_list().len(), 1);
    p.send(json!({"type": "auth.confirm", "code": code_of(&entry)}))
        .await;
    assert!(p.expect("sessions").await["token"].is_string());
}

#[tokio::test(start_paused = true)]
async fn a_pending_request_expires_and_the_auth_timeout_does_not_apply_meanwhile() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut events = g.subscribe();
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    changed(&mut events).await;

    // Far past the 10 s auth timeout, just before the code expires: still waiting.
    tokio::time::sleep(PAIRING_CODE_TTL - Duration::from_secs(1)).await;
    p.send(json!({"type": "no.such.type"})).await;
    p.expect_error("UNKNOWN_TYPE").await;
    assert_eq!(g.pairing_list().len(), 1);

    tokio::time::sleep(Duration::from_secs(2)).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(e["message"].as_str().unwrap().contains("expired"), "{e}");
    assert!(p.expect_closed().await.is_empty());
    assert!(g.pairing_list().is_empty());
    assert_eq!(removed(&mut events).await, (entry.id, "expired".into()));
}

#[tokio::test(start_paused = true)]
async fn code_attempts_are_limited_across_connections() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    // Five wrong guesses, each on its own connection.
    for _ in 0..MAX_PAIRING_ATTEMPTS_PER_MINUTE {
        let (mut p, entry) = request_pairing(&g, json!({})).await;
        p.send(json!({"type": "auth.confirm", "code": wrong(&code_of(&entry))}))
            .await;
        p.expect_error("AUTH_FAILED").await;
        p.expect_closed().await;
    }
    // The sixth connection, within the minute: refused without evaluating the code, and
    // its request and connection survive.
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    let code = code_of(&entry);
    for attempt in [wrong(&code), code.clone()] {
        p.send(json!({"type": "auth.confirm", "code": attempt}))
            .await;
        let e = p.expect_error("RATE_LIMITED").await;
        assert_eq!(e["replyTo"], "auth.confirm");
    }
    assert_eq!(listed(&g, &entry.id).unwrap().state, PairingState::Pending);

    // Once the minute has passed, the right code works.
    tokio::time::sleep(Duration::from_secs(60)).await;
    p.send(json!({"type": "auth.confirm", "code": code})).await;
    assert!(p.expect("sessions").await["token"].is_string());
}

#[tokio::test]
async fn more_than_the_pending_limit_is_rate_limited_and_closed() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut waiting = Vec::new();
    for _ in 0..MAX_PENDING_PAIRINGS {
        waiting.push(request_pairing(&g, json!({})).await);
    }
    let mut p = connect(&g, None).await;
    p.send(json!({"type": "auth", "mode": "pair"})).await;
    let e = p.expect_error("RATE_LIMITED").await;
    assert_eq!(e["replyTo"], "auth");
    assert!(p.expect_closed().await.is_empty());
    assert_eq!(g.pairing_list().len(), MAX_PENDING_PAIRINGS);

    // A request that ends makes room.
    let (mut gone, _) = waiting.pop().unwrap();
    gone.send(json!({"type": "goodbye"})).await;
    gone.expect_closed().await;
    request_pairing(&g, json!({})).await;
}

#[tokio::test]
async fn the_user_can_deny_a_request() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut events = g.subscribe();
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    changed(&mut events).await;
    g.pairing_deny(&entry.id).unwrap();
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("denied by the user"),
        "{e}"
    );
    assert!(p.expect_closed().await.is_empty());
    assert!(g.pairing_list().is_empty());
    assert_eq!(
        removed(&mut events).await,
        (entry.id.clone(), "denied".into())
    );

    let gone = g.pairing_deny(&entry.id).unwrap_err();
    assert_eq!(
        gone,
        Error::new(ErrorCode::NotFound, format!("no pairing '{}'", entry.id))
    );
    assert_eq!(gone.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn deny_all_refuses_every_pending_request_and_leaves_paired_ones() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, _s) = gw.host_with_session().await;
    let (_paired, _, _, paired_id) = pair(&g, json!({})).await;
    let mut pending = Vec::new();
    for _ in 0..3 {
        pending.push(request_pairing(&g, json!({})).await.0);
    }
    assert_eq!(g.pairing_deny_all(), 3);
    for p in &mut pending {
        p.expect_error("AUTH_FAILED").await;
        p.expect_closed().await;
    }
    let left: Vec<String> = g.pairing_list().into_iter().map(|e| e.id).collect();
    assert_eq!(left, std::slice::from_ref(&paired_id));
    assert_eq!(g.pairing_deny_all(), 0);

    // Deny is for pending requests only.
    let e = g.pairing_deny(&paired_id).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unauthorized, "{e:?}");
}

#[tokio::test]
async fn revoke_closes_the_connection_and_the_token_dies() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let mut events = g.subscribe();
    let (mut p, token, _, id) = pair(&g, json!({})).await;
    p.send(hello("ext", &s.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &s.id).await;

    // Revoke is for paired providers only.
    let (_pending, req) = request_pairing(&g, json!({})).await;
    let e = g.pairing_revoke(&req.id).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unauthorized, "{e:?}");

    g.pairing_revoke(&id).unwrap();
    let e = p.expect_error("AUTH_FAILED").await;
    assert!(e["message"].as_str().unwrap().contains("revoked"), "{e}");
    assert_eq!(e["sessionId"], s.id.as_str());
    p.expect_closed().await;
    loop {
        match pairing_event(&mut events).await {
            GatewayEvent::PairingRemoved { id: gone, reason } => {
                assert_eq!((gone, reason.as_str()), (id.clone(), "revoked"));
                break;
            }
            _ => continue,
        }
    }
    assert!(listed(&g, &id).is_none());
    assert_eq!(
        g.pairing_revoke(&id).unwrap_err(),
        Error::new(ErrorCode::NotFound, format!("no pairing '{id}'"))
    );

    let mut again = connect(&g, None).await;
    again.send(json!({"type": "auth", "token": token})).await;
    again.expect_error("AUTH_FAILED").await;
    again.expect_closed().await;
}

// ---------------------------------------------------------------- remember

#[tokio::test]
async fn a_remembered_pairing_survives_a_restart_and_stores_only_a_hash() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let home = g.files().host_token.parent().unwrap().to_path_buf();
    let store = home.join("paired-providers.json");
    let (_host, _s) = gw.host_with_session().await;

    let (mut p, entry) = request_pairing(&g, json!({"name": "browser"})).await;
    let configured = g.pairing_configure(&entry.id, None, Some(true)).unwrap();
    assert!(configured.remember);
    assert!(
        !store.exists(),
        "nothing is stored before the code is confirmed"
    );
    p.send(json!({"type": "auth.confirm", "code": code_of(&entry)}))
        .await;
    let token = p.expect("sessions").await["token"]
        .as_str()
        .unwrap()
        .to_string();

    let text = std::fs::read_to_string(&store).unwrap();
    assert!(!text.contains(&token), "the token itself is never stored");
    assert!(!text.contains(&token["ext-".len()..]));
    let saved: Value = serde_json::from_str(&text).unwrap();
    let record = &saved["providers"][0];
    assert_eq!(record["id"], entry.id.as_str());
    assert_eq!(record["name"], "browser");
    assert_eq!(record["origin"], ORIGIN);
    let hash = record["tokenSha256"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    drop(p);
    let TestGateway { handle, dir } = gw;
    handle.stop().await.unwrap();
    assert!(store.exists(), "stop keeps the remembered pairings");

    let restarted = start_in(home.clone()).await;
    let g = restarted.gateway().clone();
    let listed_after = g.pairing_list();
    assert_eq!(listed_after.len(), 1);
    let e = &listed_after[0];
    assert_eq!(e.id, entry.id);
    assert_eq!(e.state, PairingState::Paired);
    assert!(e.remember);
    assert!(!e.connected);
    assert_eq!(e.name.as_deref(), Some("browser"));
    assert_eq!(e.origin.as_deref(), Some(ORIGIN));

    // The old session is gone; a new foreground session is the one it may join.
    let host = tap_client::HostClient::connect(
        &format!("ws://{}/session", g.address()),
        g.host_token(),
        "test-host",
        None,
    )
    .await
    .unwrap();
    let s = second_session(&host, true).await;
    let mut p = connect(&g, None).await;
    p.send(json!({"type": "auth", "token": token})).await;
    let sessions = p.expect("sessions").await;
    assert!(sessions.get("token").is_none());
    assert!(listed(&g, &entry.id).unwrap().connected);
    p.send(hello("browser", &s, json!([tool("t")]))).await;
    expect_bound(&mut p, &s).await;
    assert_eq!(g.status().providers[0].trust, "external");

    // Forgetting it rewrites the store; revoking the last one removes the file.
    g.pairing_configure(&entry.id, None, Some(false)).unwrap();
    assert!(!store.exists());
    g.pairing_configure(&entry.id, None, Some(true)).unwrap();
    assert!(store.exists());
    g.pairing_revoke(&entry.id).unwrap();
    assert!(!store.exists());
    p.expect_error("AUTH_FAILED").await;
    drop(host);
    restarted.stop().await.unwrap();

    let again = start_in(home).await;
    assert!(again.gateway().pairing_list().is_empty());
    again.stop().await.unwrap();
    drop(dir);
}

#[tokio::test]
async fn a_pairing_not_remembered_dies_with_the_gateway() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let home = g.files().host_token.parent().unwrap().to_path_buf();
    let (p, token, _, _) = pair(&g, json!({})).await;
    drop(p);
    let TestGateway { handle, dir } = gw;
    handle.stop().await.unwrap();
    assert!(!home.join("paired-providers.json").exists());

    let restarted = start_in(home).await;
    let g = restarted.gateway().clone();
    assert!(g.pairing_list().is_empty());
    let mut p = connect(&g, None).await;
    p.send(json!({"type": "auth", "token": token})).await;
    let e = p.expect_error("AUTH_FAILED").await;
    assert_eq!(e["message"], "Invalid token");
    p.expect_closed().await;
    restarted.stop().await.unwrap();
    drop(dir);
}

// ---------------------------------------------------------------- capabilities

#[tokio::test]
async fn an_external_provider_gets_only_what_the_capability_matrix_allows() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, false).await;

    let (mut p, _, sessions, _) = pair(&g, json!({"name": "ext"})).await;
    // `cwd` only for the session it may bind to.
    let active = sessions["active"].as_array().unwrap();
    assert_eq!(active.len(), 2);
    assert_eq!(active[0]["id"], s1.id.as_str());
    assert_eq!(active[0]["cwd"], "/tmp");
    assert_eq!(active[1]["id"], s2.as_str());
    assert!(active[1].get("cwd").is_none(), "{sessions}");

    p.send(hello("ext", &s2, json!([tool("t")]))).await;
    let e = p.expect_error("INVALID_SESSION").await;
    assert!(e["message"].as_str().unwrap().contains(&s1.id), "{e}");
    p.send(hello("ext", "all", json!([tool("t")]))).await;
    p.expect_error("UNAUTHORIZED").await;

    let refused = [
        json!({"context": "ambient"}),
        json!({"startup_context": "at start"}),
        json!({"hooks": {"onPreToolUse": [{"match": {"tool": "t"}, "action": "deny"}]}}),
        json!({"hooks": {"transforms": {"safety": {"action": "callback"}}}}),
        json!({"hooks": {"transforms": {"identity": {"action": "replace", "content": "x"}}}}),
        json!({"subscribe": ["user.message"]}),
    ];
    for extra in refused {
        let mut h = hello("ext", &s1.id, json!([tool("t")]));
        h.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p.send(h).await;
        let e = p.expect_error("UNAUTHORIZED").await;
        assert_eq!(e["replyTo"], "hello", "{extra}: {e}");
    }
    // Identity protection: the token was issued to "ext".
    p.send(hello("impostor", &s1.id, json!([tool("t")]))).await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert!(e["message"].as_str().unwrap().contains("'ext'"), "{e}");

    // Tools, tool-event subscriptions and a static append are fine.
    let mut h = hello("ext", &s1.id, json!([tool("t")]));
    h["subscribe"] = json!(["tool.execution_complete"]);
    h["hooks"] = json!({"transforms": {"tools": {"action": "append", "content": "x"}}});
    p.send(h).await;
    expect_bound(&mut p, &s1.id).await;

    p.send(json!({"type": "context.update", "requestId": "r1", "context": "x"}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["requestId"], "r1");
    p.send(json!({"type": "hooks.update", "requestId": "r2",
                  "onPreToolUse": [{"match": {"tool": "t"}, "action": "deny"}]}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["requestId"], "r2");

    // Push and reading its own stream work.
    p.send(json!({"type": "push", "level": "keep", "stream": "log", "event": "hi"}))
        .await;
    p.send(json!({"type": "stream.query", "queryId": "q", "streams": ["log"]}))
        .await;
    let h = p.expect("stream.history").await;
    assert_eq!(h["streams"]["log"][0]["event"], "hi");
    p.send(json!({"type": "stream.query", "queryId": "q2", "streams": ["log@other"]}))
        .await;
    p.expect_error("UNAUTHORIZED").await;
}

#[tokio::test]
async fn the_user_can_limit_a_pairing_to_another_session() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (host, s1) = gw.host_with_session().await;
    let s2 = second_session(&host, false).await;

    // Chosen while pending: the provider may bind there although it is not foreground.
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    assert_eq!(
        g.pairing_configure(&entry.id, Some("nope".into()), None)
            .unwrap_err(),
        Error::new(ErrorCode::InvalidSession, "session 'nope' does not exist")
    );
    assert_eq!(
        g.pairing_configure("pr-none", None, Some(true))
            .unwrap_err()
            .code,
        ErrorCode::NotFound
    );
    let e = g
        .pairing_configure(&entry.id, Some(s2.clone()), None)
        .unwrap();
    assert_eq!(e.session.as_deref(), Some(s2.as_str()));
    p.send(json!({"type": "auth.confirm", "code": code_of(&entry)}))
        .await;
    let sessions = p.expect("sessions").await;
    assert!(sessions["active"][0].get("cwd").is_none(), "{sessions}");
    assert_eq!(sessions["active"][1]["cwd"], "/second");
    p.send(hello("ext", &s1.id, json!([tool("t")]))).await;
    p.expect_error("INVALID_SESSION").await;
    p.send(hello("ext", &s2, json!([tool("t")]))).await;
    expect_bound(&mut p, &s2).await;

    // Changed while bound: it leaves the old session at once and may bind to the new one.
    g.pairing_configure(&entry.id, Some(s1.id.clone()), None)
        .unwrap();
    let e = p.expect_error("INVALID_SESSION").await;
    assert_eq!(e["sessionId"], s2.as_str());
    let updated = p.expect("sessions.updated").await;
    assert_eq!(updated["active"][0]["cwd"], "/tmp");
    assert!(updated["active"][1].get("cwd").is_none());
    let status = g.status();
    let second = status.sessions.iter().find(|x| x.id == s2).unwrap();
    assert!(second.tools.is_empty(), "{:?}", second.tools);
    p.send(hello("ext", &s1.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &s1.id).await;
}

#[tokio::test]
async fn when_its_session_ends_a_paired_provider_may_join_the_next_foreground_session() {
    let gw = TestGateway::start_with(|c| c.shutdown_deadline = Duration::from_millis(50)).await;
    let g = gw.handle.gateway().clone();
    let (host, s1) = gw.host_with_session().await;
    let background = second_session(&host, false).await;
    let (mut p, _, _, id) = pair(&g, json!({})).await;
    p.send(hello("ext", &s1.id, json!([tool("t")]))).await;
    expect_bound(&mut p, &s1.id).await;

    host.end_session(&s1.id).await.unwrap();
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending");
    p.expect("sessions.updated").await;
    // Still connected; no foreground session now, and the background one is not allowed.
    p.send(hello("ext", &background, json!([tool("t")]))).await;
    p.expect_error("INVALID_SESSION").await;

    let next = second_session(&host, true).await;
    let updated = p.expect("sessions.updated").await;
    let active = updated["active"].as_array().unwrap();
    let shown = active.iter().find(|s| s["id"] == next.as_str()).unwrap();
    assert_eq!(shown["cwd"], "/second", "{updated}");
    p.send(hello("ext", &next, json!([tool("t")]))).await;
    expect_bound(&mut p, &next).await;
    assert_eq!(
        listed(&g, &id).unwrap().session.as_deref(),
        Some(next.as_str())
    );
}

// ---------------------------------------------------------------- events

#[tokio::test]
async fn every_pairing_change_is_an_event() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (_host, s) = gw.host_with_session().await;
    let mut events = g.subscribe();

    let (mut p, entry) = request_pairing(&g, json!({})).await;
    let created = changed(&mut events).await;
    assert_eq!(created.state, PairingState::Pending);
    assert_eq!(created.code, entry.code);

    let configured = g.pairing_configure(&entry.id, None, Some(false)).unwrap();
    assert_eq!(changed(&mut events).await, configured);

    p.send(json!({"type": "auth.confirm", "code": code_of(&entry)}))
        .await;
    let token = p.expect("sessions").await["token"]
        .as_str()
        .unwrap()
        .to_string();
    let confirmed = changed(&mut events).await;
    assert_eq!(confirmed.state, PairingState::Paired);
    assert!(confirmed.connected);

    // The first hello names the pairing.
    p.send(hello("ext", &s.id, json!([]))).await;
    expect_bound(&mut p, &s.id).await;
    assert_eq!(changed(&mut events).await.name.as_deref(), Some("ext"));

    p.send(json!({"type": "goodbye"})).await;
    p.expect_closed().await;
    assert!(!changed(&mut events).await.connected);

    let mut p = connect(&g, None).await;
    p.send(json!({"type": "auth", "token": token})).await;
    p.expect("sessions").await;
    assert!(changed(&mut events).await.connected);

    g.pairing_revoke(&entry.id).unwrap();
    assert_eq!(removed(&mut events).await, (entry.id, "revoked".into()));
}

#[tokio::test]
async fn a_provider_that_leaves_before_confirming_takes_its_request_along() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut events = g.subscribe();
    let (mut p, entry) = request_pairing(&g, json!({})).await;
    changed(&mut events).await;
    p.send(json!({"type": "goodbye"})).await;
    assert_eq!(removed(&mut events).await, (entry.id, "failed".into()));
    assert!(g.pairing_list().is_empty());
}

#[tokio::test]
async fn pairing_requests_validate_the_name() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let mut p = connect(&g, None).await;
    p.send(json!({"type": "auth", "mode": "pair", "name": "x".repeat(129)}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["replyTo"], "auth");
    p.send(json!({"type": "auth", "mode": "pair", "name": "evil\u{1b}[2J"}))
        .await;
    p.expect_error("INVALID_JSON").await;
    assert!(g.pairing_list().is_empty());
    // Still in AwaitAuth: a proper request works.
    p.send(json!({"type": "auth", "mode": "pair", "name": "  ok  "}))
        .await;
    p.expect("auth.pairing").await;
    assert_eq!(entry_of(&g, &p).name.as_deref(), Some("ok"));
}

#[tokio::test]
async fn a_project_provider_is_unaffected_by_pairing_rules() {
    let gw = TestGateway::start().await;
    let g = gw.handle.gateway().clone();
    let (host, _s1) = gw.host_with_session().await;
    let s2 = second_session(&host, false).await;
    let (mut p, sessions) = gw.authed().await;
    assert!(sessions.get("token").is_none());
    assert_eq!(sessions["active"][1]["cwd"], "/second");
    let mut h = hello("proj", &s2, json!([tool("t")]));
    h["context"] = json!("ambient");
    p.send(h).await;
    expect_bound(&mut p, &s2).await;
    assert_eq!(g.status().providers[0].trust, "project");
}

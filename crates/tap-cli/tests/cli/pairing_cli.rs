//! `tap pairing list|deny|revoke` (docs/cli.md): against a real `tap gateway` child, with
//! external providers asking to pair over raw sockets, as a browser page would.

use crate::common;
use crate::common::{eventually, tap_command, CliOut, GatewayProcess, Provider, PATIENCE};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

/// A page origin, as a browser provider's handshake carries it.
const PAGE: &str = "http://page.example:8080";

/// A provider that sent `auth {mode: "pair"}` from [`PAGE`] and got `auth.pairing`.
async fn pairing_provider(gw: &GatewayProcess, name: &str) -> Provider {
    let mut req = gw.url.as_str().into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", HeaderValue::from_static(PAGE));
    let mut p = Provider::connect_request(req).await.with_patience(PATIENCE);
    p.send(json!({"type": "auth", "mode": "pair", "name": name}))
        .await;
    let prompt = p.expect_next("auth.pairing").await;
    assert!(prompt["prompt"].is_string(), "{prompt}");
    p
}

/// `tap pairing list --json`, which must succeed with an array.
async fn list(gw: &GatewayProcess) -> Vec<Value> {
    let out = gw.run(&["pairing", "list", "--json"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    out.json().as_array().expect("an array").clone()
}

/// The one entry named `name`.
async fn entry(gw: &GatewayProcess, name: &str) -> Value {
    eventually(&format!("pairing entry {name}"), || async {
        list(gw).await.into_iter().find(|e| e["name"] == name)
    })
    .await
}

/// `{"errorCode": code, "error": non-empty}` on stdout and exit 1.
fn assert_failure(out: &CliOut, code: &str) -> String {
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], code, "{out:?}");
    assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
    v["error"].as_str().expect("error message").to_string()
}

/// The provider's next frame must be `error AUTH_FAILED`, then the socket closes.
async fn assert_refused(p: &mut Provider) {
    let e = p.recv().await;
    assert_eq!(e["type"], "error", "{e}");
    assert_eq!(e["code"], "AUTH_FAILED", "{e}");
    assert_closed(p).await;
}

async fn assert_closed(p: &mut Provider) {
    loop {
        match tokio::time::timeout(PATIENCE, p.ws.next())
            .await
            .expect("the provider socket stayed open")
        {
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(&t).unwrap();
                assert_ne!(v["type"], "tool.call", "{v}");
            }
            Some(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_json_shows_a_pending_request_with_its_code_and_origin() {
    let gw = GatewayProcess::start().await;
    assert_eq!(list(&gw).await, Vec::<Value>::new());
    let _p = pairing_provider(&gw, "page-tools").await;
    let e = entry(&gw, "page-tools").await;
    assert_eq!(e["state"], "pending", "{e}");
    let code = e["code"].as_str().expect("a pending entry has its code");
    assert!(
        code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()),
        "{e}"
    );
    assert_eq!(e["origin"], PAGE, "{e}");
    assert!(e["id"].as_str().is_some_and(|id| !id.is_empty()), "{e}");
    for key in ["createdAt", "expiresAt", "remote"] {
        assert!(e[key].is_string(), "{key} missing: {e}");
    }
    assert_eq!(e["remember"], false, "{e}");

    // The human listing shows the code too.
    let out = gw.run(&["pairing", "list"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains(code), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_refuses_the_provider_with_auth_failed() {
    let gw = GatewayProcess::start().await;
    let mut p = pairing_provider(&gw, "to-deny").await;
    let id = entry(&gw, "to-deny").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = gw.run(&["pairing", "deny", &id]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!({"id": id, "state": "denied"}));
    assert_refused(&mut p).await;
    assert_eq!(list(&gw).await, Vec::<Value>::new());

    // Gone now: denying again is NOT_FOUND.
    let out = gw.run(&["pairing", "deny", &id]).await;
    let message = assert_failure(&out, "NOT_FOUND");
    assert!(message.contains(&id), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_all_refuses_every_pending_provider() {
    let gw = GatewayProcess::start().await;
    let mut a = pairing_provider(&gw, "a").await;
    let mut b = pairing_provider(&gw, "b").await;
    entry(&gw, "a").await;
    entry(&gw, "b").await;
    let out = gw.run(&["pairing", "deny", "--all"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!({"denied": 2}));
    assert_refused(&mut a).await;
    assert_refused(&mut b).await;
    let out = gw.run(&["pairing", "deny", "--all"]).await;
    assert_eq!(out.json(), json!({"denied": 0}), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoke_closes_a_paired_provider_and_unknown_ids_are_not_found() {
    let gw = GatewayProcess::start().await;
    // Pairing needs a session to scope the provider to.
    let _session = common::SessionOpen::open(&gw, &["--label", "pairing"]).await;
    let mut p = pairing_provider(&gw, "to-revoke").await;
    let e = entry(&gw, "to-revoke").await;
    let id = e["id"].as_str().unwrap().to_string();
    p.send(json!({"type": "auth.confirm", "code": e["code"]}))
        .await;
    let sessions = p.expect_next("sessions").await;
    assert!(sessions["token"].is_string(), "{sessions}");
    let paired = entry(&gw, "to-revoke").await;
    assert_eq!(paired["state"], "paired", "{paired}");
    assert!(paired.get("code").is_none(), "{paired}");

    // A paired provider cannot be denied, only revoked.
    let out = gw.run(&["pairing", "deny", &id]).await;
    assert_failure(&out, "UNAUTHORIZED");
    let out = gw.run(&["pairing", "revoke", &id]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!({"id": id, "state": "revoked"}));
    assert_closed(&mut p).await;
    assert_eq!(list(&gw).await, Vec::<Value>::new());

    let out = gw.run(&["pairing", "revoke", "pr-unknown"]).await;
    assert_failure(&out, "NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gateway_or_an_id_the_commands_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tap_command(&dir.path().join("home"), &dir.path().join("copilot"));
    cmd.args(["pairing", "list", "--json"]);
    let out = common::run(cmd).await;
    assert_failure(&out, "DISCONNECTED");

    let gw = GatewayProcess::start().await;
    let out = gw.run(&["pairing", "deny"]).await;
    assert_eq!(out.code(), Some(2), "usage error: {out:?}");
    let out = gw.run(&["pairing", "deny", "pr-1", "--all"]).await;
    assert_eq!(out.code(), Some(2), "usage error: {out:?}");

    // A gateway whose control token is not in TAP_HOME (e.g. kept in a keyring).
    std::fs::remove_file(gw.home.join("control-token")).unwrap();
    let out = gw.run(&["pairing", "list", "--json"]).await;
    let message = assert_failure(&out, "AUTH_FAILED");
    assert!(message.contains("control-token"), "{message}");
}

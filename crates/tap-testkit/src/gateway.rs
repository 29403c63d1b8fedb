//! A real gateway in this process on `127.0.0.1:0`, with a temporary TAP_HOME (and
//! COPILOT_HOME) that goes away with it, and the ways a test reaches it.

use crate::provider::{expect_bound, hello, Provider};
use crate::FAR;
use serde_json::{json, Value};
use tap_client::HostClient;
use tap_gateway::{GatewayConfig, GatewayHandle};
use tap_protocol::host::SessionRegister;
use tap_protocol::provider::SessionInfo;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A running gateway; dropping it stops it, [`GatewayHandle`] has the graceful stop.
pub struct TestGateway {
    /// The engine, as the desktop app and `tap gateway` hold it.
    pub handle: GatewayHandle,
    /// Holds TAP_HOME (`home/`) and COPILOT_HOME (`copilot/`).
    pub dir: tempfile::TempDir,
}

impl TestGateway {
    /// With the default configuration.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// With the configuration changed by `tweak` first.
    pub async fn start_with(tweak: impl FnOnce(&mut GatewayConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = GatewayConfig::new(dir.path().join("home"));
        config.copilot_home = Some(dir.path().join("copilot"));
        tweak(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let handle = GatewayHandle::start(listener, config).await.unwrap();
        Self { handle, dir }
    }

    /// A gateway whose emitter commands get a `HOME` of their own: `bash -lc` then reads
    /// no login profile of this machine's (a slow `pyenv init`, or one a killed test left
    /// locked). The tests are about tap, not about the machine's dotfiles.
    pub async fn for_emitters() -> Self {
        Self::for_emitters_with(|_| {}).await
    }

    /// [`TestGateway::for_emitters`], with the configuration changed by `tweak` too.
    pub async fn for_emitters_with(tweak: impl FnOnce(&mut GatewayConfig)) -> Self {
        Self::start_with(|c| {
            let home = c.data_dir.with_file_name("emitter-home");
            std::fs::create_dir_all(&home).unwrap();
            c.emitter_env = vec![("HOME".into(), home.display().to_string())];
            tweak(c);
        })
        .await
    }

    /// `ws://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("ws://{}", self.handle.gateway().address())
    }

    /// The provider token (trust "project").
    pub fn token(&self) -> String {
        self.handle.gateway().provider_token().to_string()
    }

    /// A session host on `/session`.
    pub async fn host(&self) -> HostClient {
        HostClient::connect(
            &format!("{}/session", self.url()),
            self.handle.gateway().host_token(),
            "test-host",
            None,
        )
        .await
        .unwrap()
    }

    /// A host with one registered session (in the foreground).
    pub async fn host_with_session(&self) -> (HostClient, SessionInfo) {
        let host = self.host().await;
        let info = host
            .register_session(SessionRegister {
                label: Some("test".into()),
                cwd: Some("/tmp".into()),
                foreground: true,
                ..Default::default()
            })
            .await
            .unwrap();
        (host, info)
    }

    /// A raw provider socket, not yet authenticated.
    pub async fn provider(&self) -> Provider {
        Provider::connect(&self.url()).await
    }

    /// A provider past `auth` with the gateway token; returns `sessions` too.
    pub async fn authed(&self) -> (Provider, Value) {
        Provider::authed_at(&self.url(), &self.token()).await
    }

    /// An authenticated provider bound to `session` with the `hello` fields in `extra`;
    /// `hello.ack` (returned) and `session.lifecycle started` consumed.
    pub async fn bind(&self, name: &str, session: &str, extra: Value) -> (Provider, Value) {
        let (mut p, _) = self.authed().await;
        p.send(hello(name, session, extra)).await;
        let ack = expect_bound(&mut p, session).await;
        (p, ack)
    }

    /// A provider bound to `session` with `tools` (see [`TestGateway::bind`]).
    pub async fn bound(&self, name: &str, session: &str, tools: Value) -> Provider {
        self.bind(name, session, json!({ "tools": tools })).await.0
    }
}

/// A gateway whose sessions wait up to a minute for their providers when ending.
pub async fn far_deadline_gateway() -> TestGateway {
    TestGateway::start_with(|c| c.shutdown_deadline = FAR).await
}

/// A raw provider socket (not authenticated).
pub async fn connect(gw: &TestGateway) -> Provider {
    gw.provider().await
}

/// A provider past `auth` with the gateway token (trust "project"); returns `sessions`.
pub async fn authed(gw: &TestGateway) -> (Provider, Value) {
    gw.authed().await
}

/// See [`TestGateway::bind`].
pub async fn bind(gw: &TestGateway, name: &str, session: &str, extra: Value) -> (Provider, Value) {
    gw.bind(name, session, extra).await
}

/// See [`TestGateway::bound`].
pub async fn bound(gw: &TestGateway, name: &str, session: &str, tools: Value) -> Provider {
    gw.bound(name, session, tools).await
}

/// A paired (external trust) provider: `auth {mode: "pair"}` from a page origin, the code
/// read where the user reads it (the gateway's own surfaces), `auth.confirm`. Returns the
/// provider, its `sessions` message (with the issued token) and the pairing id.
pub async fn paired(gw: &TestGateway) -> (Provider, Value, String) {
    let g = gw.handle.gateway();
    let mut req = gw.url().into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", "https://app.example.test".parse().unwrap());
    let mut p = Provider::connect_request(req).await;
    let me = p.local_addr();
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

/// A session host as raw frames (for exact wire text), authenticated.
pub async fn raw_host(gw: &TestGateway) -> Provider {
    let mut h = Provider::connect(&format!("{}/session", gw.url())).await;
    h.send(
        json!({"type": "auth", "token": gw.handle.gateway().host_token(),
                  "protocolVersion": 1, "hostName": "conformance"}),
    )
    .await;
    h.expect("auth.ok").await;
    h
}

//! Entry points for the coverage-guided fuzz targets (`fuzz/`, `scripts/fuzz.sh`,
//! `docs/reliability.md`). Not an API: built only with the `fuzzing` feature.
//!
//! Each entry point hands peer-controlled bytes to the same function the socket path calls
//! (the connection handlers' `on_frame`, the HTTP router, the parsers of `tap.config.json`,
//! patterns and tool schemas), on a gateway built with the crate's own constructors but
//! without a listener, history or token files. Nothing here decides anything itself: a
//! crash found through it is a crash of the real code.

use crate::accept::Kind;
use crate::auth::tokens::Secrets;
use crate::gateway::Gateway;
use crate::host_protocol::HostConn;
use crate::provider_protocol::ProviderConn;
use crate::socket::conn::{Handler, Step};
use crate::socket::outbound::OutReceiver;
use crate::state::provider_entry::Trust;
use crate::state::Core;
use axum::extract::ConnectInfo;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The provider token of every fuzz gateway, so a corpus can hold a valid `auth`.
pub const PROVIDER_TOKEN: &str = "ptk-fuzz";
/// The session-host token of every fuzz gateway.
pub const HOST_TOKEN: &str = "htk-fuzz";
/// The control token of every fuzz gateway.
pub const CONTROL_TOKEN: &str = "ctk-fuzz";
/// Longer than every timer of a [`World`]'s configuration (tool timeout, shutdown
/// deadline, resume grace, debounce): a target sleeps this long on a paused clock to see
/// each input's timers fire.
pub const SETTLE: Duration = Duration::from_secs(5);

/// A gateway without a listener: history off, fixed tokens, files under a per-process
/// directory that is never written unless a frame asks for it (pairing approvals).
/// Must be created and used inside a tokio runtime.
pub struct World {
    gw: Gateway,
}

impl World {
    /// A fresh gateway on `127.0.0.1:9` (never bound).
    pub fn new() -> Self {
        let data_dir = std::env::temp_dir().join(format!("tap-fuzz-{}", std::process::id()));
        let secrets = Secrets {
            gateway_token: PROVIDER_TOKEN.into(),
            host_token: HOST_TOKEN.into(),
            control_token: CONTROL_TOKEN.into(),
        };
        let core = crate::state::unbound_core(&data_dir, secrets, |config| {
            // Every timer an input can start ends within `SETTLE`, so one paused-clock
            // sleep reaches timeouts, shutdown deadlines and resume windows.
            config.default_tool_timeout = Duration::from_secs(2);
            config.shutdown_deadline = Duration::from_secs(1);
            config.host_resume_grace = Duration::from_secs(1);
            config.toolset_debounce = Duration::from_millis(20);
            // Emitter commands come from control frames: with no PATH, `bash` is not
            // found and no fuzzed command line ever runs.
            config.emitter_env = vec![("PATH".into(), "/nonexistent".into())];
        });
        Self {
            gw: Gateway::new(core),
        }
    }

    fn core(&self) -> &Arc<Core> {
        self.gw.core()
    }

    fn remote() -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, 40000))
    }

    /// A provider socket before `auth` (AwaitAuth; `mode: "pair"` leads to AwaitPairing).
    pub fn provider(&self) -> Peer {
        let (conn, rx) = ProviderConn::new(self.core().clone(), Self::remote(), None);
        Peer::new(AnyConn::Provider(Box::new(conn)), rx)
    }

    /// An in-process provider (trust internal), authenticated: AwaitHello.
    pub fn local_provider(&self) -> Peer {
        let (mut conn, rx) = ProviderConn::new(self.core().clone(), Self::remote(), None);
        let id = conn.admit(&mut self.core().state(), Trust::Internal, None, None, None);
        conn.id = Some(id);
        Peer::new(AnyConn::Provider(Box::new(conn)), rx)
    }

    /// A session-host socket before `auth`.
    pub fn host(&self) -> Peer {
        let kill = self.core().stopping.child_token();
        let (out, rx) = self.core().outbound_queue(Kind::Host, kill.clone());
        let conn = HostConn::new(self.core().clone(), Self::remote(), out, kill);
        Peer::new(AnyConn::Host(conn), rx)
    }

    /// A control socket before `auth`.
    pub fn control(&self) -> Peer {
        let kill = self.core().stopping.child_token();
        let (out, rx) = self.core().outbound_queue(Kind::Control, kill);
        let conn =
            crate::control::connection::ControlConn::new(self.gw.clone(), Self::remote(), out);
        Peer::new(AnyConn::Control(Box::new(conn)), rx)
    }

    /// Serves `request` (raw bytes from a client, as one HTTP/1 connection) with the
    /// gateway's router and returns what the server wrote before the connection ended.
    /// A request that upgrades goes on as a WebSocket: the bytes after its head are frames.
    pub async fn http(&self, request: &[u8]) -> Vec<u8> {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let router = crate::server::router(self.gw.clone());
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            req.extensions_mut().insert(ConnectInfo(Self::remote()));
            let mut router = router.clone();
            async move {
                tower_service::Service::call(&mut router, req.map(axum::body::Body::new)).await
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(server), service)
            .with_upgrades();
        let served = tokio::spawn(conn);
        let (mut read, mut write) = tokio::io::split(client);
        // Written from its own task: a server that answers before reading everything (or
        // never reads) must not block the reader below.
        let body = request.to_vec();
        let writer = tokio::spawn(async move {
            let _ = write.write_all(&body).await;
            let _ = write.shutdown().await;
            write
        });
        let mut answer = Vec::new();
        let _ = read.read_to_end(&mut answer).await;
        drop(writer.await);
        let _ = served.await;
        answer
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // What spawned tasks wait on: they end when the runtime next polls them.
        self.core().stopping.cancel();
    }
}

enum AnyConn {
    Provider(Box<ProviderConn>),
    Host(HostConn),
    Control(Box<crate::control::connection::ControlConn>),
}

/// One connection's handler, fed frame by frame as its socket loop would.
pub struct Peer {
    conn: Option<AnyConn>,
    out: OutReceiver,
}

impl Peer {
    fn new(conn: AnyConn, out: OutReceiver) -> Self {
        Self {
            conn: Some(conn),
            out,
        }
    }

    /// Hands one data frame to the handler. Returns false once the handler closed the
    /// connection (the socket loop would then stop reading); later frames are ignored.
    pub async fn feed(&mut self, frame: &[u8]) -> bool {
        let Some(conn) = self.conn.as_mut() else {
            return false;
        };
        let step = match conn {
            AnyConn::Provider(c) => Handler::on_frame(c.as_mut(), frame),
            AnyConn::Host(c) => Handler::on_frame(c, frame),
            AnyConn::Control(c) => Handler::on_frame(c.as_mut(), frame),
        };
        match step {
            Step::Close(..) => {
                self.close();
                false
            }
            Step::Backpressure => {
                match conn {
                    AnyConn::Provider(c) => Handler::relieve(c.as_mut()).await,
                    AnyConn::Host(c) => Handler::relieve(c).await,
                    AnyConn::Control(c) => Handler::relieve(c.as_mut()).await,
                }
                true
            }
            Step::Continue | Step::Authed | Step::WaitUntil(_) => true,
        }
    }

    /// The frames queued for the peer so far, as bytes.
    pub fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        while let Some(m) = self.out.try_recv() {
            frames.push(m.into_data().to_vec());
        }
        frames
    }

    /// Ends the connection as the socket loop does when the peer goes away: what is
    /// still queued (not drained) is handed back as never written.
    pub fn close(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let mut unsent = Vec::new();
        while let Some(m) = self.out.try_recv() {
            unsent.push(m);
        }
        match conn {
            AnyConn::Provider(mut c) => {
                c.closing();
                c.closed(unsent);
            }
            AnyConn::Host(mut c) => {
                c.closing();
                c.closed(unsent);
            }
            AnyConn::Control(mut c) => {
                c.closing();
                c.closed(unsent);
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.close();
    }
}

/// `tap.config.json`'s bytes through the project-provider parser, and each entry of its
/// `emitters` through the emitter filter's rule reader and compiler.
pub fn project_config(bytes: &[u8]) {
    let _ = crate::project::config::parse(bytes, Path::new("/fuzz/project"));
    let Ok(serde_json::Value::Object(root)) = serde_json::from_slice(bytes) else {
        return;
    };
    let entries: Vec<&serde_json::Value> = match root.get("emitters") {
        Some(serde_json::Value::Array(a)) => a.iter().collect(),
        Some(serde_json::Value::Object(o)) => o.values().collect(),
        _ => return,
    };
    for entry in entries {
        if let serde_json::Value::Object(e) = entry {
            if let Ok(rules) = crate::state::emitters::event_filter::rules_of(e) {
                if let Ok(f) = crate::state::emitters::event_filter::EventFilter::compile(&rules) {
                    let _ = f.decide("fuzz line: error 42");
                }
            }
        }
    }
}

/// One user pattern through every compiler of peer-given patterns (hook `match.args`,
/// `filter.set` rules, emitter `eventFilter`), each then matched against `text`.
pub fn pattern(pattern: &str, text: &str) {
    use tap_protocol::provider::{FilterSet, HookRule, PushLevel};
    let hook: Result<Vec<HookRule>, _> = serde_json::from_value(serde_json::json!([
        {"match": {"tool": "t", "args": pattern}, "action": "deny", "reason": "r"}
    ]));
    if let Ok(rules) = hook {
        if let Ok(compiled) = crate::patterns::rules::compile(&rules) {
            for r in compiled.iter() {
                let _ = r.matches("t", Some("p"), text, Default::default());
            }
        }
    }
    let filter: Result<FilterSet, _> = serde_json::from_value(serde_json::json!({
        "stream": "p", "rules": [{"match": pattern, "outcome": "drop"}]
    }));
    if let Ok(f) = filter {
        if let Ok((_, Some(compiled))) = crate::streams::filter::compile("p", &f) {
            let _ = compiled.apply(text, PushLevel::Keep);
        }
    }
    let rule = tap_protocol::emitters::EmitterRule {
        pattern: pattern.to_string(),
        outcome: tap_protocol::ledger::EventOutcome::Inject,
    };
    if let Ok(f) = crate::state::emitters::event_filter::EventFilter::compile(&[rule]) {
        let _ = f.decide(text);
    }
}

/// A tool's `parameters` (JSON) compiled as at `hello`, then `args` (JSON) checked against
/// it as before a call's dispatch.
pub fn tool_schema(parameters: &[u8], args: &[u8]) {
    let Ok(parameters) = serde_json::from_slice::<serde_json::Value>(parameters) else {
        return;
    };
    let def = serde_json::json!({"name": "t", "description": "d", "parameters": parameters});
    let Ok(def) = serde_json::from_value::<tap_protocol::provider::ToolDef>(def) else {
        return;
    };
    let Ok(list) = crate::state::tool_schema::ToolList::build(vec![def], &[]) else {
        return;
    };
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(args) else {
        return;
    };
    for (def, schema) in list.with_schemas() {
        let _ = crate::state::tool_schema::check(&def.name, schema, &args);
    }
}

//! The gateway handle, its shared state, and start/stop.

use crate::auth::files::{write_private, GatewayFiles};
use crate::auth::tokens::Secrets;
use crate::ids::IdGen;
use crate::providers::ProviderEntry;
use crate::sessions::{HostEntry, Resolved, Session, Want};
use crate::streams::StreamStore;
use crate::tools::CallError;
use crate::{GatewayConfig, GatewayError};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};
use tap_protocol::limits::{MAX_HOST_CONNECTIONS, MAX_PROVIDER_CONNECTIONS};
use tap_protocol::ErrorCode;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// A cheap, cloneable handle to a running gateway.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub config: GatewayConfig,
    pub secrets: Secrets,
    pub files: GatewayFiles,
    pub address: SocketAddr,
    pub started_at: SystemTime,
    pub started: Instant,
    pub ids: IdGen,
    /// Sessions, providers and hosts. A std Mutex: every critical section is a few map
    /// operations and channel sends, never an await, so it is never held across one.
    pub state: Mutex<State>,
    /// Stream history has its own lock so a push flood does not contend with tool calls.
    pub streams: StreamStore,
    /// Stream filters and push budgets per (provider, session).
    pub stream_controls: crate::streams::StreamControls,
    /// Cancelled when the gateway stops; every connection task watches it.
    pub stopping: CancellationToken,
    /// Owns every task the gateway spawns, so stop can wait for all of them.
    pub tasks: TaskTracker,
    /// Tool invocations from session hosts. Stop waits for these before closing host
    /// sockets, so every in-flight call's terminal result reaches its caller.
    pub invocations: TaskTracker,
    /// One permit per provider connection (spec: at most 50).
    pub provider_slots: Arc<Semaphore>,
    /// One permit per session-host connection.
    pub host_slots: Arc<Semaphore>,
    /// One permit per control-plane connection (panel, tray app, `tap pairing`).
    pub control_slots: Arc<Semaphore>,
    /// The remembered pairings' file (`$TAP_HOME/paired-providers.json`).
    pub pairing: crate::pairing::Store,
    /// Changes for the control plane (see `events.rs`).
    pub events: tokio::sync::broadcast::Sender<crate::events::GatewayEvent>,
    /// Outstanding one-time panel login codes (`ui.login`, `POST /api/login`).
    pub ui_logins: crate::server::LoginCodes,
    /// Errors sent, limits hit, recent failures (see `diagnostics`).
    pub diagnostics: crate::diagnostics::Recorder,
}

#[derive(Default)]
pub(crate) struct State {
    pub sessions: HashMap<String, Session>,
    /// Session ids in registration order, so `sessions` lists are stable.
    pub session_order: Vec<String>,
    pub providers: HashMap<String, ProviderEntry>,
    pub hosts: HashMap<String, HostEntry>,
    /// Pairing requests and paired providers (under this lock with `providers`, so a
    /// revoke and a token authentication cannot interleave).
    pub pairing: crate::pairing::Registry,
    /// Prompt transforms, ambient context and pending `transform.request`s per provider.
    pub transforms: crate::transforms::Registry,
    /// Provider identities (`name` + `instance`) and their reconnect tokens.
    pub identity: crate::providers::identity::Identities,
    /// Declared tool concurrency limits and their slot pools.
    pub limits: crate::tools::concurrency::Limits,
}

impl State {
    /// A registered session that is not ending, or `INVALID_SESSION`: what every
    /// session-scoped request (a call, a precheck, a prompt, a bind) needs.
    pub fn live_session(&self, id: &str) -> Result<&Session, (ErrorCode, String)> {
        self.sessions
            .get(id)
            .filter(|s| !s.is_ending())
            .ok_or_else(|| crate::sessions::lifecycle::unknown_session(id))
    }
}

impl Gateway {
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap()
    }

    /// The address the gateway serves on.
    pub fn address(&self) -> SocketAddr {
        self.shared.address
    }

    /// The gateway token (`ptk-…`) Core Profile providers authenticate with.
    pub fn provider_token(&self) -> &str {
        &self.shared.secrets.gateway_token
    }

    /// The token session hosts authenticate with.
    pub fn host_token(&self) -> &str {
        &self.shared.secrets.host_token
    }

    /// The token the control plane (`/control`: panel, tray app, `tap pairing`)
    /// authenticates with. An embedding app hands it to its own panel directly.
    pub fn control_token(&self) -> &str {
        &self.shared.secrets.control_token
    }

    /// Where this gateway wrote its token and state files.
    pub fn files(&self) -> &GatewayFiles {
        &self.shared.files
    }

    /// Resolves where a call goes, under the state lock.
    pub(crate) fn route(
        &self,
        session_id: &str,
        tool: &str,
        want: Want<'_>,
    ) -> Result<Resolved, CallError> {
        let state = self.state();
        let session = state.live_session(session_id)?;
        session.route(tool, want, self.shared.config.default_tool_timeout)
    }
}

/// A started gateway: its handle, and the means to stop it.
pub struct GatewayHandle {
    gateway: Gateway,
    server: tokio::task::JoinHandle<()>,
}

impl GatewayHandle {
    /// Starts serving on `listener` (which must be bound to loopback): writes the token
    /// files, then accepts connections until [`GatewayHandle::stop`].
    pub async fn start(listener: TcpListener, config: GatewayConfig) -> Result<Self, GatewayError> {
        let address = listener.local_addr()?;
        if !address.ip().is_loopback() {
            return Err(GatewayError::NotLoopback(address));
        }
        let mut secrets = Secrets::generate();
        if let Some(token) = config.control_token.as_ref().filter(|t| !t.is_empty()) {
            secrets.control_token = token.clone();
        }
        let files = GatewayFiles::locate(&config.data_dir, config.copilot_home.as_deref());
        let started_at = SystemTime::now();
        write_private(&files.provider_token, &secrets.gateway_token)?;
        if let Some(p) = &files.copilot_provider_token {
            write_private(p, &secrets.gateway_token)?;
        }
        write_private(&files.host_token, &secrets.host_token)?;
        match &config.control_token_store {
            None => write_private(&files.control_token, &secrets.control_token)?,
            // The embedder keeps it; a file left by an earlier gateway would mislead `tap`.
            Some(_) => match std::fs::remove_file(&files.control_token) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(GatewayError::File {
                        path: files.control_token.clone(),
                        source,
                    })
                }
            },
        }
        let state_json = serde_json::json!({
            "address": format!("ws://{address}"),
            "pid": std::process::id(),
            "startedAt": crate::time::rfc3339(started_at),
            "version": env!("CARGO_PKG_VERSION"),
            "controlTokenStore": config.control_token_store.as_deref().unwrap_or("file"),
        });
        write_private(&files.state, &format!("{state_json:#}\n"))?;
        let pairing = crate::pairing::Store::new(&config.data_dir);
        let remembered = crate::pairing::Registry::with_remembered(pairing.load());

        let shared = Arc::new(Shared {
            config,
            secrets,
            files,
            address,
            started_at,
            started: Instant::now(),
            ids: IdGen::new(),
            state: Mutex::new(State {
                pairing: remembered,
                ..State::default()
            }),
            streams: StreamStore::default(),
            stream_controls: Default::default(),
            stopping: CancellationToken::new(),
            tasks: TaskTracker::new(),
            invocations: TaskTracker::new(),
            provider_slots: Arc::new(Semaphore::new(MAX_PROVIDER_CONNECTIONS)),
            host_slots: Arc::new(Semaphore::new(MAX_HOST_CONNECTIONS)),
            pairing,
            control_slots: Arc::new(Semaphore::new(
                tap_protocol::limits::MAX_CONTROL_CONNECTIONS,
            )),
            events: tokio::sync::broadcast::channel(crate::events::EVENT_BUFFER).0,
            ui_logins: Default::default(),
            diagnostics: Default::default(),
        });
        let gateway = Gateway { shared };
        let server = tokio::spawn(crate::server::serve(listener, gateway.clone()));
        tracing::info!(%address, "gateway listening");
        gateway.spawn_configured_providers();
        Ok(Self { gateway, server })
    }

    /// The running gateway.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// Stops gracefully: every session ends (providers get `shutdown.pending` and the
    /// deadline is honoured), in-flight calls get their terminal result, connections
    /// close, and the token files are removed.
    pub async fn stop(self) -> Result<(), GatewayError> {
        let gw = self.gateway;
        tracing::info!("gateway stopping");
        let ids: Vec<String> = gw.state().session_order.clone();
        let endings = ids
            .into_iter()
            .map(|id| gw.end_session(id, None, "gateway stopping".into()));
        futures_util::future::join_all(endings).await;
        // Every session has ended, so every call has its outcome; let the invocation tasks
        // hand those to the hosts before the host sockets close.
        gw.shared.invocations.close();
        if tokio::time::timeout(
            std::time::Duration::from_secs(2),
            gw.shared.invocations.wait(),
        )
        .await
        .is_err()
        {
            tracing::warn!(
                "some tool invocations did not finish within 2 s of the sessions ending"
            );
        }
        gw.shared.stopping.cancel();
        self.server.abort();
        gw.shared.tasks.close();
        if tokio::time::timeout(std::time::Duration::from_secs(5), gw.shared.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("some connections did not close within 5 s");
        }
        for (path, e) in gw.shared.files.remove_all() {
            tracing::warn!(path = %path.display(), error = %e, "could not remove file");
        }
        tracing::info!("gateway stopped");
        Ok(())
    }
}

/// Runs a gateway on `listener` until `shutdown` is cancelled, then stops it gracefully.
pub async fn run(
    listener: TcpListener,
    config: GatewayConfig,
    shutdown: CancellationToken,
) -> Result<(), GatewayError> {
    let handle = GatewayHandle::start(listener, config).await?;
    shutdown.cancelled().await;
    handle.stop().await
}

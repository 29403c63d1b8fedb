//! The engine's state: one [`Core`] per running gateway, shared by every task through an
//! `Arc`. Capabilities are functions over it (or over the handles it holds: [`Events`],
//! [`Recorder`]); none of them knows the public façade, [`crate::gateway::Gateway`].

pub(crate) mod activity;
pub(crate) mod answers;
pub(crate) mod approval_asks;
pub(crate) mod binding;
pub(crate) mod builtin_defs;
pub(crate) mod call_table;
pub(crate) mod delivery_queue;
pub(crate) mod emitters;
pub(crate) mod gates;
pub(crate) mod goal_defs;
pub(crate) mod host;
pub(crate) mod host_report;
pub(crate) mod identity;
pub(crate) mod instances;
pub(crate) mod link;
pub(crate) mod mcp_binding;
pub(crate) mod mcp_server_peers;
pub(crate) mod mode_defs;
pub(crate) mod pairing_registry;
pub(crate) mod pairing_store;
pub(crate) mod project_config;
pub(crate) mod provider_entry;
pub(crate) mod record_defs;
pub(crate) mod search_defs;
pub(crate) mod session;
pub(crate) mod tool_entry;
pub(crate) mod tool_limits;
pub(crate) mod tool_map;
pub(crate) mod tool_schema;
pub(crate) mod transforms;

use crate::auth::files::GatewayFiles;
use crate::auth::login_codes::LoginCodes;
use crate::auth::tokens::Secrets;
use crate::config::{GatewayConfig, History};
use crate::diagnostics::recorder::Recorder;
use crate::error::Error;
use crate::events::Events;
use crate::ids::IdGen;
use crate::ledger::Ledger;
use crate::socket::conn::Socket;
use crate::socket::kind::Kind;
use crate::socket::outbound::{self, OutReceiver, OutSender};
use crate::socket::slots::Pool;
use crate::socket::upgrade::WsStream;
use crate::state::host::HostEntry;
use crate::state::identity::Identities;
use crate::state::provider_entry::ProviderEntry;
use crate::state::session::Session;
use crate::state::tool_limits::Limits;
use crate::streams::budget::StreamControls;
use crate::streams::store::StreamStore;
use crate::trace::Tracer;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Everything one running gateway holds.
pub(crate) struct Core {
    pub config: GatewayConfig,
    pub secrets: Secrets,
    /// Per-client tokens of the MCP HTTP endpoint (`$TAP_HOME/client-tokens.json`).
    pub client_tokens: crate::auth::client_tokens::ClientTokens,
    pub files: GatewayFiles,
    pub address: SocketAddr,
    pub started_at: SystemTime,
    pub started: Instant,
    pub ids: IdGen,
    /// Sessions, providers and hosts. A std Mutex: every critical section is a few map
    /// operations and channel sends, never an await, so it is never held across one.
    state: Mutex<State>,
    /// Stream history has its own lock so a push flood does not contend with tool calls.
    pub streams: StreamStore,
    /// Stream filters and push budgets per (provider, session).
    pub stream_controls: StreamControls,
    /// Cancelled when the gateway stops; every connection task watches it.
    pub stopping: CancellationToken,
    /// Owns every task the gateway spawns, so stop can wait for all of them.
    pub tasks: TaskTracker,
    /// Tool invocations from session hosts. Stop waits for these before closing host
    /// sockets, so every in-flight call's terminal result reaches its caller.
    pub invocations: TaskTracker,
    /// Connection slots, one permit per open socket of each kind.
    pub slots: Slots,
    /// What is queued for each kind of connection and not yet written.
    pub outbound: crate::socket::outbound::Gauges,
    /// The remembered pairings' file (`$TAP_HOME/paired-providers.json`).
    pub pairing: crate::state::pairing_store::Store,
    /// Changes for the control plane.
    pub events: Events,
    /// Outstanding one-time panel login codes (`ui.login`, `POST /api/login`).
    pub ui_logins: LoginCodes,
    /// Errors sent, limits hit, recent failures.
    pub diagnostics: Recorder,
    /// History: stream events, spans, sessions and providers as they came and went.
    pub ledger: Ledger,
    /// Where spans start and end up (the ledger, and an OTLP endpoint if configured).
    pub tracer: Tracer,
    /// Every live session's emitters.
    pub emitters: crate::state::emitters::Emitters,
    /// MCP servers' prompts and resources, for the MCP facade.
    pub mcp_server_peers: crate::state::mcp_server_peers::ServerPeers,
    /// Tool-call approvals: `policy.json`, `grants.json`, the calls waiting for the user.
    pub approvals: crate::approvals::Approvals,
    /// Pinned tool definitions (`$TAP_HOME/pins.json`); each session holds a handle.
    pub pins: crate::pins::Pins,
}

/// One permit per open connection of each kind; a connection takes one before its
/// upgrade and holds it for its life.
pub(crate) struct Slots {
    /// Provider connections (spec: at most 50).
    pub providers: Pool,
    /// Session-host connections.
    pub hosts: Pool,
    /// Control-plane connections (panel, tray app, `tap pairing`).
    pub control: Pool,
    /// What connections of every kind that never authenticate cost the listener.
    pub abandoned: std::sync::Arc<crate::socket::pacing::Abandonments>,
}

/// What changes under the one state lock.
#[derive(Default)]
pub(crate) struct State {
    pub sessions: HashMap<String, Session>,
    /// Session ids in registration order, so `sessions` lists are stable.
    pub session_order: Vec<String>,
    pub providers: HashMap<String, ProviderEntry>,
    pub hosts: HashMap<String, HostEntry>,
    /// Pairing requests and paired providers (under this lock with `providers`, so a
    /// revoke and a token authentication cannot interleave).
    pub pairing: crate::state::pairing_registry::Registry,
    /// Prompt transforms, ambient context and pending `transform.request`s per provider.
    pub transforms: crate::state::transforms::Registry,
    /// Provider identities (`name` + `instance`) and their reconnect tokens.
    pub identity: Identities,
    /// Declared tool concurrency limits and their slot pools.
    pub limits: Limits,
    /// The MCP facade's bindings, by the session name MCP clients use.
    pub mcp: HashMap<String, Arc<crate::state::mcp_binding::Binding>>,
}

impl Core {
    /// The outbound queue of a new connection of `kind` closed by `kill`, with the
    /// configured limits, counted in that kind's gauge.
    pub(crate) fn outbound_queue(
        &self,
        kind: Kind,
        kill: CancellationToken,
    ) -> (OutSender, OutReceiver) {
        outbound::channel(self.config.outbound, kill, self.outbound.of(kind).clone())
    }

    /// The socket loop's half of a new connection of `kind`: the WebSocket, the receiving end
    /// of its queue (from [`Core::outbound_queue`]) and the kill token that queue cancels,
    /// with this kind's write timeout. Not authenticated yet.
    pub(crate) fn socket(
        &self,
        ws: WsStream,
        kind: Kind,
        remote: SocketAddr,
        out: OutReceiver,
        kill: CancellationToken,
    ) -> Socket {
        Socket {
            ws,
            kind,
            remote,
            out,
            kill,
            stopping: self.stopping.clone(),
            write_timeout: self.write_timeout(kind),
            diagnostics: self.diagnostics.clone(),
            authed: false,
        }
    }

    /// How long a peer of `kind` may take to accept one batch of frames.
    pub(crate) fn write_timeout(&self, kind: Kind) -> std::time::Duration {
        match kind {
            Kind::Provider | Kind::Host => self.config.outbound.peer_write_timeout,
            Kind::Control => self.config.outbound.control_write_timeout,
        }
    }

    /// Builds the core of a gateway listening on `address`.
    pub fn new(
        config: GatewayConfig,
        secrets: Secrets,
        files: GatewayFiles,
        address: SocketAddr,
    ) -> Self {
        let pairing = crate::state::pairing_store::Store::new(&config.data_dir);
        let (client_tokens, warning) =
            crate::auth::client_tokens::ClientTokens::load(&config.data_dir);
        if let Some(w) = warning {
            tracing::warn!("{w}");
        }
        let remembered = crate::state::pairing_registry::Registry::with_remembered(pairing.load());
        let events = Events::new();
        let tasks = TaskTracker::new();
        let stopping = CancellationToken::new();
        let diagnostics = Recorder::new(events.clone(), tasks.clone(), stopping.clone());
        let pins = crate::pins::Pins::load(&config.data_dir, events.clone());
        pins.spawn_writer(&tasks, stopping.clone());
        let approvals = crate::approvals::Approvals::load(config.data_dir.clone(), events.clone());
        let abandoned = std::sync::Arc::new(crate::socket::pacing::Abandonments::default());
        let ledger = match config.history {
            History::File => Ledger::open(&config.data_dir),
            History::Memory => Ledger::in_memory("history is configured to be kept in memory"),
            History::Off => Ledger::off(),
        };
        if !config.activity_rollup {
            ledger.without_rollup();
        }
        let export = config
            .otlp_endpoint
            .as_deref()
            .and_then(|url| crate::trace::otlp::Exporter::start(url, &tasks, stopping.clone()));
        // `traces.changed` and `emitters.changed`, each at most one per 250 ms.
        let changed = |what, ledger| {
            let publish = crate::diagnostics::Publish::Changed(what);
            crate::diagnostics::Coalesced::new(
                publish,
                events.clone(),
                tasks.clone(),
                stopping.clone(),
                ledger,
            )
        };
        let tracer = Tracer::new(
            ledger.clone(),
            export,
            changed(crate::events::Changed::Traces, Some(ledger.clone())),
        );
        let emitters =
            crate::state::emitters::Emitters::new(changed(crate::events::Changed::Emitters, None));
        Self {
            config,
            secrets,
            client_tokens,
            files,
            address,
            started_at: SystemTime::now(),
            started: Instant::now(),
            ids: IdGen::new(),
            state: Mutex::new(State {
                pairing: remembered,
                ..State::default()
            }),
            streams: StreamStore::default(),
            stream_controls: StreamControls::default(),
            stopping,
            tasks,
            invocations: TaskTracker::new(),
            slots: Slots {
                providers: Pool::new(
                    tap_protocol::limits::MAX_PROVIDER_CONNECTIONS,
                    abandoned.clone(),
                ),
                hosts: Pool::new(
                    tap_protocol::limits::MAX_HOST_CONNECTIONS,
                    abandoned.clone(),
                ),
                control: Pool::new(
                    tap_protocol::limits::MAX_CONTROL_CONNECTIONS,
                    abandoned.clone(),
                ),
                abandoned,
            },
            outbound: Default::default(),
            pairing,
            events,
            ui_logins: LoginCodes::default(),
            diagnostics,
            ledger,
            tracer,
            emitters,
            mcp_server_peers: Default::default(),
            approvals,
            pins,
        }
    }

    /// The state lock. Never held across an `.await`.
    pub fn state(&self) -> MutexGuard<'_, State> {
        #[cfg(feature = "lock-count")]
        STATE_LOCKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    /// Sends `event` to the host of session `id`; `false` when the session does not exist
    /// or its host is gone.
    pub fn send_to_session_host(
        &mut self,
        id: &str,
        event: &tap_protocol::host::HostEvent,
    ) -> bool {
        let Some(session) = self.sessions.get(id) else {
            return false;
        };
        match self.hosts.get_mut(&session.host) {
            Some(h) => {
                h.send(event);
                true
            }
            None => false,
        }
    }

    /// A registered session that is not ending, or `INVALID_SESSION`: what every
    /// session-scoped request (a call, a precheck, a prompt, a bind) needs.
    pub fn live_session(&self, id: &str) -> Result<&Session, Error> {
        self.sessions
            .get(id)
            .filter(|s| !s.is_ending())
            .ok_or_else(|| unknown_session(id))
    }
}

/// A core without a listener, for unit tests and the fuzz targets: history off, files
/// under `dir`, the address `127.0.0.1:9` (never bound), then `tweak` applied to the
/// configuration.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn unbound_core(
    dir: &std::path::Path,
    secrets: Secrets,
    tweak: impl FnOnce(&mut GatewayConfig),
) -> Arc<Core> {
    let mut config = GatewayConfig::new(dir.to_path_buf());
    config.history = History::Off;
    tweak(&mut config);
    let files = GatewayFiles::locate(dir, None);
    let address = SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 9));
    Arc::new(Core::new(config, secrets, files, address))
}

/// [`unbound_core`] with fixed tokens (`htk-test` for hosts).
#[cfg(test)]
pub(crate) fn test_core(
    dir: &std::path::Path,
    tweak: impl FnOnce(&mut GatewayConfig),
) -> Arc<Core> {
    let secrets = Secrets {
        gateway_token: "ptk-test".into(),
        host_token: "htk-test".into(),
        control_token: "ctk-test".into(),
    };
    unbound_core(dir, secrets, tweak)
}

/// `INVALID_SESSION` for a session id nobody registered (or that ended).
pub(crate) fn unknown_session(id: &str) -> Error {
    Error::new(
        ErrorCode::InvalidSession,
        format!("Session '{id}' does not exist"),
    )
}

/// Every gateway's state-lock acquisitions in this process (feature `lock-count`).
#[cfg(feature = "lock-count")]
static STATE_LOCKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times any gateway of this process has taken its state lock: `tap-bench`
/// divides the growth over a run by its messages (feature `lock-count`).
#[cfg(feature = "lock-count")]
pub fn state_locks() -> u64 {
    STATE_LOCKS.load(std::sync::atomic::Ordering::Relaxed)
}

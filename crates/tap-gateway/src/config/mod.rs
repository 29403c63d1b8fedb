use crate::processes::restart::RestartPolicy;
use crate::processes::spawn::SpawnSpec;
use embedded_panel::EmbeddedPanel;
pub(crate) mod embedded_panel;
pub(crate) mod panel_source;

use std::path::PathBuf;
use std::time::Duration;
use tap_protocol::limits;

/// Everything the engine needs to know that is not a wire rule. Wire rules live in
/// [`tap_protocol::limits`]; the durations here default to those and are overridable so
/// tests and embedders can shorten them.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// `TAP_HOME`: token files, `gateway.json`, provider state.
    pub data_dir: PathBuf,
    /// `COPILOT_HOME` (or `~/.copilot`): the gateway token is also written to
    /// `<this>/extensions/tap/.provider-token`, where spec providers look. `None` skips it.
    pub copilot_home: Option<PathBuf>,
    /// Timeout of tools that declare none.
    pub default_tool_timeout: Duration,
    /// The `deadline` in `session.lifecycle shutdown.pending`.
    pub shutdown_deadline: Duration,
    /// How long a dropped session host may take to resume its sessions.
    pub host_resume_grace: Duration,
    /// Batching window for tool-set changes sent to session hosts.
    pub toolset_debounce: Duration,
    /// Provider processes to start once the gateway listens.
    pub spawn: Vec<SpawnSpec>,
    /// How crashed project providers (a session's `tap.config.json`) and MCP servers are
    /// restarted, and after how many quick failures an MCP server is parked.
    pub project_restart: RestartPolicy,
    /// How long an MCP server may take to start and answer `initialize`
    /// (`crate::limits::MCP_INITIALIZE_TIMEOUT`; tests shorten it).
    pub mcp_initialize_timeout: Duration,
    /// A built panel on disk (the `dist/` of `ui/`, `TAP_UI_DIR`): `GET /` serves its
    /// `index.html` and `GET /assets/…` its `assets/`. An override: when set,
    /// `embedded_panel` is not used, and a directory without `index.html` means no panel.
    pub ui_dir: Option<PathBuf>,
    /// The panel built into the program ([`EmbeddedPanel::built_in`]), served when
    /// `ui_dir` is `None`. With neither, `GET /` answers with a plain-text note and
    /// `ui.login` is refused (`NOT_FOUND`).
    pub embedded_panel: Option<EmbeddedPanel>,
    /// The log ring the control plane reads (`logs.recent`, `logs.follow`). The hosting
    /// process installs its [`crate::logs::LogBuffer::layer`] in its `tracing`
    /// subscriber. `None`: the panel's log is empty.
    pub logs: Option<crate::logs::LogBuffer>,
    /// The control token, when the embedder supplies it (the desktop app generates one
    /// and keeps it in the OS keyring). `None`: a fresh one is generated at start.
    pub control_token: Option<String>,
    /// Where clients find the control token. `None`: in `$TAP_HOME/control-token` (0600),
    /// written here. `Some(store)` (e.g. `"keyring"`): the embedder keeps it; no file is
    /// written (a stale one is removed) and `gateway.json` says
    /// `"controlTokenStore": store` so `tap` looks there.
    pub control_token_store: Option<String>,
    /// Where history (stream events, traces, sessions) is kept.
    pub history: History,
    /// Environment for emitter commands, over the gateway's own (e.g. a `HOME` whose
    /// login profile is quick: tests set one, so `bash -lc` does not read the machine's).
    pub emitter_env: Vec<(String, String)>,
    /// Variables of the gateway's own environment that the processes it starts (provider
    /// processes, emitter commands) must not inherit: the desktop app sets `GDK_GL` for its
    /// own GTK only.
    pub child_env_remove: Vec<String>,
    /// The URL finished spans are also POSTed to over OTLP/HTTP (protobuf), e.g.
    /// `http://localhost:4318/v1/traces` (the traces path included: with
    /// `OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318` that is its `<base>/v1/traces`).
    /// [`crate::otlp_endpoint_from_env`] reads it from the standard variables. Only
    /// `http://`. Spans carry session ids, provider, tool and stream names and error
    /// messages, never tool arguments or results. `None`: no export.
    pub otlp_endpoint: Option<String>,
    /// How much may wait for one peer that is not reading, and how long one write may take.
    pub outbound: OutboundLimits,
    /// Whether `${secret:NAME}` in an MCP server's env or header values is also looked up in
    /// the OS keyring (always in `$TAP_HOME/secrets.json`). Default: yes, unless
    /// `TAP_KEYRING=off`; tests turn it off so they never touch the machine's keyring.
    pub secrets_keyring: bool,
    /// Where MCP clients keep their files (`clients.*`): by default those of the `HOME`,
    /// `XDG_CONFIG_HOME`, `CODEX_HOME` and `COPILOT_HOME` (the Copilot CLI's extension) the
    /// gateway runs with. `None`: no home directory, and `clients.*` say so.
    pub client_dirs: Option<tap_connect::Dirs>,
    /// The `tap` program a client's entry launches (`clients.connect`): `tap gateway` is
    /// that program; the desktop app looks beside itself, then on `PATH`
    /// (`tap-desktop-core`). `Err`: why there is none; connecting is refused with it.
    pub tap_program: Result<PathBuf, String>,
    /// Whether tool calls are counted in the ledger's activity rollup (`activity.query`) as
    /// their spans are written. Default: yes; the bench turns it off to measure its cost.
    pub activity_rollup: bool,
}

/// Slow consumers: the bounds of each connection's outbound queue and its write timeouts.
/// Defaults from [`tap_protocol::limits`]; tests shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboundLimits {
    /// Bytes queued for one peer and not yet written (`MAX_OUTBOUND_QUEUED_BYTES`).
    pub max_queued_bytes: usize,
    /// Messages queued for one peer and not yet written (`MAX_OUTBOUND_QUEUED_MESSAGES`).
    pub max_queued_messages: usize,
    /// How long a provider or session host may take to accept one batch of frames
    /// (`PEER_WRITE_TIMEOUT`).
    pub peer_write_timeout: Duration,
    /// The same for a control client (`CONTROL_WRITE_TIMEOUT`).
    pub control_write_timeout: Duration,
}

impl Default for OutboundLimits {
    fn default() -> Self {
        Self {
            max_queued_bytes: limits::MAX_OUTBOUND_QUEUED_BYTES,
            max_queued_messages: limits::MAX_OUTBOUND_QUEUED_MESSAGES,
            peer_write_timeout: limits::PEER_WRITE_TIMEOUT,
            control_write_timeout: limits::CONTROL_WRITE_TIMEOUT,
        }
    }
}

/// Where the ledger keeps history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum History {
    /// `$TAP_HOME/history.sqlite3` (in memory if that file cannot be used).
    #[default]
    File,
    /// In memory only: this run's history, gone at stop.
    Memory,
    /// Not kept at all (the bench measures what history costs against this).
    Off,
}

/// Why a gateway has no `tap` program for clients' entries, unless its embedder gives one.
pub const NO_TAP_PROGRAM: &str = "this gateway knows no `tap` program for clients to launch: install tap (the .deb and the AppImage put it in /usr/bin) or put it on PATH, then restart the gateway; `tap connect CLIENT` also works";

impl GatewayConfig {
    /// Defaults from the spec, with files under `data_dir` and no Copilot token file.
    pub fn new(data_dir: PathBuf) -> Self {
        Self {
            data_dir,
            copilot_home: None,
            default_tool_timeout: limits::DEFAULT_TOOL_TIMEOUT,
            shutdown_deadline: limits::SHUTDOWN_DEADLINE,
            host_resume_grace: limits::HOST_RESUME_GRACE,
            toolset_debounce: limits::TOOLSET_DEBOUNCE,
            spawn: Vec::new(),
            project_restart: RestartPolicy::default(),
            mcp_initialize_timeout: crate::limits::MCP_INITIALIZE_TIMEOUT,
            ui_dir: None,
            embedded_panel: None,
            logs: None,
            control_token: None,
            control_token_store: None,
            history: History::File,
            emitter_env: Vec::new(),
            child_env_remove: Vec::new(),
            otlp_endpoint: None,
            outbound: OutboundLimits::default(),
            secrets_keyring: !tap_secrets::keyring_disabled_by_env(),
            client_dirs: tap_connect::Dirs::from_env(),
            tap_program: Err(NO_TAP_PROGRAM.into()),
            activity_rollup: true,
        }
    }
}

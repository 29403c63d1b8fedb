//! The rooms of `crates/tap-gateway/src` (its top-level modules) and the rooms each may
//! import: the one place the engine's shape is written down. `tests/rooms.rs` fails on any
//! `crate::` import this table does not list, on a listed import nothing uses, on an import
//! that goes up a layer, and on any loop; `docs/architecture.md`'s room table is generated
//! from it.

/// Where a room stands. A room imports rooms of lower layers and, where the table lists
/// them, rooms of its own layer that come before it; never a room above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// Ids, time, text, limits, the call's data types, child processes, tokens, the
    /// configuration: nothing here knows the gateway's state.
    Infrastructure,
    /// Handles with their own locks or threads that the state holds: the ledger, traces,
    /// diagnostics counters, stream history, the connection loop.
    Services,
    /// `Core` and the one `State` lock, with every data type that lives under it.
    State,
    /// What the gateway does, as functions over the state.
    Capabilities,
    /// Where requests come in: the protocol handlers, the façade, the HTTP router.
    EntryPoints,
}

impl Layer {
    /// Its heading in `docs/architecture.md`.
    pub fn title(self) -> &'static str {
        match self {
            Layer::Infrastructure => "Infrastructure",
            Layer::Services => "Services",
            Layer::State => "State",
            Layer::Capabilities => "Capabilities",
            Layer::EntryPoints => "Entry points",
        }
    }
}

/// One room: a top-level module of the engine.
pub struct Room {
    /// The module's name (`providers` for `src/providers/`, `gateway` for `src/gateway.rs`).
    pub name: &'static str,
    pub layer: Layer,
    /// The rooms it may import, and does.
    pub imports: &'static [&'static str],
    /// What it holds, for the docs.
    pub about: &'static str,
}

use Layer::*;

/// Bottom to top: within a layer, a room imports only rooms listed before it.
pub const ROOMS: &[Room] = &[
    Room { name: "time", layer: Infrastructure, imports: &[], about: "RFC 3339 timestamps" },
    Room { name: "text", layer: Infrastructure, imports: &[], about: "cutting text at a char boundary" },
    Room { name: "ids", layer: Infrastructure, imports: &[], about: "short random ids, `Hex` (ids as fixed-width hex on the stack)" },
    Room { name: "limits", layer: Infrastructure, imports: &[], about: "the engine's own limits (wire limits are `tap_protocol::limits`)" },
    Room { name: "error", layer: Infrastructure, imports: &[], about: "`Error` (a code and a message: every failure of the façade and the rooms) and `GatewayError` (why the gateway could not start or stop)" },
    Room { name: "events", layer: Infrastructure, imports: &["limits"], about: "`Events` (the control plane's broadcast handle) and `GatewayEvent`" },
    Room { name: "request", layer: Infrastructure, imports: &["error", "limits"], about: "what a caller hands the call path: `CallRequest`, `Caller`, `CallError` (the one `Error`), the bounded progress queue" },
    Room { name: "patterns", layer: Infrastructure, imports: &["error"], about: "user regexes (hook rules, stream and event filters): `rules.rs` compiles them bounded, `cost.rs` refuses those whose case folding would blow up" },
    Room { name: "processes", layer: Infrastructure, imports: &["limits"], about: "child processes: `spawn.rs` (provider processes: environment, process group, stop), `command.rs` (an emitter's `bash -lc` and its lines), `orphans.rs` (groups a killed gateway left), `alive.rs` (whether a recorded process still runs), `restart.rs` (backoff)" },
    Room { name: "auth", layer: Infrastructure, imports: &["error", "ids", "processes", "time"], about: "tokens, the 0600 files and who holds the Copilot token file, login codes, the one `Origin` check, the MCP HTTP endpoint's client tokens (`client_tokens.rs`)" },
    Room { name: "logs", layer: Infrastructure, imports: &["limits", "time"], about: "the log buffer the panel reads, redaction of secrets" },
    Room { name: "config", layer: Infrastructure, imports: &["limits", "logs", "processes"], about: "`GatewayConfig`, `OutboundLimits`, where the panel comes from (`panel_source.rs`, `embedded_panel.rs`)" },
    Room { name: "profiles", layer: Infrastructure, imports: &["auth", "limits"], about: "the tool set a client's sessions see: `$TAP_HOME/profiles.json` (`file.rs`), what one profile sees (`profile.rs`), tool-name globs (`glob.rs`)" },
    Room { name: "oauth", layer: Infrastructure, imports: &["limits"], about: "signing in to remote MCP servers on rmcp's OAuth: tokens per server URL in the keyring or the 0600 file (`vault.rs`), started sign-ins and the callback (`sign_in.rs`), revocation (`sign_out.rs`), a `401` found in rmcp's errors (`challenge.rs`), the `\"oauth\"` entry (`client_spec.rs`)" },
    Room { name: "ledger", layer: Services, imports: &["error", "ids", "limits", "time"], about: "the history database: records, the writer thread, schema, retention, reads, full-text search" },
    Room { name: "diagnostics", layer: Services, imports: &["events", "ledger", "limits", "text", "time"], about: "`Recorder` (error and limit counters, failures), the `Limit` list, the throttled change events" },
    Room { name: "trace", layer: Services, imports: &["diagnostics", "error", "ids", "ledger", "limits"], about: "spans with W3C trace context, OTLP export" },
    Room { name: "streams", layer: Services, imports: &["error", "limits", "patterns", "time"], about: "stream history (newest 200 per stream), live tails, filters, push budgets" },
    Room { name: "pins", layer: Services, imports: &["auth", "error", "events", "limits", "time"], about: "pinned tool definitions: `$TAP_HOME/pins.json` (`pins_file.rs`), the canonical text and hash of a definition (`canon.rs`), the diff of a held change (`diff.rs`), what is pinned and held (`mod.rs`)" },
    Room { name: "approvals", layer: Services, imports: &["auth", "error", "events", "ids", "limits", "patterns", "profiles", "text", "time"], about: "tool-call approvals: the user's rules (`policy.rs`, `$TAP_HOME/policy.json`, indexed by tool), remembered answers (`grants.rs`, `$TAP_HOME/grants.json`), argument patterns (`arg_patterns.rs`), the calls waiting for the user, each with one outcome (`waiting.rs`)" },
    Room { name: "socket", layer: Services, imports: &["config", "diagnostics", "limits"], about: "the one connection type: upgrade, frame caps, the loop and its `Handler`, outbound queues, slots, pacing" },
    Room {
        name: "state",
        layer: State,
        imports: &["approvals", "auth", "config", "diagnostics", "error", "events", "ids", "ledger", "limits", "patterns", "pins", "processes", "profiles", "request", "socket", "streams", "text", "time", "trace"],
        about: "`Core` (config, secrets, the `State` lock, services, trackers, slots) and `State` (sessions, providers, hosts, pairings, transforms, identities, concurrency limits, MCP bindings), with their data types: `session.rs`, `host.rs`, `tool_map.rs`, `tool_entry.rs`, `provider_entry.rs`, `link.rs`, `binding.rs`, `identity.rs`, `tool_schema.rs`, `call_table.rs`, `gates.rs`, `pairing_registry.rs`, `transforms.rs`, `emitters/` (the live emitters, their definitions and filters), `builtin_defs.rs`, `search_defs.rs` (a search profile's two tools, and what `tap_call_tool` calls), `delivery_queue.rs` (pushes waiting for a host, merged by `dedupKey`), `project_config.rs` (the session's config as last applied), `approval_asks.rs` (a waiting call asked in its session host: `approval.ask`, its answer, `approval.withdrawn`), `mode_defs.rs` (`tap_set_session_mode`'s declaration)",
    },
    Room { name: "hooks", layer: Capabilities, imports: &["patterns", "request", "socket", "state", "trace"], about: "`pre_tool_use`: hook rules and gates, fail closed" },
    Room { name: "transforms", layer: Capabilities, imports: &["state", "trace"], about: "`prompt.apply`: prompt transforms and ambient context" },
    Room { name: "providers", layer: Capabilities, imports: &["auth", "error", "processes", "state"], about: "the provider registry: unbind, detach, leave (`registry.rs`), reconnect identities, the revision barrier (`acks.rs`), `hello` validation, the `--spawn` processes (`spawned.rs`)" },
    Room { name: "pairing", layer: Capabilities, imports: &["error", "events", "ledger", "providers", "socket", "state"], about: "pairing commands (list, deny, revoke, configure, save), external trust's rules, which session a paired provider may use" },
    Room { name: "project", layer: Capabilities, imports: &["auth", "error", "limits", "pairing", "processes", "state"], about: "`tap.config.json`: finding and reading it (either shape of `streams`, `.github/tap.config.json`), warning about it, and the project providers it starts per session" },
    Room { name: "emitters", layer: Capabilities, imports: &["diagnostics", "error", "ledger", "limits", "processes", "project", "state", "streams", "time", "trace"], about: "running emitters: start, stop, list (`api.rs`), the runner task, routing lines into streams, `tap.config.json`'s emitters, persistence" },
    Room { name: "status", layer: Capabilities, imports: &["limits", "socket", "state", "time"], about: "the status snapshot, the diagnostics report, every connection's state" },
    Room { name: "builtin", layer: Capabilities, imports: &["approvals", "emitters", "error", "ids", "ledger", "limits", "patterns", "request", "state", "status", "text", "time"], about: "the gateway's own `tap_*` tools: dispatch, streams, posts, injectors, emitters, goal evidence (files of the workspace, streams, supplied output), a search profile's `tap_find_tools`, `tap_set_session_mode` (always asked, then the host's `session.mode.set`)" },
    Room { name: "tools", layer: Capabilities, imports: &["approvals", "builtin", "diagnostics", "limits", "request", "socket", "state", "text", "time", "trace"], about: "the call path: route, argument check, the approval (`approval.rs`: decided, or waited for), concurrency slot, `tool.call`, one outcome, one retry; the wait for room in the ledger" },
    Room { name: "sessions", layer: Capabilities, imports: &["emitters", "error", "events", "ledger", "limits", "profiles", "project", "providers", "socket", "state", "time"], about: "session lifecycle (register, end, busy/idle), the debounced tool set, `session.event` forwarding, the session's `tap.config.json` followed and applied while it lives (`project_follow.rs`: project providers, emitters, MCP servers)" },
    Room { name: "settings", layer: Capabilities, imports: &["auth", "error", "events", "ledger", "limits", "state"], about: "the user's settings file" },
    Room { name: "clients", layer: Capabilities, imports: &["error", "events", "ledger", "limits", "profiles", "state"], about: "what clients see: every tool offered with what its definition costs in a client's context (`context_cost.rs`, tokens with `o200k_base`, bytes), what each profile lets through (`offered_tools.rs`), the `tap` entry in each MCP client's own file through `tap-connect` (`client_files.rs`: `clients.list/connect/disconnect`) and each client's recent sessions (`client_sessions.rs`)" },
    Room { name: "accept", layer: EntryPoints, imports: &["diagnostics", "socket", "state"], about: "taking a connection slot and upgrading: the one way any WebSocket is accepted" },
    Room {
        name: "provider_protocol",
        layer: EntryPoints,
        imports: &["accept", "auth", "diagnostics", "error", "events", "ids", "ledger", "limits", "pairing", "patterns", "project", "providers", "request", "socket", "state", "streams", "time", "tools", "trace"],
        about: "the provider protocol handler (TAP Provider Interface v2): auth, pairing, `hello`, pushes, streams, updates, results, teardown; `local.rs` (in-process providers)",
    },
    Room {
        name: "mcp_servers",
        layer: EntryPoints,
        imports: &["error", "events", "ids", "limits", "oauth", "processes", "profiles", "project", "provider_protocol", "state", "time", "trace"],
        about: "MCP servers as providers: `mcpServers` (`config.rs`), which run (`hub.rs`), each one's life (`supervise.rs`), reaching it (`connect.rs`, `client.rs`, `streamable.rs`), signing in (`remote_auth.rs`), a run as an in-process provider (`bridge.rs`, `catalog.rs`, `naming.rs`)",
    },
    Room {
        name: "host_protocol",
        layer: EntryPoints,
        imports: &["accept", "auth", "builtin", "config", "diagnostics", "error", "hooks", "ids", "ledger", "limits", "request", "sessions", "socket", "state", "status", "tools", "transforms"],
        about: "the session-host protocol handler: auth, resume, calls, detach",
    },
    Room {
        name: "gateway",
        layer: EntryPoints,
        imports: &["auth", "clients", "config", "emitters", "error", "events", "hooks", "ledger", "limits", "mcp_servers", "oauth", "pairing", "pins", "profiles", "provider_protocol", "providers", "request", "settings", "state", "status", "time", "tools", "trace"],
        about: "`Gateway`: the public engine API, a façade over the capabilities",
    },
    Room { name: "mcp", layer: EntryPoints, imports: &["accept", "auth", "diagnostics", "error", "hooks", "ids", "limits", "request", "sessions", "socket", "state", "tools", "transforms"], about: "the MCP facade: Streamable HTTP and `tap mcp` over a WebSocket, one binding per session" },
    Room {
        name: "control",
        layer: EntryPoints,
        imports: &["accept", "auth", "diagnostics", "error", "events", "gateway", "mcp", "request", "socket", "state", "streams", "tools"],
        about: "the control plane: the handler, one typed function per method, follow topics, the playground",
    },
    Room { name: "server", layer: EntryPoints, imports: &["accept", "auth", "config", "control", "gateway", "host_protocol", "mcp", "oauth", "provider_protocol", "socket"], about: "the HTTP router: `/`, `/session`, `/control`, `/mcp/…`, `/healthz`, the panel, `/api/login`, `/oauth/callback`" },
    Room {
        name: "handle",
        layer: EntryPoints,
        imports: &["approvals", "auth", "config", "error", "gateway", "limits", "processes", "providers", "server", "sessions", "settings", "state", "time"],
        about: "`GatewayHandle::start` and `stop`, `run`",
    },
    Room {
        name: "fuzzing",
        layer: EntryPoints,
        imports: &["accept", "auth", "control", "gateway", "host_protocol", "patterns", "project", "provider_protocol", "server", "socket", "state", "streams"],
        about: "entry points for the fuzz targets (feature `fuzzing`)",
    },
];

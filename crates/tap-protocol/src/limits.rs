//! Every limit, timeout and rate of the spec (and of our session-host protocol), named once.
//! The gateway enforces each in exactly one place; tests refer to these constants. Limits
//! the spec does not set are ours; each says why it has its value.

use std::time::Duration;

/// `tool.result` may be up to 5 MB (spec: "Payload limits").
pub const MAX_TOOL_RESULT_BYTES: usize = 5 * 1024 * 1024;
/// Every other provider message may be up to 2 MB.
pub const MAX_MESSAGE_BYTES: usize = 2 * 1024 * 1024;
/// Frames above this are not read at all: the socket closes with 1009 (message too big).
/// Between the spec limits and this hard cap the gateway answers `PAYLOAD_TOO_LARGE`
/// and the connection survives, as the spec asks.
pub const HARD_FRAME_CAP_BYTES: usize = 16 * 1024 * 1024;
/// Bytes an unauthenticated socket may send in total before it is closed: the pre-auth
/// byte budget. The spec sets none; an unauthenticated peer must not cost memory without
/// bound (docs/spec-decisions.md, decision 5).
pub const MAX_PRE_AUTH_BYTES: usize = 64 * 1024;
/// The auth deadline: an unauthenticated socket is closed after this long, on every
/// endpoint. The spec sets none; an unauthenticated peer must not hold a socket forever
/// (docs/spec-decisions.md, decision 5).
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// Tools per provider.
pub const MAX_TOOLS_PER_PROVIDER: usize = 100;
/// Hook rules per provider.
pub const MAX_HOOK_RULES_PER_PROVIDER: usize = 50;
/// Streams per provider.
pub const MAX_STREAMS_PER_PROVIDER: usize = 20;
/// Events kept per stream (oldest evicted).
pub const STREAM_RETENTION: usize = 200;
/// Largest `last` a `stream.query` may ask for.
pub const MAX_STREAM_QUERY_LAST: usize = 100;
/// Connections that end without authenticating, per second, before the gateway stops
/// accepting new connections until the rate is back under it (a flood's cost on the
/// connections already open; `tap-gateway`'s `socket/pacing.rs`).
pub const MAX_ABANDONED_CONNECTIONS_PER_SECOND: u32 = 200;
/// How many such connections may come at once before the rate above applies.
pub const ABANDONED_CONNECTIONS_BURST: u32 = 200;
/// Concurrent provider WebSocket connections.
pub const MAX_PROVIDER_CONNECTIONS: usize = 50;
/// Pairing attempts per minute.
pub const MAX_PAIRING_ATTEMPTS_PER_MINUTE: u32 = 5;
/// The window [`MAX_PAIRING_ATTEMPTS_PER_MINUTE`] counts over: a sliding minute (spec:
/// "Payload limits", "per minute").
pub const PAIRING_ATTEMPT_WINDOW: Duration = Duration::from_secs(60);
/// `hello` rebinds per connection per minute.
pub const MAX_REBINDS_PER_MINUTE: u32 = 10;
/// The window [`MAX_REBINDS_PER_MINUTE`] counts over: a sliding minute (spec: "Payload
/// limits", "per connection per minute").
pub const REBIND_WINDOW: Duration = Duration::from_secs(60);
/// `push` messages per second per (provider, session).
pub const MAX_PUSHES_PER_SECOND: u32 = 10;
/// The push budget window: [`MAX_PUSHES_PER_SECOND`] counts `surface`/`inject` pushes
/// over a sliding second (spec: "Push loop prevention", "per second per (provider,
/// session)").
pub const PUSH_BUDGET_WINDOW: Duration = Duration::from_secs(1);
/// Consecutive inject→response→inject cycles before a provider's injects to a session are
/// paused until the user speaks (spec: "Push loop prevention").
pub const MAX_INJECT_CYCLES: u32 = 3;
/// Queued calls beyond a provider's concurrency limit.
pub const MAX_QUEUED_CALLS: usize = 10;
/// `gate.check` answer deadline, the hook gate timeout: no answer in time denies the tool
/// use unless the rule says `failOpen` (spec: "Gate timeout behavior: fail closed", 5 s).
pub const GATE_TIMEOUT: Duration = Duration::from_secs(5);
/// `transform.request` answer deadline; no answer leaves the section unchanged (spec:
/// `transform.request`, 2 s).
pub const TRANSFORM_TIMEOUT: Duration = Duration::from_secs(2);
/// The reconnect window: how long a `reconnectToken` stays valid after its connection
/// drops, so a provider that reconnects within it gets its binding back (spec:
/// "Reconnect protocol", 30 s).
pub const RECONNECT_TOKEN_TTL: Duration = Duration::from_secs(30);
/// Tool timeout when the tool declares none.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest per-tool `timeout` a provider may declare (1 hour).
pub const MAX_TOOL_TIMEOUT_MS: u64 = 60 * 60 * 1000;
/// Largest serialized `parameters` (JSON Schema) of one tool; larger ones are refused
/// `PAYLOAD_TOO_LARGE` (docs/spec-decisions.md, decision 34).
pub const MAX_TOOL_SCHEMA_BYTES: usize = 64 * 1024;
/// Tool-set changes reaching a session host are batched over this window.
pub const TOOLSET_DEBOUNCE: Duration = Duration::from_millis(200);
/// A steady trickle of changes still publishes at least this often.
pub const TOOLSET_DEBOUNCE_MAX_WAIT: Duration = Duration::from_secs(1);
/// `shutdown.pending` deadline given to providers when a session ends.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);
/// A session host that drops may resume its sessions within this window.
pub const HOST_RESUME_GRACE: Duration = Duration::from_secs(30);
/// Messages kept for a detached session host while it may still resume.
pub const HOST_OUTBOX_CAP: usize = 10_000;
/// Terminal answers (`tool.result`, a refused `tool.invoke`) kept per session host after
/// they were sent, so that a resume can send again what a dropped socket lost unread.
pub const HOST_RECENT_ANSWERS: usize = 1024;
/// The bytes those kept answers may take per host (above one largest tool result).
pub const HOST_RECENT_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// The most `callId`s a resuming host may list in `auth.pendingCalls` (the whole `auth`
/// frame must also fit in `MAX_PRE_AUTH_BYTES`).
pub const MAX_RESUME_PENDING_CALLS: usize = 4096;
/// Longest tool name (the MCP and OpenAI tool-name limit).
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Longest session id a session host may choose.
pub const MAX_SESSION_ID_LEN: usize = 128;
/// Longest stream name.
pub const MAX_STREAM_NAME_LEN: usize = 128;
/// Longest text a host reports of its agent (`mode`, `model`, each of `capabilities.modes`,
/// `capabilities.client`'s name and version), in characters.
pub const MAX_HOST_REPORT_TEXT_LEN: usize = 128;
/// Most modes a host may list in `capabilities.modes`.
pub const MAX_HOST_MODES: usize = 16;
/// Longest `hello.instance` (characters); not in the spec: an instance id is listed in every
/// shared tool's `target` schema.
pub const MAX_INSTANCE_ID_LEN: usize = 128;
/// Largest MCP message a client may send (an HTTP request body, a `tap mcp` frame): the
/// provider messages' limit, since a call's arguments end up in one.
pub const MAX_MCP_REQUEST_BYTES: usize = MAX_MESSAGE_BYTES;
/// How often an idle MCP event stream (Streamable HTTP, SSE) gets a keep-alive comment, so
/// a client or proxy does not take a quiet stream for a dead one.
pub const MCP_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// An MCP session of the `initialize` generation over HTTP that sends no request for this
/// long is closed (a client that vanished without `DELETE` leaves no session behind for
/// longer); the client must `initialize` again after it.
pub const MCP_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Concurrent session-host connections (each `tap call` is one while it runs).
pub const MAX_HOST_CONNECTIONS: usize = 64;
/// Concurrent control-plane connections (panel windows, tray popup, `tap pairing`).
pub const MAX_CONTROL_CONNECTIONS: usize = 16;
/// How long a pairing code stays valid.
pub const PAIRING_CODE_TTL: Duration = Duration::from_secs(5 * 60);
/// Pending pairing requests at once; more are refused with `RATE_LIMITED`.
pub const MAX_PENDING_PAIRINGS: usize = 10;
/// Project providers a session's `tap.config.json` may declare; more are reported and skipped.
pub const MAX_PROJECT_PROVIDERS: usize = 16;
/// Largest `tap.config.json` the gateway reads.
pub const MAX_PROJECT_CONFIG_BYTES: u64 = 256 * 1024;
/// Longest project provider `name` (it names the provider in logs and warnings).
pub const MAX_PROJECT_PROVIDER_NAME_LEN: usize = 64;
/// A crashed project provider is restarted after this delay, doubled after each quick
/// failure…
pub const PROJECT_RESTART_BACKOFF: Duration = Duration::from_millis(500);
/// …up to this.
pub const PROJECT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);
/// A run at least this long is stable: the backoff and the quick-failure count start over.
pub const PROJECT_STABLE_RUN: Duration = Duration::from_secs(10);
/// After this many quick failures in a row a project provider is given up (and reported).
pub const PROJECT_MAX_QUICK_FAILURES: u32 = 5;
/// Largest file a `tool.result.file` may name; the gateway copies it.
pub const MAX_FILE_RESULT_BYTES: u64 = 100 * 1024 * 1024;
/// Longest `tool.result.file.ttl` (seconds): how long the gateway keeps its copy readable.
pub const MAX_FILE_RESULT_TTL_SECS: u64 = 60 * 60;

// ---------------------------------------------------------------- hook rules

/// Longest `match.args` pattern of a hook rule, in bytes. Not in the spec: a pattern is
/// matched against every tool use, so its size is bounded with the rule count.
pub const MAX_HOOK_PATTERN_BYTES: usize = 4 * 1024;
/// Compiled-program size limit of one pattern (the `regex` crate's `size_limit`). The spec
/// asks for a 1 ms timeout per match ("Regex execution safety"); the `regex` crate matches
/// in time linear in the input, so nothing can backtrack, and this bounds the memory a
/// pattern may cost instead.
pub const HOOK_REGEX_SIZE_LIMIT: usize = 1024 * 1024;
/// Most rules in one stream's filter (`filter.set`; the hook-rule limit).
pub const MAX_FILTER_RULES: usize = MAX_HOOK_RULES_PER_PROVIDER;
/// Most codepoints that compiling one rule list's patterns may case-fold: a provider's
/// hook rules, a stream's filter, an emitter's filter. Not in the spec. Under
/// case-insensitivity the `regex` crate folds a bracketed class codepoint by codepoint
/// (about 6 ns each; one with a case mapping costs about 36 ns and counts 7), so `[\S]`
/// alone is a whole Unicode (1.1 M); this is about 25 ms of one thread per compile, where
/// 4 KiB of `[\S]` was 7.6 s.
pub const MAX_CASE_FOLD_CODEPOINTS: u64 = 4 * 1024 * 1024;

// ---------------------------------------------------------------- provider processes

/// Longest output line of a spawned provider logged as is; the rest of a longer line is
/// dropped, so a provider printing without newlines cannot make the gateway buffer it all.
pub const MAX_PROVIDER_LOG_LINE_BYTES: usize = 8 * 1024;
/// How long a spawned provider has to exit after SIGTERM before it is killed.
pub const PROVIDER_STOP_GRACE: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------- closing and stopping

/// Bound on closing a socket politely (flushing queued frames, then the close frame): the
/// peer may be the reason it is closing, so the gateway does not wait on it longer.
pub const CLOSE_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// When the gateway stops, after every session has ended: how long tool invocations get to
/// hand their outcomes to their session hosts before the host sockets close.
pub const STOP_INVOCATIONS_WAIT: Duration = Duration::from_secs(2);
/// When the gateway stops, after the invocations: how long its connection tasks get to
/// close before the gateway returns without them.
pub const STOP_CONNECTIONS_WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------- slow consumers

/// Bytes the gateway queues for one peer (provider, session host, control client) that
/// it has not yet written. A peer that stops reading fills its queue; past this (or
/// [`MAX_OUTBOUND_QUEUED_MESSAGES`]) its connection is dropped instead of the gateway's
/// memory growing. Twice the hard frame cap, so one largest frame always fits.
pub const MAX_OUTBOUND_QUEUED_BYTES: usize = 2 * HARD_FRAME_CAP_BYTES;
/// Messages queued for one peer and not yet written; past this its connection is dropped.
/// Small messages (deliveries, progress) hit this before the byte limit.
pub const MAX_OUTBOUND_QUEUED_MESSAGES: usize = 10_000;
/// A provider or session host that does not take a batch of frames within this long
/// stopped reading: its connection is dropped (control clients: [`CONTROL_WRITE_TIMEOUT`]).
pub const PEER_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------- control plane

/// A control client that does not take a frame within this long stopped reading: its
/// connection is dropped rather than held open forever.
pub const CONTROL_WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// At most one `diagnostics.changed` event per this long: counters change on every
/// message, and the panel only needs to refresh a few times a second.
pub const DIAGNOSTICS_EVENT_INTERVAL: Duration = Duration::from_millis(250);
/// How long a `ui.login` code may be exchanged for the control token (`POST /api/login`).
pub const UI_LOGIN_CODE_TTL: Duration = Duration::from_secs(120);
/// `ui.login` codes outstanding at once; issuing one more forgets the oldest.
pub const MAX_UI_LOGIN_CODES: usize = 16;
/// Largest `POST /api/login` body read: a real one is `{"code": "<43 characters>"}`.
pub const MAX_LOGIN_BODY_BYTES: usize = 1024;
/// Sessions one control connection may hold open in the tool playground
/// (`playground.open`); each is a registered session with its own watcher task.
pub const MAX_PLAYGROUND_SESSIONS: usize = 8;
/// Tool calls one control connection may have in flight (`playground.call`): the panel's
/// user clicks; more than this is a runaway client.
pub const MAX_PLAYGROUND_CALLS: usize = 32;
/// Longest `callId` of a `playground.call`.
pub const MAX_PLAYGROUND_CALL_ID_LEN: usize = 128;
/// `tool.progress` messages of one call kept as events on its trace span; the rest still
/// reach the caller and are counted in one `tool.progress.unrecorded` event, so a provider
/// that reports progress without end cannot grow a span without bound.
pub const MAX_PROGRESS_EVENTS_PER_CALL: usize = 256;

//! The gateway's own limits: counts, sizes, rates and waits that bound what one session,
//! provider or user can make the engine hold or wait for. Wire limits (what a peer may send,
//! the spec's) are in [`tap_protocol::limits`]; these are the engine's, in one place, grouped
//! by the room that enforces each (where it is used). Every limit of both modules is listed
//! in `docs/architecture.md` ("Where each limit is enforced"); `tests/rooms/limits.rs` checks that,
//! and that no limit is defined anywhere else in `src/`.

use std::time::Duration;
use tap_protocol::limits::MCP_SESSION_IDLE_TIMEOUT;

// ---------------------------------------------------------------- events

/// Events buffered for a slow subscriber before it lags (and is told to refresh).
pub(crate) const EVENT_BUFFER: usize = 1024;
/// `Changed` notices buffered for a slow follower (each topic sends at most four a
/// second, so this is seconds of them).
pub(crate) const CHANGED_BUFFER: usize = 16;

// ---------------------------------------------------------------- request

/// `tool.progress` messages of one call that wait for its caller to take them, and their
/// bytes. A provider may send progress as fast as its socket goes, each message up to a
/// frame's size, while the caller hands each on to a slower peer (an MCP client's event
/// stream). Bursts of small messages fit (a build's output, line by line); beyond either
/// bound newer messages are dropped and counted (progress is advisory; the result never waits
/// behind it and is never dropped).
pub const MAX_PROGRESS_QUEUED_PER_CALL: usize = 1024;
/// The bytes bound of [`MAX_PROGRESS_QUEUED_PER_CALL`]'s queue: a few frames' worth.
pub const MAX_PROGRESS_QUEUED_BYTES_PER_CALL: usize = 4 * 1024 * 1024;

// ---------------------------------------------------------------- logs

/// New log records buffered for a slow follower before it misses some (and is told so).
pub(crate) const LOG_LIVE_BUFFER: usize = 1024;
/// How many log records `tap gateway` keeps (`LogBuffer::default`).
pub(crate) const LOG_BUFFER_CAPACITY: usize = 2000;

// ---------------------------------------------------------------- processes

/// An emitter's output line longer than this is cut, with a marker saying so.
pub(crate) const MAX_EMITTER_LINE_BYTES: usize = 64 * 1024;

// ---------------------------------------------------------------- ledger

/// Records queued for the writer before producers wait.
pub(crate) const LEDGER_QUEUE: usize = 8192;
/// What records waiting for the writer may weigh (`Record::weight`) before producers
/// wait, counted until their batch is committed. Spans are a few hundred bytes, so under a
/// flood of tool calls this, not [`LEDGER_QUEUE`], is usually the bound: a full queue is a
/// few MiB, not the tens a count alone allowed (a provider's events may each be a whole
/// message long). A record heavier than this waits for the whole of it.
pub(crate) const LEDGER_QUEUE_BYTES: usize = 2 * 1024 * 1024;
/// Ledger records committed in one transaction at most.
pub(crate) const LEDGER_WRITE_BATCH: usize = 1024;
/// After a commit that emptied the queue, the writer waits this long before it looks again,
/// instead of parking on the queue: records that come meanwhile wake nobody (a producer
/// wakes the writer only when it is parked), and the next commit takes them together. Without
/// it each tool call's spans woke this thread on their own (2 of S1b's 7.4 context switches
/// per call, docs/performance.md run 17). A record is still committed at most this long
/// after it is queued; one that comes after a quiet time wakes the writer at once.
pub(crate) const GROUP_COMMIT_WINDOW: Duration = Duration::from_millis(2);
/// Chunks and events are indexed for search once no record has come for this long…
pub(crate) const INDEX_WHEN_IDLE_FOR: Duration = Duration::from_millis(250);
/// …or, while records keep coming, once the oldest has waited this long.
pub(crate) const INDEX_AT_THE_LATEST: Duration = Duration::from_secs(2);
/// Lines indexed for search in one step of the writer, between looks at its queue…
pub(crate) const INDEX_STEP_LINES: i64 = 8192;
/// …and rows at most (a step of pushes, one line each, would otherwise read 8,192 ids).
pub(crate) const INDEX_STEP_ROWS: i64 = 1024;
/// Lines one chunk row holds at most (the emitter's router cuts its chunks to it).
pub(crate) const MAX_LINES_PER_ROW: usize = 4096;
/// How long a ledger statement waits for another process's lock before the file counts as locked.
pub(crate) const LEDGER_BUSY_TIMEOUT: Duration = Duration::from_secs(1);
/// SQLite's page cache per connection, in KiB (its default is 2000). The writer appends at
/// the end of its tables and indexes, and readers scan recent rows the OS keeps cached
/// anyway, so a small cache costs little; at the default, the two connections' caches
/// filling up over a long run showed as 2.8 MiB of the gateway's RSS (the soak, 1M calls).
pub(crate) const LEDGER_PAGE_CACHE_KIB: i64 = 512;
/// How often the gateway asks the ledger for a history trim.
pub(crate) const HISTORY_TRIM_EVERY: Duration = Duration::from_secs(60);
/// Rows removed per step at most while the database is over its size limit; a step is a
/// twentieth of the table, so a few large rows are not all removed for one too many.
pub(crate) const TRIM_STEP_ROWS: i64 = 2000;
/// Rows a history page holds when the caller does not say.
pub(crate) const DEFAULT_HISTORY_PAGE: u32 = 100;
/// Rows a history page holds at most.
pub(crate) const MAX_HISTORY_PAGE: u32 = 1000;
/// Sessions (and providers) `ledger.sessions` lists at most.
pub(crate) const HISTORY_SESSIONS_LISTED: u32 = 500;
/// Rows (keys) `activity.query` answers at most when grouping, most calls first; the
/// total still counts the rest (`truncated`).
pub(crate) const ACTIVITY_ROWS: usize = 50;
/// How long the activity rollup keeps minute rows: the minute windows (15 min, 1 h) read
/// the last hour; a day leaves room for a finer window without a migration.
pub(crate) const ACTIVITY_MINUTES_KEPT: Duration = Duration::from_secs(24 * 3600);
/// How long the activity rollup keeps half-hour rows: the longest window, 7 days (or less
/// when history is kept for less).
pub(crate) const ACTIVITY_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);

// ---------------------------------------------------------------- diagnostics

/// How many recent failures the diagnostics keep.
pub(crate) const FAILURES_KEPT: usize = 100;
/// Failure messages are cut to this many characters: some quote what the peer sent.
pub(crate) const MAX_FAILURE_MESSAGE_CHARS: usize = 300;

// ---------------------------------------------------------------- trace

/// Finished spans waiting for the exporter before new ones are dropped from the export.
/// OpenTelemetry's batch processor default: a few seconds of a busy gateway's spans, a
/// few hundred KiB at most.
pub(crate) const OTLP_QUEUE: usize = 2048;
/// Spans per request at most (OpenTelemetry's batch processor default).
pub(crate) const OTLP_MAX_BATCH: usize = 512;
/// How long the first span of a batch waits for more before the batch is sent: short,
/// so a trace shows up in Jaeger while the user still looks at what made it.
pub(crate) const OTLP_BATCH_WAIT: Duration = Duration::from_millis(500);
/// One request, answer included (`OTEL_EXPORTER_OTLP_TIMEOUT`'s default).
pub(crate) const OTLP_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Tries per batch, the first included. Between them the queue keeps filling (and drops
/// when full), so a dead receiver never holds more than one batch and the queue.
pub(crate) const OTLP_ATTEMPTS: u32 = 3;
/// The wait before the second try; it doubles before each further one.
pub(crate) const OTLP_RETRY_BACKOFF: Duration = Duration::from_secs(1);
/// At stop, how long the last batches get, all together. Well under the stop's wait for
/// the gateway's tasks, so a slow receiver never delays a stop past it.
pub(crate) const OTLP_FINAL_FLUSH: Duration = Duration::from_secs(1);
/// A receiver's answer is read (so the connection can be reused) up to this much.
pub(crate) const OTLP_MAX_ANSWER_BYTES: usize = 64 * 1024;

// ---------------------------------------------------------------- streams

/// Stream entries buffered for a slow follower before it misses some (and is told so).
pub(crate) const TAIL_BUFFER: usize = 4096;

// ---------------------------------------------------------------- socket

/// Frames written per flush when the queue is busy; bounds the latency of a big backlog.
pub(crate) const SOCKET_WRITE_BATCH: usize = 64;
/// Initial read buffer per socket, kept while the socket is open: most frames are a few
/// hundred bytes, and a larger one grows it. 4 KiB instead of 8 saved 3 KiB per bound
/// provider with no change in S1, S3 or S4 (docs/performance-log.md, run 31).
pub(crate) const SOCKET_READ_BUFFER_BYTES: usize = 4 * 1024;

// ---------------------------------------------------------------- state

/// Size limit of one compiled `pattern` / `patternProperties` regex.
pub(crate) const SCHEMA_REGEX_SIZE_LIMIT: usize = 1024 * 1024;
/// Longest `INVALID_JSON` message about a call's arguments (the failing value is quoted).
pub(crate) const MAX_ARGS_ERROR_CHARS: usize = 300;
/// Longest `tap_post` message.
pub(crate) const MAX_POST_BYTES: usize = 16 * 1024;
/// Longest stream argument (`name@provider` included).
pub(crate) const MAX_STREAM_ARG_LEN: usize = 200;
/// Longest section name a transform may name.
pub(crate) const MAX_SECTION_NAME_LEN: usize = 128;
/// Longest label shown for an instance in a `target` description.
pub(crate) const MAX_LABEL_CHARS: usize = 80;
/// Notices buffered for a slow MCP client before it misses some. A missed tool-list
/// change is harmless (the next one carries the whole state), so a small buffer is enough.
pub(crate) const NOTICE_BUFFER: usize = 256;
/// Most rules in one emitter filter.
pub(crate) const MAX_EMITTER_RULES: usize = 64;
/// An emitter filter pattern's compiled size bound (the hook rules' bound).
pub(crate) const EMITTER_REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Longest pattern of a rule, in bytes (a hook pattern's bound). The compiled-size bound
/// does not bound the work of compiling: a case-insensitive pattern's classes are case-folded
/// over Unicode first, and a 4 KiB pattern of negated classes took 143 ms to compile
/// (release build), so a pattern's length is bounded before it is compiled…
pub(crate) const MAX_EMITTER_PATTERN_BYTES: usize = 4 * 1024;
/// …and so is the whole filter's: 64 rules of 4 KiB, each compiled twice, would be tens of
/// seconds of one thread. Length does not bound cost (the fuzzer found a 40-byte pattern
/// that compiles in 21 ms), so the filter's case folding is bounded as well
/// (`crate::patterns::cost`).
pub(crate) const MAX_EMITTER_FILTER_BYTES: usize = 16 * 1024;
/// Runs kept in memory per emitter (the ledger keeps them all).
pub(crate) const RUNS_KEPT: usize = 100;
/// Longest emitter (and stream) name after normalising.
pub(crate) const MAX_EMITTER_NAME_LEN: usize = 64;
/// Longest emitter command or prompt.
pub(crate) const MAX_EMITTER_TEXT_BYTES: usize = 16 * 1024;
/// The shortest interval: a timed emitter runs at most once a second.
pub(crate) const MIN_EMITTER_EVERY: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------- pairing

/// Longest `name` a pairing request may carry (an extension field of `auth`).
pub(crate) const MAX_PAIRING_NAME_CHARS: usize = 128;

// ---------------------------------------------------------------- emitters

/// Emitters one session may have at once.
pub(crate) const MAX_EMITTERS_PER_SESSION: usize = 32;
/// Surface and inject deliveries per emitter per second; beyond, lines are only kept.
pub(crate) const MAX_EMITTER_DELIVERIES_PER_SECOND: u32 = 10;
/// Lines one batched inject prompt carries; the rest are counted in its text.
pub(crate) const MAX_LINES_PER_INJECT: usize = 4;
/// A chunk of stored lines is cut once it holds this many bytes (or
/// [`MAX_LINES_PER_ROW`] lines).
pub(crate) const MAX_CHUNK_BYTES: usize = 64 * 1024;
/// Chunks one run may have queued for the ledger; beyond, it reads no further until one
/// is written. Bounds a run's memory to about this times [`MAX_CHUNK_BYTES`].
pub(crate) const MAX_CHUNKS_QUEUED: usize = 32;
/// How often a running session's `tap.config.json` is looked at for edits (its
/// modification time and size; the file is read only when they change). With
/// [`PROJECT_CONFIG_SETTLE`], an edit applies well within a second.
pub(crate) const PROJECT_CONFIG_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// An edited `tap.config.json` is read once it looks the same again this much later: an
/// editor's save in several writes is not read half-written.
pub(crate) const PROJECT_CONFIG_SETTLE: Duration = Duration::from_millis(150);
/// A project provider stopped because its entry changed: how long its connections may
/// take to close before its new run starts anyway.
pub(crate) const PROJECT_PROVIDER_CLOSE_WAIT: Duration = Duration::from_secs(2);
/// `surface` / `inject` deliveries that wait per session while no host can show them;
/// one more drops the oldest (counted in the trace and a `session.warning`).
pub(crate) const MAX_QUEUED_DELIVERIES_PER_SESSION: usize = 256;
/// Pushes with the same `metadata.dedupKey` (one provider, session and stream) within
/// this window are one delivery.
pub(crate) const DELIVERY_DEDUP_WINDOW: Duration = Duration::from_secs(30);
/// Dedup keys remembered per session within the window; past it the oldest is forgotten
/// (its next push is shown again).
pub(crate) const MAX_DEDUP_KEYS_PER_SESSION: usize = 1024;
/// How often `$TAP_HOME/policy.json` is looked at for hand edits (its modification time
/// and size; read again only when they change).
pub(crate) const POLICY_FILE_POLL_INTERVAL: Duration = Duration::from_secs(2);
/// A failed continuous command is restarted after this, doubling up to [`EMITTER_RESTART_BACKOFF_MAX`].
pub(crate) const EMITTER_RESTART_BACKOFF_START: Duration = Duration::from_secs(1);
/// The longest wait before restarting a failed continuous command.
pub(crate) const EMITTER_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(300);
/// An idle prompt waits this long after a successful run before it may run again.
pub(crate) const EMITTER_IDLE_AFTER_SUCCESS: Duration = Duration::from_secs(2);
/// …and this long after a failed one.
pub(crate) const EMITTER_IDLE_AFTER_FAILURE: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------- builtin

/// Events per stream `tap_stream_history` returns unless asked.
pub(crate) const DEFAULT_STREAM_HISTORY: u64 = 20;

// ---------------------------------------------------------------- builtin: goal evidence

/// Checks one `tap_verify_goal_output` or `tap_audit_claims` call makes: its expectations,
/// or its claims' evidence all together (each reads a file, scans a stream or matches an
/// output, so this bounds a call's work with the bounds below).
pub(crate) const MAX_GOAL_CHECKS: usize = 64;
/// Claims one `tap_audit_claims` call audits.
pub(crate) const MAX_GOAL_CLAIMS: usize = 64;
/// A goal's or a claim's text, an evidence `id`, a command's label, in characters.
pub(crate) const MAX_GOAL_TEXT_LEN: usize = 2000;
/// A workspace path or a JSON pointer named as evidence, in characters.
pub(crate) const MAX_GOAL_PATH_LEN: usize = 4096;
/// Command output the caller supplies as evidence, in characters (one call's frame bounds
/// them all together).
pub(crate) const MAX_GOAL_OUTPUT_LEN: usize = 256 * 1024;
/// Bytes of one file read as evidence: a larger file is searched in its first part only
/// (a pattern not found there is unverified, not contradicted) and not parsed as JSON.
pub(crate) const MAX_GOAL_FILE_BYTES: u64 = 1024 * 1024;
/// All of one call's patterns together, in bytes (each is also a hook pattern's size at
/// most): compiling is the cost a length bounds.
pub(crate) const MAX_GOAL_PATTERN_BYTES: usize = 16 * 1024;
/// A stream's events one check scans in the ledger, newest first: past it, a pattern not
/// found is unverified, not contradicted.
pub(crate) const MAX_GOAL_STREAM_EVENTS: usize = 2000;
/// Characters of a found value or line quoted in a check's reason.
pub(crate) const MAX_GOAL_EXCERPT_CHARS: usize = 120;

// ---------------------------------------------------------------- builtin: records

/// Records `tap_query_records` answers unless asked, and at most (its `limit`).
pub(crate) const DEFAULT_RECORDS_PAGE: u32 = 20;
/// See [`DEFAULT_RECORDS_PAGE`].
pub(crate) const MAX_RECORDS_PAGE: u32 = 100;
/// One `tap_query_records` answer's records, serialized: past it the page ends early
/// (its `nextCursor` goes on from there), so a page of megabyte events cannot flood the
/// model's context.
pub(crate) const MAX_RECORDS_ANSWER_BYTES: usize = 64 * 1024;
/// A text field of one record (an event's text, a span's message, an attribute's value),
/// in characters: longer is cut and the record marked `truncated`.
pub(crate) const MAX_RECORD_FIELD_CHARS: usize = 2000;
/// `tap_query_records`' `text` (its search words), in characters (refused past it by the
/// schema).
pub(crate) const MAX_RECORDS_QUERY_LEN: usize = 500;
/// Earlier sessions of a workspace whose records a session may read: the newest ones.
pub(crate) const MAX_WORKSPACE_SESSIONS: u32 = 500;
/// Waiting approvals and pending pairings `tap_get_session_state` lists (the rest counted).
pub(crate) const MAX_STATE_LISTED: usize = 50;

// ---------------------------------------------------------------- settings

/// How long history may be kept: a day to ten years.
pub(crate) const HISTORY_DAYS: std::ops::RangeInclusive<u32> = 1..=3650;
/// How large the history database may grow: 16 MiB to 1 TiB.
pub(crate) const HISTORY_MAX_MIB: std::ops::RangeInclusive<u32> = 16..=1_048_576;

// ---------------------------------------------------------------- mcp

/// How long the endpoint answers a session's calls itself before it lets one through to
/// rmcp again, whose idle timer only restarts on requests it sees. Half the timeout: a
/// client calling at least that often never has its session closed under it.
pub(crate) const RMCP_TOUCH_INTERVAL: Duration =
    Duration::from_secs(MCP_SESSION_IDLE_TIMEOUT.as_secs() / 2);
/// How long an MCP client may take to answer what a server asks through the gateway
/// (`sampling/createMessage`, `elicitation/create`: a person may be answering).
pub(crate) const MCP_CLIENT_ASK_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a browser may keep the MCP endpoint's answer to a loopback page's CORS
/// preflight: ten minutes of calls without asking again, and a changed rule is seen soon.
pub(crate) const MCP_CORS_MAX_AGE: Duration = Duration::from_secs(600);
/// File results up to this size are embedded in the result besides the link, so a client
/// that cannot read `file://` links still gets them.
pub(crate) const MAX_EMBEDDED_FILE_BYTES: u64 = 256 * 1024;

// ---------------------------------------------------------------- pins

/// Tool definitions `pins.json` may pin. A tool first seen past it cannot be pinned, so
/// it is held (fail closed) until pins are forgotten; a file holding more is refused.
pub(crate) const MAX_PINS: usize = 5000;
/// A pinned definition's canonical text: a longer one is pinned by its hash alone (a
/// change is still held; its diff cannot be shown).
pub(crate) const MAX_PINNED_TEXT_BYTES: usize = 16 * 1024;
/// The texts `pins.json` keeps, together: past it new pins keep their hash alone, so the
/// file stays a few MiB whatever servers declare. A larger file is refused when read.
pub(crate) const MAX_PINS_FILE_BYTES: usize = 8 * 1024 * 1024;
/// Definitions whose hash the pins remember between tool-map rebuilds (a provider renaming
/// its tools without end cannot grow it): past it, those no provider holds any more are
/// dropped, and if that is not enough, all.
pub(crate) const MAX_CACHED_PIN_HASHES: usize = 8192;
/// Held definitions `pins.list` keeps (with their text) for the user to review: past it a
/// changed or unpinnable tool is still held, but not listed until others are accepted.
pub(crate) const MAX_HELD_TOOLS: usize = 1000;

// ---------------------------------------------------------------- approvals

/// Rules one `policy.json` may hold (the benchmark runs 1,000 of them; see
/// `docs/approvals.md`).
pub(crate) const MAX_POLICY_RULES: usize = 10_000;
/// `policy.json`'s size: a larger file is refused (every call is then asked).
pub(crate) const MAX_POLICY_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// A rule's `id`.
pub(crate) const MAX_RULE_ID_BYTES: usize = 128;
/// Argument patterns of one rule or grant (each bounded as a hook rule's regex is).
pub(crate) const MAX_ARG_PATTERNS: usize = 16;
/// Remembered answers `grants.json` keeps: past it an answer still decides its call but
/// is not remembered until grants are revoked.
pub(crate) const MAX_GRANTS: usize = 10_000;
/// The longest `minutes` grant: a week (longer is `always`).
pub(crate) const MAX_GRANT_MINUTES: u64 = 7 * 24 * 60;
/// Calls waiting for the user at once: past it a call that needs an answer is denied at
/// once, saying so (an agent looping on a tool cannot pile up prompts without bound).
pub(crate) const MAX_WAITING_APPROVALS: usize = 256;
/// How long a call waits for the user's answer before it is denied (fail closed), unless
/// `policy.json` sets `approvalTimeoutSecs`.
pub(crate) const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest `approvalTimeoutSecs` `policy.json` may set.
pub(crate) const MAX_APPROVAL_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// While a call waits for the user, its caller gets a progress message this often (MCP
/// clients reset their request timeout on progress), each saying how to answer.
pub(crate) const APPROVAL_PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// Characters of a waiting call's arguments (compact JSON, secrets masked) the form asked
/// in an MCP client shows (`approvals/in_client.rs`): a client's dialog is small, and the
/// panel shows them all.
pub(crate) const MAX_CLIENT_PROMPT_ARGS_CHARS: usize = 300;
/// Characters of the whole text an approval asked in an MCP client or a session host shows
/// (tool, provider, arguments' summary, a rule's reason, who else can answer): a rule's
/// `reason` is the user's own text and otherwise unbounded.
pub(crate) const MAX_APPROVAL_PROMPT_CHARS: usize = 2000;
/// How long `tap_set_session_mode`, once the user approved, waits for the host's
/// `session.mode.result` before it says the host did not answer.
pub(crate) const SESSION_MODE_SET_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of a host's `session.mode.result` `message` the tool's result repeats.
pub(crate) const MAX_MODE_RESULT_MESSAGE_CHARS: usize = 500;

// ---------------------------------------------------------------- profiles

/// Profiles one `profiles.json` may hold.
pub(crate) const MAX_PROFILES: usize = 256;
/// A profile's name (`tap mcp --profile NAME`).
pub(crate) const MAX_PROFILE_NAME_LEN: usize = 64;
/// Entries in one of a profile's lists (servers, providers, tools, hideTools).
pub(crate) const MAX_PROFILE_PATTERNS: usize = 512;
/// Tool entries whose token count `profiles.list` remembers (by the entry's text); past
/// it the memory starts over.
pub(crate) const MAX_COUNTED_TOOL_ENTRIES: usize = 4096;
/// `tap_find_tools`' query, in characters (a longer one is refused by its schema).
pub(crate) const MAX_FIND_QUERY_LEN: usize = 500;
/// Tools one `tap_find_tools` answer holds at most (its `limit`).
pub(crate) const MAX_FIND_RESULTS: usize = 20;
/// Tools a `tap_find_tools` answer holds when the call gives no `limit`.
pub(crate) const DEFAULT_FIND_RESULTS: usize = 5;
/// One `tap_find_tools` answer's entries, in bytes of compact JSON: a match past it is
/// named in `omitted` without its entry, so one huge schema cannot flood the context.
pub(crate) const MAX_FIND_RESULT_BYTES: usize = 32 * 1024;
/// Client tokens of the MCP HTTP endpoint at once (each request's token is compared with
/// every one's hash).
pub(crate) const MAX_CLIENT_TOKENS: usize = 64;

// ---------------------------------------------------------------- clients

/// Sessions `clients.list` shows per client: its live one, then the latest of the history.
pub(crate) const CLIENT_RECENT_SESSIONS: usize = 5;

// ---------------------------------------------------------------- oauth

/// How long a started sign-in waits for the browser to come back to `/oauth/callback`:
/// long enough to type a password and pass a second factor; after it the answer is refused.
pub(crate) const SIGN_IN_WINDOW: Duration = Duration::from_secs(600);
/// Sign-ins waiting for a browser at once, every server together (each holds a PKCE
/// verifier and an authorization server's metadata).
pub(crate) const MAX_PENDING_SIGN_INS: usize = 32;
/// How long one step of a sign-in or sign-out may take at the authorization server
/// (discovery and registration together; the code exchange; a revocation).
pub(crate) const OAUTH_HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one call to the OS keyring may take (D-Bus, maybe an unlock prompt the user
/// answers) when a server's secrets or tokens are read or written.
pub(crate) const SECRETS_KEYRING_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects one request to a Streamable HTTP server may follow (on its own origin only).
pub(crate) const MCP_HTTP_MAX_REDIRECTS: usize = 10;

// ---------------------------------------------------------------- mcp_servers

/// MCP servers one file may configure.
pub(crate) const MAX_MCP_SERVERS: usize = 64;
/// A server's name (also its tools' default prefix).
pub(crate) const MAX_MCP_SERVER_NAME_LEN: usize = 32;
/// How long a server may take to answer `initialize` (a stdio server's start included:
/// `npx` fetching a package on first use takes seconds).
pub(crate) const MCP_INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to list its tools (every page).
pub(crate) const MCP_LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// stderr lines kept per server for `tap mcp logs` and the panel.
pub(crate) const MCP_STDERR_TAIL_LINES: usize = 50;
/// One message (one line) from a stdio server. A longer one ends the connection at once,
/// its calls in flight failing with `PAYLOAD_TOO_LARGE`, and the server is started again:
/// the same as rmcp's own line bound and its HTTP client's largest response, so a message
/// a server may send over HTTP may be sent over stdio too.
pub(crate) const MCP_SERVER_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How long a server whose connection closed is given to exit, so the user is told its
/// exit status rather than "connection closed".
pub(crate) const MCP_EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// Progress and log notifications from one server waiting for its runner; past this they
/// are dropped, so a chatty server cannot make the gateway hold a backlog.
pub(crate) const MCP_NOTES_QUEUE: usize = 256;
/// How long a legacy HTTP+SSE server may take to accept one message POSTed to it (its
/// answer comes on the stream; the POST only hands the message over).
pub(crate) const MCP_SSE_POST_TIMEOUT: Duration = Duration::from_secs(30);

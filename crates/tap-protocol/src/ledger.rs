//! What the gateway keeps (its SQLite ledger) and how the panel, the CLI and session hosts
//! browse it: stream events across session ends and restarts, traces (W3C trace context,
//! a tree of spans per unit of work), and the sessions and providers as they came and went.
//! `docs/history-and-traces.md` is the prose version.
//!
//! Times are microseconds since the Unix epoch (`…Us`): precise enough for a waterfall and
//! still exact as a JavaScript number (2^53 µs is 285 years).

use crate::provider::PushLevel;
use crate::JsonObject;
use serde::{Deserialize, Serialize};

/// How a span ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SpanStatus {
    /// The work succeeded.
    Ok,
    /// The work failed; `errorCode` and `message` say how.
    Error,
}

impl SpanStatus {
    /// The wire name (`ok`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
        }
    }
}

/// One unit of work: a tool call, a hook precheck, a push, a pairing request…
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// 32 lowercase hex digits (W3C `trace-id`).
    pub trace_id: String,
    /// 16 lowercase hex digits (W3C `parent-id` of its children).
    pub span_id: String,
    /// The span this one is part of; absent for a trace's root (or when the parent lives
    /// in another process, see `remoteParent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
    /// `true` when `parentSpanId` came from a caller's `traceparent` (a session host's
    /// span, not stored here).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    // Optional in TypeScript as on the wire: absent means false.
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub remote_parent: bool,
    /// What the work is: `tool.call`, `hook.precheck`, `gate.check`, `provider.call`…
    pub name: String,
    /// When it started.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub start_us: u64,
    /// How long it took.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_us: u64,
    /// How it ended.
    pub status: SpanStatus,
    /// The error code of a failed span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// What went wrong, or a short outcome note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `session.id`, `provider.name`, `tool.name`, `outcome`, …
    pub attributes: JsonObject,
    /// Things that happened during the span (`tool.progress`), oldest first.
    pub events: Vec<SpanEvent>,
}

/// Something that happened at one instant during a span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SpanEvent {
    /// `progress`, `retry`, …
    pub name: String,
    /// When.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_us: u64,
    /// Details (`message` for progress).
    pub attributes: JsonObject,
}

/// A trace as a list shows it: its root span and the totals of its tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct TraceSummary {
    /// The trace.
    pub trace_id: String,
    /// The root span's name (`tool.call`, `push`, `pairing.request`, `session`…).
    pub name: String,
    /// The session it ran in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The provider it reached, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The tool, for a tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The root's status: a trace fails when its root does.
    pub status: SpanStatus,
    /// The root's error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// When the root started.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub start_us: u64,
    /// The root's duration.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_us: u64,
    /// Spans stored for the trace.
    pub spans: u32,
}

/// Params of `traces.list`: every filter is optional; newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct TracesListParams {
    /// Only traces of this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only traces that reached this provider (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Only calls of this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Only calls from sessions of this client (`clientInfo.name` of an MCP client,
    /// `copilot-cli`, …: the name `activity.query`'s client rows carry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Only traces whose root span is named so (`tool.call`, `push`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Only traces that ended so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SpanStatus>,
    /// Only traces at least this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub min_duration_us: Option<u64>,
    /// Only traces that started at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub since_us: Option<u64>,
    /// Only traces that started before this time (paging back: the last page's
    /// `nextBefore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub before_us: Option<u64>,
    /// At most this many (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Result of `traces.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct TracesList {
    /// Newest first.
    pub traces: Vec<TraceSummary>,
    /// Pass as `beforeUs` for the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub next_before_us: Option<u64>,
    /// Whether the ledger is writing (else these are only what this run kept in memory).
    pub ledger: LedgerState,
}

/// Params of `traces.get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TraceRef {
    /// 32 hex digits.
    pub trace_id: String,
}

/// Result of `traces.get`: every stored span of one trace, by start time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// The trace.
    pub trace_id: String,
    /// Oldest first; a parent before its children when they start together.
    pub spans: Vec<Span>,
}

/// What became of one stream event: the stream filter's (and budget's) decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EventOutcome {
    /// Stored only.
    Keep,
    /// Stored and shown in the session's timeline.
    Surface,
    /// Stored and handed to the agent as a prompt.
    Inject,
    /// Dropped by the stream's filter: kept in the ledger only, for the record.
    Drop,
}

impl EventOutcome {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Surface => "surface",
            Self::Inject => "inject",
            Self::Drop => "drop",
        }
    }
}

impl From<PushLevel> for EventOutcome {
    fn from(level: PushLevel) -> Self {
        match level {
            PushLevel::Keep => Self::Keep,
            PushLevel::Surface => Self::Surface,
            PushLevel::Inject => Self::Inject,
        }
    }
}

/// Params of `events.list`: the ledger's stream events, newest first, every filter optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EventsListParams {
    /// Only this session's events (live or ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only this provider's events (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// `stream` (every provider's) or `stream@provider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Full-text search over the text and the metadata (SQLite FTS5 syntax; plain words
    /// match events holding all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// Only events with this outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<EventOutcome>,
    /// Only events at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub since_us: Option<u64>,
    /// Only events older than this one (paging back: the last page's `nextBefore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub before: Option<i64>,
    /// At most this many (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// One stream event as the ledger holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct LedgerEvent {
    /// Increasing with time; the paging cursor.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: i64,
    /// RFC 3339 time it was pushed.
    pub ts: String,
    /// The session.
    pub session_id: String,
    /// The session's label when it was pushed, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_label: Option<String>,
    /// The provider's name.
    pub provider: String,
    /// The stream.
    pub stream: String,
    /// What the stream's filter made of it.
    pub outcome: EventOutcome,
    /// The event text.
    pub text: String,
    /// The push's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// The trace of the push that carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// Result of `events.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct EventsPage {
    /// Newest first.
    pub events: Vec<LedgerEvent>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub next_before: Option<i64>,
    /// Whether the ledger is writing.
    pub ledger: LedgerState,
}

/// A session as the ledger remembers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// Its id.
    pub id: String,
    /// Its label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// RFC 3339 time it registered.
    pub started_at: String,
    /// RFC 3339 time it ended; absent while it runs (or when the gateway was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

/// A provider connection as the ledger remembers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ProviderRecord {
    /// Its provider id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The session it bound to (`all` for every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// RFC 3339 time it bound.
    pub connected_at: String,
    /// RFC 3339 time it went; absent while connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnected_at: Option<String>,
    /// Why it went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Result of `ledger.sessions`: sessions and providers, newest first, ended ones included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LedgerSessions {
    /// Newest first (at most 500).
    pub sessions: Vec<SessionRecord>,
    /// Newest first (at most 500).
    pub providers: Vec<ProviderRecord>,
    /// Whether the ledger is writing.
    pub ledger: LedgerState,
}

/// Whether the ledger is writing, and its counters (also in Diagnostics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct LedgerState {
    /// `true` while events and spans go to the database; `false` when it could not be
    /// opened or written, and history is in memory only.
    pub durable: bool,
    /// Why it is not durable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The database file.
    pub path: String,
    /// Records waiting for the writer now.
    pub queue_depth: u32,
    /// How many records the queue holds before producers wait.
    pub queue_capacity: u32,
    /// The estimated size of the records waiting (their text and fields).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub queue_bytes: u64,
    /// How many bytes of records the queue holds before producers wait (whichever of the
    /// two bounds comes first).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub queue_bytes_capacity: u64,
    /// How often a producer had to wait for room in the queue.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub waits: u64,
    /// Records written since the gateway started.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub written: u64,
    /// The database's size on disk.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
}

/// `stream` names in an [`EventsListParams`] split into stream and provider.
pub fn split_stream(select: &str) -> (&str, Option<&str>) {
    match select.split_once('@') {
        Some((s, p)) => (s, Some(p)),
        None => (select, None),
    }
}

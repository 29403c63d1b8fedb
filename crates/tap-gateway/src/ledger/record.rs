//! What the engine hands the ledger's writer: one row (or one change of a row) each. Built
//! on the hot paths, so they hold owned values and nothing is serialized here: JSON text
//! is made on the writer's thread.

use std::time::{Duration, SystemTime};
use tap_protocol::ledger::{EventOutcome, SpanStatus};
use tap_protocol::JsonObject;

/// One write for the ledger.
#[derive(Debug)]
pub(crate) enum Record {
    /// A stream event and what the filter made of it.
    Event(EventRow),
    /// Consecutive lines of one emitter run with one outcome, stored as one chunk row.
    Lines(Box<LinesRow>),
    /// A finished span.
    Span(Box<SpanRow>),
    /// A session registered.
    SessionStarted {
        id: String,
        label: Option<String>,
        cwd: Option<String>,
        at: SystemTime,
    },
    /// A session ended.
    SessionEnded {
        id: String,
        reason: String,
        at: SystemTime,
    },
    /// A provider bound to a session (or to every session).
    ProviderBound {
        id: String,
        name: String,
        session_id: Option<String>,
        at: SystemTime,
    },
    /// A provider's connection ended.
    ProviderGone {
        id: String,
        reason: String,
        at: SystemTime,
    },
    /// A pairing decision, for the audit trail.
    Pairing(PairingAudit),
    /// An emitter run, new or changed (its end).
    EmitterRun(Box<EmitterRunRow>),
    /// Apply retention now, as if the time were `now` (tests inject it; the gateway's
    /// timer sends the real time and the limits from the settings).
    Trim {
        now: SystemTime,
        max_age: Duration,
        max_bytes: u64,
    },
    /// Answered once every record sent before it is committed.
    Flush(std::sync::mpsc::SyncSender<()>),
    /// As `Flush`, after folding the write-ahead log into the file (at stop: the file alone
    /// then holds everything).
    Checkpoint(std::sync::mpsc::SyncSender<()>),
}

/// One stream event.
#[derive(Debug)]
pub(crate) struct EventRow {
    pub at: SystemTime,
    pub session_id: String,
    pub provider: String,
    pub stream: String,
    pub outcome: EventOutcome,
    pub text: String,
    pub metadata: Option<JsonObject>,
    /// The push's trace, when it has one (deliveries).
    pub trace_id: Option<String>,
}

/// Lines an emitter run stored together (one read of its pipe, one outcome): one `events`
/// row whose `text` is the lines joined by '\n' and whose ids are the lines' (see
/// `ledger::lines`). Writing a row per line would pace an emitter at the database's row
/// rate; a chunk costs one row for up to [`crate::limits::MAX_LINES_PER_ROW`] lines.
#[derive(Debug)]
pub(crate) struct LinesRow {
    pub at: SystemTime,
    pub session_id: String,
    pub provider: &'static str,
    pub stream: String,
    pub outcome: EventOutcome,
    /// The lines joined by '\n' (none holds one).
    pub text: String,
    pub lines: usize,
    /// The same for every line: the emitter, its run, the pipe.
    pub metadata: JsonObject,
    pub trace_id: Option<String>,
    /// Held until the row is written: bounds what one run has queued (its memory).
    pub _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// One emitter run, as `emitters.runs` shows it.
#[derive(Debug)]
pub(crate) struct EmitterRunRow {
    pub session_id: String,
    pub emitter: String,
    pub run: tap_protocol::emitters::EmitterRun,
}

/// Who did what to which pairing.
#[derive(Debug)]
pub(crate) struct PairingAudit {
    pub at: SystemTime,
    /// `requested`, `approved`, `denied`, `expired`, `revoked`, `withdrawn`.
    pub action: &'static str,
    pub pairing_id: String,
    pub name: Option<String>,
    pub origin: Option<String>,
    /// `panel`, `cli`, `tray`, `gateway` (expiry), `provider` (withdrawn).
    pub by: String,
}

/// A finished span, as `trace` hands it over. Ids are numbers here and hex in the database.
#[derive(Debug, Clone)]
pub(crate) struct SpanRow {
    pub trace_id: u128,
    pub span_id: u64,
    pub parent_id: Option<u64>,
    /// The parent is a caller's span (`traceparent`), not stored here.
    pub remote_parent: bool,
    pub name: &'static str,
    pub start: SystemTime,
    pub duration: Duration,
    pub status: SpanStatus,
    pub error_code: Option<String>,
    pub message: Option<String>,
    /// Indexed attributes, for the trace list's filters.
    pub session_id: Option<String>,
    pub provider: Option<String>,
    pub tool: Option<String>,
    pub attributes: Vec<(&'static str, Attr)>,
    pub events: Vec<SpanEventRow>,
}

/// A span event: something that happened at one instant (a progress message, a retry).
#[derive(Debug, Clone)]
pub(crate) struct SpanEventRow {
    pub name: &'static str,
    pub at: SystemTime,
    pub attributes: Vec<(&'static str, Attr)>,
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl From<&str> for Attr {
    fn from(s: &str) -> Self {
        Self::Str(s.to_string())
    }
}

impl From<String> for Attr {
    fn from(s: String) -> Self {
        Self::Str(s)
    }
}

impl From<i64> for Attr {
    fn from(n: i64) -> Self {
        Self::Int(n)
    }
}

impl From<usize> for Attr {
    fn from(n: usize) -> Self {
        Self::Int(n as i64)
    }
}

impl From<bool> for Attr {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl Attr {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Str(s) => serde_json::Value::String(s.clone()),
            Self::Int(n) => (*n).into(),
            Self::Bool(b) => (*b).into(),
        }
    }
}

/// Microseconds since the Unix epoch (0 for a time before it).
pub(crate) fn micros(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl Record {
    /// About what the record holds in memory while it waits for the writer: its own size
    /// and the text it owns. An estimate (allocator overhead is not counted), so that the
    /// queue can be bounded by bytes as well as by records: a provider's events may each be
    /// a whole message long.
    pub fn weight(&self) -> usize {
        let text = |s: &str| s.len();
        let opt = |s: &Option<String>| s.as_deref().map_or(0, str::len);
        let attrs = |a: &[(&'static str, Attr)]| {
            a.iter()
                .map(|(_, v)| ATTR_WEIGHT + if let Attr::Str(s) = v { s.len() } else { 0 })
                .sum::<usize>()
        };
        std::mem::size_of::<Self>()
            + match self {
                Self::Event(e) => {
                    text(&e.session_id)
                        + text(&e.provider)
                        + text(&e.stream)
                        + text(&e.text)
                        + e.metadata.as_ref().map_or(0, object_weight)
                        + opt(&e.trace_id)
                }
                Self::Lines(l) => {
                    std::mem::size_of::<LinesRow>()
                        + text(&l.session_id)
                        + text(&l.stream)
                        + text(&l.text)
                        + object_weight(&l.metadata)
                        + opt(&l.trace_id)
                }
                Self::Span(s) => {
                    std::mem::size_of::<SpanRow>()
                        + opt(&s.error_code)
                        + opt(&s.message)
                        + opt(&s.session_id)
                        + opt(&s.provider)
                        + opt(&s.tool)
                        + attrs(&s.attributes)
                        + s.events
                            .iter()
                            .map(|e| std::mem::size_of::<SpanEventRow>() + attrs(&e.attributes))
                            .sum::<usize>()
                }
                Self::SessionStarted { id, label, cwd, .. } => text(id) + opt(label) + opt(cwd),
                Self::SessionEnded { id, reason, .. } | Self::ProviderGone { id, reason, .. } => {
                    text(id) + text(reason)
                }
                Self::ProviderBound {
                    id,
                    name,
                    session_id,
                    ..
                } => text(id) + text(name) + opt(session_id),
                Self::Pairing(p) => {
                    text(&p.pairing_id) + opt(&p.name) + opt(&p.origin) + text(&p.by)
                }
                Self::EmitterRun(r) => {
                    std::mem::size_of::<EmitterRunRow>() + text(&r.session_id) + text(&r.emitter)
                }
                Self::Trim { .. } | Self::Flush(_) | Self::Checkpoint(_) => 0,
            }
    }
}

/// What one attribute or JSON value costs besides its text (the enum, a vector's slot).
const ATTR_WEIGHT: usize = 32;

fn object_weight(o: &JsonObject) -> usize {
    o.iter().map(|(k, v)| k.len() + value_weight(v)).sum()
}

fn value_weight(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    ATTR_WEIGHT
        + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(value_weight).sum(),
            Value::Object(o) => object_weight(o),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

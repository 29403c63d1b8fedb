//! What the panel, the CLI and session hosts browse: pages of events and traces, one
//! trace's spans, sessions and providers as they came and went. Blocking SQLite reads on
//! the read connection: callers run them on `spawn_blocking`.

use super::lines;
use super::search::Terms;
use super::Ledger;
use crate::limits::{
    DEFAULT_HISTORY_PAGE, HISTORY_SESSIONS_LISTED, MAX_HISTORY_PAGE, MAX_LINES_PER_ROW,
};
use rusqlite::{params, Row};
use std::time::{Duration, SystemTime};
use tap_protocol::approvals::{ApprovalDecision, ApprovalsHistory, ApprovalsHistoryParams};
use tap_protocol::ledger::{
    split_stream, EventOutcome, EventsListParams, EventsPage, LedgerEvent, LedgerSessions,
    ProviderRecord, SessionRecord, Span, SpanEvent, SpanStatus, Trace, TraceSummary, TracesList,
    TracesListParams,
};
use tap_protocol::JsonObject;

fn page(limit: Option<u32>) -> u32 {
    limit
        .unwrap_or(DEFAULT_HISTORY_PAGE)
        .clamp(1, MAX_HISTORY_PAGE)
}

/// A page of events, newest first. Chunk rows (an emitter's lines, `ledger::lines`) are
/// shown line by line; a page may end inside one, and the next begins where it ended.
pub(crate) fn events(ledger: &Ledger, p: &EventsListParams) -> rusqlite::Result<EventsPage> {
    events_within(ledger, p, &Within::default())
}

/// What an agent's reading tool (`tap_query_records`) narrows a page to beyond the
/// panel's filters: a set of sessions (those the calling session may see) and an end time.
#[derive(Default)]
pub(crate) struct Within {
    /// The sessions, as a JSON array of ids (`json_each` reads it in the query).
    pub sessions: Option<String>,
    /// Only records before this time (µs since the epoch).
    pub until_us: Option<i64>,
}

/// [`events`], within `w`.
pub(crate) fn events_within(
    ledger: &Ledger,
    p: &EventsListParams,
    w: &Within,
) -> rusqlite::Result<EventsPage> {
    let limit = page(p.limit);
    let (stream, provider_in_stream) = match p.stream.as_deref() {
        Some(s) => {
            let (s, p) = split_stream(s);
            (Some(s), p)
        }
        None => (None, None),
    };
    let provider = p.provider.as_deref().or(provider_in_stream);
    let search = p.search.as_deref().and_then(fts_query);
    let terms = p.search.as_deref().map(Terms::parse);
    let want = limit as usize + 1;
    let mut events = Vec::with_capacity(want);
    let mut before = p.before;
    ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT e.id, e.at_us, e.session_id, s.label, e.provider, e.stream, e.outcome, e.text,
                    e.metadata, e.trace_id, e.lines, e.indexed
             FROM events e LEFT JOIN sessions s ON s.id = e.session_id
             WHERE (?1 IS NULL OR e.session_id = ?1)
               AND (?2 IS NULL OR e.provider = ?2)
               AND (?3 IS NULL OR e.stream = ?3)
               AND (?4 IS NULL OR e.outcome = ?4)
               AND (?5 IS NULL OR e.at_us >= ?5)
               AND (?6 IS NULL OR (e.id < ?6 + ?9 AND e.id - e.lines + 1 < ?6))
               AND (?7 IS NULL OR e.indexed = 0
                    OR e.id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?7))
               AND (?10 IS NULL OR e.session_id IN (SELECT value FROM json_each(?10)))
               AND (?11 IS NULL OR e.at_us < ?11)
             ORDER BY e.id DESC LIMIT ?8",
        )?;
        // Each row gives at least one line, unless a search rules out all of a chunk's:
        // then another round of rows, until the page is full or the rows run out.
        loop {
            let rows = stmt
                .query_map(
                    params![
                        p.session_id,
                        provider,
                        stream,
                        p.outcome.map(|o| o.as_str()),
                        p.since_us.map(|t| t as i64),
                        before,
                        search,
                        want as i64,
                        MAX_LINES_PER_ROW as i64,
                        w.sessions,
                        w.until_us
                    ],
                    raw_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let exhausted = rows.len() < want;
            for row in rows {
                before = Some(row.id - row.lines.max(1) + 1);
                push_lines(&mut events, row, p.before, terms.as_ref(), want);
                if events.len() >= want {
                    return Ok(());
                }
            }
            if exhausted {
                return Ok(());
            }
        }
    })?;
    let (events, next_before) = more(events, limit, |e| e.id);
    Ok(EventsPage {
        events,
        next_before,
        ledger: ledger.state(),
    })
}

/// An `events` row as read, before it is shown as one event or many (a chunk).
struct RawRow {
    id: i64,
    lines: i64,
    indexed: bool,
    event: LedgerEvent,
    metadata_text: Option<String>,
}

fn raw_row(r: &Row<'_>) -> rusqlite::Result<RawRow> {
    let at: i64 = r.get(1)?;
    let outcome: String = r.get(6)?;
    let metadata: Option<String> = r.get(8)?;
    Ok(RawRow {
        id: r.get(0)?,
        lines: r.get(10)?,
        indexed: r.get::<_, i64>(11)? != 0,
        event: LedgerEvent {
            id: r.get(0)?,
            ts: crate::time::rfc3339(from_micros(at)),
            session_id: r.get(2)?,
            session_label: r.get(3)?,
            provider: r.get(4)?,
            stream: r.get(5)?,
            outcome: outcome_of(&outcome),
            text: r.get(7)?,
            metadata: metadata
                .as_deref()
                .and_then(|m| serde_json::from_str(m).ok()),
            trace_id: r.get(9)?,
        },
        metadata_text: metadata,
    })
}

/// Appends `row`'s events, newest first, up to `want` in all: a plain row as it is; a
/// chunk's lines below the page's cursor and, with a search, only those that match it
/// (the index, when it has the chunk, says only that one of its lines does).
fn push_lines(
    out: &mut Vec<LedgerEvent>,
    mut row: RawRow,
    before: Option<i64>,
    terms: Option<&Terms>,
    want: usize,
) {
    if row.lines <= 1 && row.indexed {
        out.push(row.event);
        return;
    }
    // Taken out so each line's event copies the row's fields, not the whole chunk.
    let text = std::mem::take(&mut row.event.text);
    for (id, line) in lines::expand(row.id, row.lines, &text) {
        if out.len() >= want {
            return;
        }
        if before.is_some_and(|b| id >= b) {
            continue;
        }
        if terms.is_some_and(|t| !t.matches(line, row.metadata_text.as_deref())) {
            continue;
        }
        out.push(LedgerEvent {
            id,
            text: line.to_string(),
            ..row.event.clone()
        });
    }
}

/// A page of traces (their root spans), newest first.
pub(crate) fn traces(ledger: &Ledger, p: &TracesListParams) -> rusqlite::Result<TracesList> {
    traces_within(ledger, p, None)
}

/// [`traces`] of `sessions` only (a JSON array of ids), when given.
pub(crate) fn traces_within(
    ledger: &Ledger,
    p: &TracesListParams,
    sessions: Option<&str>,
) -> rusqlite::Result<TracesList> {
    let limit = page(p.limit);
    let traces = ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT r.trace_id, r.name, r.session_id, r.provider, r.tool, r.status, r.error_code,
                    r.start_us, r.duration_us,
                    (SELECT count(*) FROM spans c WHERE c.trace_id = r.trace_id)
             FROM spans r
             WHERE r.root = 1
               AND (?1 IS NULL OR r.session_id = ?1)
               AND (?2 IS NULL OR r.provider = ?2)
               AND (?3 IS NULL OR r.tool = ?3)
               AND (?4 IS NULL OR r.name = ?4)
               AND (?5 IS NULL OR r.status = ?5)
               AND (?6 IS NULL OR r.duration_us >= ?6)
               AND (?7 IS NULL OR r.start_us >= ?7)
               AND (?8 IS NULL OR r.start_us < ?8)
               AND (?10 IS NULL OR r.session_id IN (SELECT value FROM json_each(?10)))
               AND (?11 IS NULL OR json_extract(r.attributes, '$.\"session.client\"') = ?11)
             ORDER BY r.start_us DESC LIMIT ?9",
        )?;
        let rows = stmt.query_map(
            params![
                p.session_id,
                p.provider,
                p.tool,
                p.name,
                p.status.map(|s| s.as_str()),
                p.min_duration_us.map(|d| d as i64),
                p.since_us.map(|t| t as i64),
                p.before_us.map(|t| t as i64),
                limit + 1,
                sessions,
                p.client
            ],
            |r| {
                let status: String = r.get(5)?;
                Ok(TraceSummary {
                    trace_id: r.get(0)?,
                    name: r.get(1)?,
                    session_id: r.get(2)?,
                    provider: r.get(3)?,
                    tool: r.get(4)?,
                    status: status_of(&status),
                    error_code: r.get(6)?,
                    start_us: r.get::<_, i64>(7)?.max(0) as u64,
                    duration_us: r.get::<_, i64>(8)?.max(0) as u64,
                    spans: r.get::<_, i64>(9)?.max(0) as u32,
                })
            },
        )?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    let (traces, next_before_us) = more(traces, limit, |t| t.start_us);
    Ok(TracesList {
        traces,
        next_before_us,
        ledger: ledger.state(),
    })
}

/// A page of approval decisions, newest first: tool calls whose root span says who decided
/// (`approval.by`), the defaults' silent allows left out (they are every other call). Read
/// from the spans as they are, so no second record can disagree with the trace; the scan
/// walks root spans newest first and stops at the page's end.
pub(crate) fn approvals_history(
    ledger: &Ledger,
    p: &ApprovalsHistoryParams,
) -> rusqlite::Result<ApprovalsHistory> {
    let limit = page(p.limit);
    let decisions = ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT trace_id, start_us, tool, provider, session_id, attributes
             FROM spans
             WHERE root = 1 AND name = 'tool.call'
               AND json_extract(attributes, '$.\"approval.by\"') IS NOT NULL
               AND json_extract(attributes, '$.\"approval.by\"') <> 'default'
               AND (?1 IS NULL OR start_us < ?1)
             ORDER BY start_us DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![p.before_us.map(|t| t as i64), limit + 1], |r| {
            let attributes: String = r.get(5)?;
            let a = serde_json::from_str::<JsonObject>(&attributes).unwrap_or_default();
            let text = |k: &str| a.get(k).and_then(|v| v.as_str()).map(str::to_string);
            Ok(ApprovalDecision {
                trace_id: r.get(0)?,
                start_us: r.get::<_, i64>(1)?.max(0) as u64,
                tool: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                provider: r.get(3)?,
                session_id: r.get(4)?,
                decision: text("approval.decision").unwrap_or_default(),
                by: text("approval.by").unwrap_or_default(),
                asked: text("approval.asked"),
                rule: text("approval.rule"),
                grant: text("approval.grant"),
                approval_id: text("approval.id"),
            })
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    let (decisions, next_before_us) = more(decisions, limit, |d| d.start_us);
    Ok(ApprovalsHistory {
        decisions,
        next_before_us,
        ledger: ledger.state(),
    })
}

/// Every span of one trace, oldest first; `None` when the ledger has none.
pub(crate) fn trace(ledger: &Ledger, trace_id: &str) -> rusqlite::Result<Option<Trace>> {
    let spans = ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT trace_id, span_id, parent_id, remote_parent, name, start_us, duration_us,
                    status, error_code, message, attributes, events, session_id, provider, tool
             FROM spans WHERE trace_id = ?1 ORDER BY start_us, row",
        )?;
        let rows = stmt.query_map(params![trace_id], span_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    Ok((!spans.is_empty()).then(|| Trace {
        trace_id: trace_id.to_string(),
        spans,
    }))
}

fn span_row(r: &Row<'_>) -> rusqlite::Result<Span> {
    let status: String = r.get(7)?;
    let attributes: String = r.get(10)?;
    let events: Option<String> = r.get(11)?;
    let mut attributes = serde_json::from_str::<JsonObject>(&attributes).unwrap_or_default();
    // The indexed columns are attributes too, as an OpenTelemetry viewer would show them.
    for (i, key) in [(12, "session.id"), (13, "provider.name"), (14, "tool.name")] {
        if let Some(v) = r.get::<_, Option<String>>(i)? {
            attributes.entry(key).or_insert(v.into());
        }
    }
    Ok(Span {
        trace_id: r.get(0)?,
        span_id: r.get(1)?,
        parent_span_id: r.get(2)?,
        remote_parent: r.get(3)?,
        name: r.get(4)?,
        start_us: r.get::<_, i64>(5)?.max(0) as u64,
        duration_us: r.get::<_, i64>(6)?.max(0) as u64,
        status: status_of(&status),
        error_code: r.get(8)?,
        message: r.get(9)?,
        attributes,
        events: events
            .and_then(|e| serde_json::from_str::<Vec<SpanEvent>>(&e).ok())
            .unwrap_or_default(),
    })
}

/// The newest sessions, as the Sessions page's history lists them.
const NEWEST_SESSIONS: &str =
    "SELECT id, label, cwd, started_us, ended_us, end_reason FROM sessions
     ORDER BY started_us DESC LIMIT ?1";

fn session_record(r: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        id: r.get(0)?,
        label: r.get(1)?,
        cwd: r.get(2)?,
        started_at: rfc3339_us(r.get(3)?),
        ended_at: r.get::<_, Option<i64>>(4)?.map(rfc3339_us),
        end_reason: r.get(5)?,
    })
}

/// The latest `per_label` sessions labelled with each of `labels`, newest first: an MCP
/// client's entry names its sessions after the client (the Clients page). Taken from the
/// newest [`HISTORY_SESSIONS_LISTED`] sessions, as the Sessions page's history is: one
/// bounded read for every client, however long the history.
pub(crate) fn labelled_sessions(
    ledger: &Ledger,
    labels: &[&str],
    per_label: usize,
) -> rusqlite::Result<Vec<SessionRecord>> {
    ledger.read(|c| {
        let mut stmt = c.prepare_cached(NEWEST_SESSIONS)?;
        let rows = stmt.query_map(params![HISTORY_SESSIONS_LISTED], session_record)?;
        let mut counts = vec![0usize; labels.len()];
        let mut out = Vec::new();
        for row in rows {
            let row = row?;
            let Some(at) = labels.iter().position(|l| row.label.as_deref() == Some(*l)) else {
                continue;
            };
            if counts[at] < per_label {
                counts[at] += 1;
                out.push(row);
            }
        }
        Ok(out)
    })
}

/// Sessions and providers, newest first, ended ones included.
pub(crate) fn sessions(ledger: &Ledger) -> rusqlite::Result<LedgerSessions> {
    let (sessions, providers) = ledger.read(|c| {
        let sessions = c
            .prepare_cached(NEWEST_SESSIONS)?
            .query_map(params![HISTORY_SESSIONS_LISTED], session_record)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let providers = c
            .prepare_cached(
                "SELECT id, name, session_id, connected_us, disconnected_us, reason FROM providers
                 ORDER BY connected_us DESC, row DESC LIMIT ?1",
            )?
            .query_map(params![HISTORY_SESSIONS_LISTED], |r| {
                Ok(ProviderRecord {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    session_id: r.get(2)?,
                    connected_at: rfc3339_us(r.get(3)?),
                    disconnected_at: r.get::<_, Option<i64>>(4)?.map(rfc3339_us),
                    reason: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((sessions, providers))
    })?;
    Ok(LedgerSessions {
        sessions,
        providers,
        ledger: ledger.state(),
    })
}

/// The rows of a page and the cursor of the next one: a page asks for one row more than
/// it shows, so it knows whether another page exists.
fn more<T, K>(mut rows: Vec<T>, limit: u32, key: impl Fn(&T) -> K) -> (Vec<T>, Option<K>) {
    if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        let next = rows.last().map(key);
        (rows, next)
    } else {
        (rows, None)
    }
}

/// Plain words to an FTS5 query: each word quoted (so `-`, `:` or `"` in it are text, not
/// syntax) and matched as a prefix; all of them must match. `None` when there is no word.
pub(crate) fn fts_query(text: &str) -> Option<String> {
    let terms: Vec<String> = text
        .split_whitespace()
        .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

fn outcome_of(s: &str) -> EventOutcome {
    match s {
        "surface" => EventOutcome::Surface,
        "inject" => EventOutcome::Inject,
        "drop" => EventOutcome::Drop,
        _ => EventOutcome::Keep,
    }
}

fn status_of(s: &str) -> SpanStatus {
    match s {
        "error" => SpanStatus::Error,
        _ => SpanStatus::Ok,
    }
}

fn from_micros(us: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_micros(us.max(0) as u64)
}

fn rfc3339_us(us: i64) -> String {
    crate::time::rfc3339(from_micros(us))
}

//! `tap_query_records`: the agent reads the history database (`crate::ledger`) — events,
//! traces and their spans, emitter runs — of its own session and of the earlier sessions
//! of its workspace (`ledger::records::visible_sessions`), never another workspace's.
//!
//! Every answer is bounded: at most `limit` records ([`MAX_RECORDS_PAGE`]), each text
//! field cut to [`MAX_RECORD_FIELD_CHARS`], and all of them together to
//! [`MAX_RECORDS_ANSWER_BYTES`] (the page then ends early and its cursor goes on from
//! there). `text` goes through the ledger's quoting (`read::fts_query`), so FTS5 syntax in
//! it is searched as plain words. A cursor is `<records>:<position>`; one that does not
//! parse, or is another kind's, is refused rather than read as "from the start".

use super::{Answer, Args};
use crate::error::Error;
use crate::ledger::read::{self, Within};
use crate::ledger::records::{self, RunsQuery};
use crate::limits::{
    DEFAULT_RECORDS_PAGE, MAX_RECORDS_ANSWER_BYTES, MAX_RECORDS_PAGE, MAX_RECORD_FIELD_CHARS,
};
use crate::state::Core;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tap_protocol::ledger::{EventOutcome, EventsListParams, SpanStatus, TracesListParams};
use tap_protocol::{ErrorCode, Json};

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidJson, message)
}

/// What to read.
#[derive(Clone, Copy, PartialEq)]
enum Records {
    Events,
    Traces,
    Spans,
    Runs,
}

impl Records {
    fn as_str(self) -> &'static str {
        match self {
            Records::Events => "events",
            Records::Traces => "traces",
            Records::Spans => "spans",
            Records::Runs => "runs",
        }
    }
}

/// A call's arguments, read and checked before anything is read.
struct Query {
    records: Records,
    session: Option<String>,
    current_only: bool,
    stream: Option<String>,
    provider: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    tool: Option<String>,
    text: Option<String>,
    since_us: Option<i64>,
    until_us: Option<i64>,
    trace_id: Option<String>,
    limit: u32,
    cursor: Option<String>,
}

pub(super) async fn query(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let cwd = core.state().live_session(session_id)?.info.cwd.clone();
    let q = parse(a, SystemTime::now())?;
    let core = core.clone();
    let session_id = session_id.to_string();
    tokio::task::spawn_blocking(move || run(&core, &session_id, cwd.as_deref(), &q))
        .await
        .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?
}

fn parse(a: &Args<'_>, now: SystemTime) -> Result<Query, Error> {
    let records = match a.text(&["records"]).as_deref() {
        None | Some("events") => Records::Events,
        Some("traces") => Records::Traces,
        Some("spans") => Records::Spans,
        Some("runs") => Records::Runs,
        Some(other) => return Err(invalid(format!("Unknown 'records' '{other}'"))),
    };
    let (session, current_only) = match a.text(&["session"]).as_deref() {
        None | Some("workspace") => (None, false),
        Some("current") => (None, true),
        Some(id) => (Some(id.to_string()), false),
    };
    let time = |key: &str| -> Result<Option<i64>, Error> {
        a.text(&[key])
            .map(|t| at(&t, now).ok_or_else(|| invalid(format!("'{key}' must be an RFC 3339 time or an age such as '15m' or '2h' (got '{t}')"))))
            .transpose()
    };
    let q = Query {
        records,
        session,
        current_only,
        stream: a.text(&["stream"]),
        provider: a.text(&["provider"]),
        kind: a.text(&["kind"]),
        status: a.text(&["status"]),
        tool: a.text(&["tool"]),
        text: a.text(&["text"]),
        since_us: time("since")?,
        until_us: time("until")?,
        trace_id: a.text(&["traceId"]),
        limit: a
            .uint(&["limit"])
            .map_or(DEFAULT_RECORDS_PAGE, |n| {
                n.min(MAX_RECORDS_PAGE as u64) as u32
            })
            .max(1),
        cursor: a.text(&["cursor"]),
    };
    // A filter the records cannot have is a mistake worth saying, not an empty answer.
    let allowed: &[&str] = match records {
        Records::Events => &["stream", "provider", "kind", "text"],
        Records::Traces => &["provider", "kind", "status", "tool"],
        Records::Spans => &["traceId"],
        Records::Runs => &["stream", "status"],
    };
    for key in [
        "stream", "provider", "kind", "status", "tool", "text", "traceId",
    ] {
        if a.json.get(key).is_some() && !allowed.contains(&key) {
            return Err(invalid(format!(
                "'{key}' does not apply to records '{}' (it takes {})",
                records.as_str(),
                allowed.join(", ")
            )));
        }
    }
    if records == Records::Spans && q.trace_id.is_none() {
        return Err(invalid("records 'spans' needs 'traceId'"));
    }
    Ok(q)
}

/// RFC 3339, or an age before `now` (`90s`, `15m`, `2h`, `3d`), as µs since the epoch.
fn at(text: &str, now: SystemTime) -> Option<i64> {
    let t = match humantime::parse_rfc3339_weak(text) {
        Ok(t) => t,
        Err(_) => now.checked_sub(humantime::parse_duration(text).ok()?)?,
    };
    i64::try_from(t.duration_since(UNIX_EPOCH).ok()?.as_micros()).ok()
}

fn run(core: &Core, session_id: &str, cwd: Option<&str>, q: &Query) -> Answer {
    let mut visible = records::visible_sessions(&core.ledger, session_id, cwd).map_err(db)?;
    if q.current_only {
        visible.truncate(1);
    }
    if let Some(one) = &q.session {
        if !visible.contains(one) {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("No session '{one}' among this session's and its workspace's earlier ones ('workspace' reads them all)"),
            ));
        }
        visible = vec![one.clone()];
    }
    let sessions = Json::from(visible.clone()).to_string();
    let mut page = Page::default();
    match q.records {
        Records::Events => events(core, q, &sessions, &mut page)?,
        Records::Traces => traces(core, q, &sessions, &mut page)?,
        Records::Spans => spans(core, q, &visible, &mut page)?,
        Records::Runs => runs(core, q, &sessions, &mut page)?,
    }
    let mut answer = json!({
        "records": q.records.as_str(),
        "sessionId": session_id,
        "sessionsSearched": visible.len(),
        "count": page.items.len(),
        "items": page.items,
    });
    if let Some(c) = page.next {
        answer["nextCursor"] = json!(format!("{}:{c}", q.records.as_str()));
    }
    if page.cut {
        answer["note"] = json!(format!("The page ended early: its records filled {} KiB. Call again with 'cursor' for the rest.", MAX_RECORDS_ANSWER_BYTES / 1024));
    }
    if !core.ledger.state().durable {
        answer["history"] =
            json!("kept in memory only: records of earlier gateway runs are not there");
    }
    Ok(answer)
}

fn db(e: rusqlite::Error) -> Error {
    Error::new(ErrorCode::Internal, format!("history database: {e}"))
}

/// The answer's records, within [`MAX_RECORDS_ANSWER_BYTES`].
#[derive(Default)]
struct Page {
    items: Vec<Json>,
    bytes: usize,
    next: Option<String>,
    /// The page ended at the byte bound rather than at `limit`.
    cut: bool,
}

impl Page {
    /// Adds `item` (clipped) unless the answer is full; whether it was added.
    fn push(&mut self, mut item: Json) -> bool {
        clip(&mut item);
        let len = item.to_string().len();
        if self.bytes + len > MAX_RECORDS_ANSWER_BYTES && !self.items.is_empty() {
            self.cut = true;
            return false;
        }
        self.bytes += len;
        self.items.push(item);
        true
    }
}

/// Cuts every string of `v` to [`MAX_RECORD_FIELD_CHARS`], marking `v` `truncated`; one
/// record still over the answer's bound (a span with thousands of attributes) keeps its
/// identity and says it was left out.
fn clip(v: &mut Json) {
    fn walk(v: &mut Json) -> bool {
        match v {
            Json::String(s) if s.chars().count() > MAX_RECORD_FIELD_CHARS => {
                let cut: String = s.chars().take(MAX_RECORD_FIELD_CHARS).collect();
                *s = format!("{cut}…");
                true
            }
            Json::Array(a) => a.iter_mut().fold(false, |t, x| walk(x) | t),
            Json::Object(o) => o.values_mut().fold(false, |t, x| walk(x) | t),
            _ => false,
        }
    }
    if walk(v) {
        v["truncated"] = json!(true);
    }
    if v.to_string().len() > MAX_RECORDS_ANSWER_BYTES {
        let keep = ["id", "traceId", "spanId", "sessionId", "name", "ts"];
        let mut stub = serde_json::Map::new();
        for k in keep {
            if let Some(x) = v.get(k) {
                stub.insert(k.into(), x.clone());
            }
        }
        stub.insert("omitted".into(), json!("too large to show"));
        *v = Json::Object(stub);
    }
}

fn cursor_number(q: &Query) -> Result<Option<i64>, Error> {
    let Some(c) = &q.cursor else { return Ok(None) };
    let rest = c
        .strip_prefix(q.records.as_str())
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| bad_cursor(c))?;
    rest.parse::<i64>().map(Some).map_err(|_| bad_cursor(c))
}

fn bad_cursor(c: &str) -> Error {
    invalid(format!(
        "'cursor' '{}' is not a cursor of these records: pass the 'nextCursor' of the previous answer, unchanged",
        c.chars().take(80).collect::<String>()
    ))
}

fn events(core: &Core, q: &Query, sessions: &str, page: &mut Page) -> Result<(), Error> {
    let outcome = match q.kind.as_deref() {
        None => None,
        Some("keep") => Some(EventOutcome::Keep),
        Some("surface") => Some(EventOutcome::Surface),
        Some("inject") => Some(EventOutcome::Inject),
        Some("drop") => Some(EventOutcome::Drop),
        Some(k) => {
            return Err(invalid(format!(
                "events' 'kind' is 'keep', 'surface', 'inject' or 'drop' (got '{k}')"
            )))
        }
    };
    let p = EventsListParams {
        provider: q.provider.clone(),
        stream: q.stream.clone(),
        search: q.text.clone(),
        outcome,
        since_us: q.since_us.map(|t| t.max(0) as u64),
        before: cursor_number(q)?,
        limit: Some(q.limit),
        ..Default::default()
    };
    let within = Within {
        sessions: Some(sessions.to_string()),
        until_us: q.until_us,
    };
    let got = read::events_within(&core.ledger, &p, &within).map_err(db)?;
    for e in &got.events {
        let mut item = json!({
            "id": e.id, "ts": e.ts, "sessionId": e.session_id, "stream": e.stream,
            "provider": e.provider, "kind": e.outcome, "text": e.text,
        });
        if let Some(m) = &e.metadata {
            item["metadata"] = json!(m);
        }
        if let Some(t) = &e.trace_id {
            item["traceId"] = json!(t);
        }
        if !page.push(item) {
            // Events older than the last one shown: the next page starts there.
            page.next = page
                .items
                .last()
                .and_then(|i| i["id"].as_i64())
                .map(|i| i.to_string());
            return Ok(());
        }
    }
    page.next = got.next_before.map(|b| b.to_string());
    Ok(())
}

fn traces(core: &Core, q: &Query, sessions: &str, page: &mut Page) -> Result<(), Error> {
    let status = match q.status.as_deref() {
        None => None,
        Some("ok") => Some(SpanStatus::Ok),
        Some("error") => Some(SpanStatus::Error),
        Some(s) => {
            return Err(invalid(format!(
                "traces' 'status' is 'ok' or 'error' (got '{s}')"
            )))
        }
    };
    let before = cursor_number(q)?;
    let until = match (before, q.until_us) {
        (Some(b), Some(u)) => Some(b.min(u)),
        (b, u) => b.or(u),
    };
    let p = TracesListParams {
        provider: q.provider.clone(),
        tool: q.tool.clone(),
        name: q.kind.clone(),
        status,
        since_us: q.since_us.map(|t| t.max(0) as u64),
        before_us: until.map(|t| t.max(0) as u64),
        limit: Some(q.limit),
        ..Default::default()
    };
    let got = read::traces_within(&core.ledger, &p, Some(sessions)).map_err(db)?;
    for t in &got.traces {
        let item = json!({
            "traceId": t.trace_id, "name": t.name, "sessionId": t.session_id,
            "provider": t.provider, "tool": t.tool, "status": t.status, "errorCode": t.error_code,
            "ts": crate::time::rfc3339(UNIX_EPOCH + Duration::from_micros(t.start_us)),
            "startUs": t.start_us, "durationMs": t.duration_us as f64 / 1000.0, "spans": t.spans,
        });
        if !page.push(item) {
            page.next = page
                .items
                .last()
                .and_then(|i| i["startUs"].as_u64())
                .map(|u| u.to_string());
            return Ok(());
        }
    }
    page.next = got.next_before_us.map(|u| u.to_string());
    Ok(())
}

fn spans(core: &Core, q: &Query, visible: &[String], page: &mut Page) -> Result<(), Error> {
    let trace_id = q.trace_id.as_deref().unwrap_or_default();
    let not_found = || {
        Error::new(
            ErrorCode::NotFound,
            format!("No trace '{trace_id}' of this session or its workspace's earlier ones"),
        )
    };
    let trace = read::trace(&core.ledger, trace_id)
        .map_err(db)?
        .ok_or_else(not_found)?;
    // A trace is the session's when one of its spans is (a tool call's children may not
    // say their session; its root does).
    let session_of = |s: &tap_protocol::ledger::Span| {
        s.attributes
            .get("session.id")
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    if !trace
        .spans
        .iter()
        .filter_map(session_of)
        .any(|s| visible.contains(&s))
    {
        return Err(not_found());
    }
    let from = cursor_number(q)?.unwrap_or(0).max(0) as usize;
    let end = (from + q.limit as usize).min(trace.spans.len());
    for (i, s) in trace.spans.iter().enumerate().take(end).skip(from) {
        let item = serde_json::to_value(s).unwrap_or_default();
        if !page.push(item) {
            page.next = Some(i.to_string());
            return Ok(());
        }
    }
    if end < trace.spans.len() {
        page.next = Some(end.to_string());
    }
    Ok(())
}

fn runs(core: &Core, q: &Query, sessions: &str, page: &mut Page) -> Result<(), Error> {
    let before = match &q.cursor {
        None => None,
        Some(c) => {
            let rest = c.strip_prefix("runs:").ok_or_else(|| bad_cursor(c))?;
            let (us, row) = rest.split_once('.').ok_or_else(|| bad_cursor(c))?;
            Some((
                us.parse::<i64>().map_err(|_| bad_cursor(c))?,
                row.parse::<i64>().map_err(|_| bad_cursor(c))?,
            ))
        }
    };
    let emitter = q
        .stream
        .as_deref()
        .map(crate::state::emitters::spec::normalise);
    let rows = records::runs(
        &core.ledger,
        &RunsQuery {
            sessions,
            emitter: emitter.as_deref(),
            status: q.status.as_deref(),
            since_us: q.since_us,
            until_us: q.until_us,
            before,
            limit: q.limit + 1,
        },
    )
    .map_err(db)?;
    let more = rows.len() > q.limit as usize;
    let mut last = None;
    for r in rows.iter().take(q.limit as usize) {
        let mut item = json!({"sessionId": r.session_id, "emitter": r.emitter});
        if let (Json::Object(o), Json::Object(run)) = (&mut item, &r.run) {
            o.extend(run.clone());
        }
        if !page.push(item) {
            page.next = last;
            return Ok(());
        }
        last = Some(format!("{}.{}", r.written_us, r.rowid));
    }
    if more {
        page.next = last;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_or_ages() {
        let now = UNIX_EPOCH + Duration::from_secs(10_000);
        assert_eq!(at("15m", now), Some((10_000 - 900) * 1_000_000));
        assert_eq!(at("1970-01-01T00:00:01Z", now), Some(1_000_000));
        assert_eq!(at("yesterday", now), None);
        assert_eq!(at("99999999d", now), None, "before the epoch");
    }

    #[test]
    fn a_huge_string_is_cut_and_marked() {
        let mut v = json!({"id": 1, "text": "x".repeat(MAX_RECORD_FIELD_CHARS * 3)});
        clip(&mut v);
        assert_eq!(v["truncated"], json!(true));
        assert_eq!(
            v["text"].as_str().unwrap().chars().count(),
            MAX_RECORD_FIELD_CHARS + 1
        );
        // Many fields, each under the cut, together over the answer's bound.
        let many: serde_json::Map<String, Json> = (0..100)
            .map(|i| (format!("k{i}"), json!("y".repeat(MAX_RECORD_FIELD_CHARS))))
            .collect();
        let mut v = json!({"id": 2, "attributes": many});
        clip(&mut v);
        assert_eq!(v, json!({"id": 2, "omitted": "too large to show"}));
    }
}

//! `tap streams history`: the ledger's stream events (`events.list` on the control plane),
//! of live and ended sessions, across gateway restarts, a page at a time.

use crate::output::{connect_control, control_fail, fail, note_ledger, print_json, print_table};
use std::path::Path;
use std::process::ExitCode;
use tap_client::{ControlClient, ControlClientError};
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::host::GatewayStatus;
use tap_protocol::ledger::{EventsListParams, EventsPage, LedgerEvent, LedgerSessions};

/// What `tap streams history` was asked for.
pub struct HistoryQuery {
    pub session: Option<String>,
    pub stream: Option<String>,
    pub search: Option<String>,
    pub before: Option<i64>,
    pub limit: Option<u32>,
}

/// `tap streams history [--session ID] [--stream S] [--search TEXT] [--before ID]
/// [--limit N] [--json]`.
pub async fn history(home: &Path, q: HistoryQuery, json: bool) -> ExitCode {
    let client = match connect_control(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let params = EventsListParams {
        session_id: q.session.clone(),
        stream: q.stream.clone(),
        search: q.search.clone(),
        before: q.before,
        limit: q.limit,
        ..Default::default()
    };
    let page: EventsPage = match client.call(ControlCall::EventsList(params)).await {
        Ok(p) => p,
        Err(e) => return control_fail(e),
    };
    note_ledger(&page.ledger);
    if page.events.is_empty() {
        if let Some(id) = &q.session {
            let narrowed = q.stream.is_some() || q.search.is_some() || q.before.is_some();
            if let Err(code) = require_session(&client, id, narrowed).await {
                return code;
            }
        }
    }
    if json {
        print_json(&page.events);
        if let Some(n) = page.next_before {
            eprintln!("tap: older events: --before {n}");
        }
        return ExitCode::SUCCESS;
    }
    if page.events.is_empty() {
        println!("{}", nothing_found(&q));
        return ExitCode::SUCCESS;
    }
    let n = page.events.len();
    println!(
        "{n} {}{}, newest first:",
        if n == 1 { "event" } else { "events" },
        q.session
            .as_ref()
            .map(|s| format!(" in session {s}"))
            .unwrap_or_default()
    );
    let one_session = q.session.is_some();
    let header = ["ID", "TIME", "SESSION", "STREAM", "OUTCOME", "TEXT"].map(String::from);
    let rows: Vec<[String; 6]> = page
        .events
        .iter()
        .map(|e| {
            [
                e.id.to_string(),
                e.ts.clone(),
                session_cell(e),
                format!("{}@{}", e.stream, e.provider),
                e.outcome.as_str().to_string(),
                one_line(&e.text),
            ]
        })
        .collect();
    if one_session {
        // The session is in the title: leave its column out.
        let drop_session = |r: &[String; 6]| {
            [
                r[0].clone(),
                r[1].clone(),
                r[3].clone(),
                r[4].clone(),
                r[5].clone(),
            ]
        };
        let rows: Vec<[String; 5]> = rows.iter().map(drop_session).collect();
        print_table(&drop_session(&header), &rows);
    } else {
        print_table(&header, &rows);
    }
    if let Some(n) = page.next_before {
        println!("Older events: add --before {n}");
    }
    ExitCode::SUCCESS
}

/// `No events of ci matching "x" in session s-1.`
pub fn nothing_found(q: &HistoryQuery) -> String {
    let mut s = "No events".to_string();
    if let Some(stream) = &q.stream {
        s.push_str(&format!(" of {stream}"));
    }
    if let Some(search) = &q.search {
        s.push_str(&format!(" matching \"{search}\""));
    }
    if let Some(id) = &q.session {
        s.push_str(&format!(" in session {id}"));
    }
    if let Some(before) = q.before {
        s.push_str(&format!(" before {before}"));
    }
    s.push('.');
    s
}

fn session_cell(e: &LedgerEvent) -> String {
    match &e.session_label {
        Some(label) => format!("{} ({label})", e.session_id),
        None => e.session_id.clone(),
    }
}

/// An event's text on one line of the table.
fn one_line(text: &str) -> String {
    text.trim_end().replace("\r\n", " ⏎ ").replace('\n', " ⏎ ")
}

/// A session that is neither running nor in the history is a mistake (`INVALID_SESSION`,
/// as the command said before it read the ledger); one that merely has no events (or
/// none that match) is not. `narrowed`: the empty answer came from a filtered query, so
/// whether the session has events at all is asked separately.
pub async fn require_session(
    client: &ControlClient,
    id: &str,
    narrowed: bool,
) -> Result<(), ExitCode> {
    let known = async {
        let status: GatewayStatus = client.call(ControlCall::Status(Empty {})).await?;
        if status.sessions.iter().any(|s| s.id == id) {
            return Ok(true);
        }
        let ledger: LedgerSessions = client.call(ControlCall::LedgerSessions(Empty {})).await?;
        if ledger.sessions.iter().any(|s| s.id == id) {
            return Ok(true);
        }
        if !narrowed {
            return Ok(false);
        }
        let any = EventsListParams {
            session_id: Some(id.to_string()),
            limit: Some(1),
            ..Default::default()
        };
        let page: EventsPage = client.call(ControlCall::EventsList(any)).await?;
        Ok::<_, ControlClientError>(!page.events.is_empty())
    };
    match known.await {
        Ok(true) => Ok(()),
        Ok(false) => Err(fail(
            "INVALID_SESSION",
            format!("No session '{id}': it is not running and the history has nothing of it"),
        )),
        Err(e) => Err(control_fail(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query() -> HistoryQuery {
        HistoryQuery {
            session: None,
            stream: None,
            search: None,
            before: None,
            limit: None,
        }
    }

    #[test]
    fn nothing_found_names_what_was_asked() {
        assert_eq!(nothing_found(&query()), "No events.");
        let q = HistoryQuery {
            session: Some("s-1".into()),
            ..query()
        };
        assert_eq!(nothing_found(&q), "No events in session s-1.");
        let q = HistoryQuery {
            session: Some("s-1".into()),
            stream: Some("ci@prov".into()),
            search: Some("failed build".into()),
            before: Some(12),
            limit: None,
        };
        assert_eq!(
            nothing_found(&q),
            "No events of ci@prov matching \"failed build\" in session s-1 before 12."
        );
    }

    #[test]
    fn multi_line_text_stays_on_its_row() {
        assert_eq!(one_line("a\nb\r\nc\n"), "a ⏎ b ⏎ c");
    }
}

//! Chunk rows: an emitter's lines stored many to a row, each line keeping an id of its own.
//!
//! - A chunk row's `id` is its newest line's; its `lines` - 1 older lines have the ids just
//!   below (`id - lines + 1` ..= `id`), which the writer reserves by inserting the row at
//!   `max(id) + lines`. Rows never overlap, so "newest first, before id N" stays one range
//!   scan of the primary key, and a page can end inside a chunk.
//! - Like pushed events, chunks go into full-text search after they are committed
//!   (`super::search`).

use super::record::{micros, LinesRow};
use rusqlite::{params, Transaction};

/// Inserts `row` as one chunk with the ids its lines need; not yet indexed.
pub(super) fn write(tx: &Transaction<'_>, row: &LinesRow) -> rusqlite::Result<()> {
    let metadata = serde_json::to_string(&row.metadata).unwrap_or_default();
    let lines = row.lines.max(1) as i64;
    tx.prepare_cached(
        "INSERT INTO events(id, at_us, session_id, provider, stream, outcome, text, metadata,
                            trace_id, lines, indexed)
         VALUES ((SELECT coalesce(max(id), 0) FROM events) + ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                 ?1, 0)",
    )?
    .execute(params![
        lines,
        micros(row.at),
        row.session_id,
        row.provider,
        row.stream,
        row.outcome.as_str(),
        row.text,
        metadata,
        row.trace_id
    ])
    .map(drop)
}

/// One chunk row's lines, newest first, with their ids: `(id, text)`.
pub(crate) fn expand(id: i64, lines: i64, text: &str) -> impl Iterator<Item = (i64, &str)> {
    let parts: Vec<&str> = if lines > 1 {
        text.split('\n').collect()
    } else {
        vec![text]
    };
    let first = id - parts.len() as i64 + 1;
    parts
        .into_iter()
        .enumerate()
        .rev()
        .map(move |(k, line)| (first + k as i64, line))
}

#[cfg(test)]
mod tests {
    use super::super::record::Record;
    use super::super::search::backlog;
    use super::super::{read, Ledger};
    use super::*;
    use std::time::SystemTime;
    use tap_protocol::ledger::{EventOutcome, EventsListParams};

    fn chunk(stream: &str, lines: &[&str]) -> Record {
        let metadata = serde_json::json!({"emitter": "e", "run": 1});
        Record::Lines(Box::new(LinesRow {
            at: SystemTime::now(),
            session_id: "s".into(),
            provider: "emitters",
            stream: stream.into(),
            outcome: EventOutcome::Keep,
            text: lines.join("\n"),
            lines: lines.len(),
            metadata: metadata.as_object().unwrap().clone(),
            trace_id: None,
            _permit: None,
        }))
    }

    fn single(text: &str) -> Record {
        crate::ledger::tests::event(text.into())
    }

    fn list(
        ledger: &Ledger,
        search: Option<&str>,
        before: Option<i64>,
        limit: u32,
    ) -> (Vec<(i64, String)>, Option<i64>) {
        let page = read::events(
            ledger,
            &EventsListParams {
                search: search.map(str::to_string),
                before,
                limit: Some(limit),
                ..Default::default()
            },
        )
        .unwrap();
        let events = page.events.into_iter().map(|e| (e.id, e.text)).collect();
        (events, page.next_before)
    }

    #[tokio::test]
    async fn chunks_read_back_line_by_line_with_ids_pages_and_search() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(dir.path());
        ledger.write(single("push one")).await;
        ledger
            .write(chunk("log", &["alpha 1", "beta 2", "alpha 3"]))
            .await;
        ledger.write(single("push\ntwo")).await;
        ledger.write(chunk("log", &["gamma 4"])).await;
        ledger.flush().await;

        let (all, next) = list(&ledger, None, None, 100);
        let texts: Vec<&str> = all.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [
                "gamma 4",
                "push\ntwo",
                "alpha 3",
                "beta 2",
                "alpha 1",
                "push one"
            ]
        );
        let ids: Vec<i64> = all.iter().map(|(id, _)| *id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] == w[1] + 1),
            "one id per line: {ids:?}"
        );
        assert_eq!(next, None);

        // A page ends inside a chunk; the next one begins right after.
        let (first, next) = list(&ledger, None, None, 3);
        assert_eq!(first.last().unwrap().1, "alpha 3");
        let (second, _) = list(&ledger, None, next, 2);
        let texts: Vec<&str> = second.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["beta 2", "alpha 1"]);

        // A search shows the lines that match, not the whole chunk (indexed by now: a
        // flush waits for the index).
        let (hits, _) = list(&ledger, Some("alpha"), None, 100);
        let texts: Vec<&str> = hits.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["alpha 3", "alpha 1"]);
        let (hits, _) = list(&ledger, Some("push"), None, 100);
        assert_eq!(hits.len(), 2);
        let indexed: i64 = ledger
            .read(|c| {
                c.query_row("SELECT count(*) FROM events WHERE indexed = 0", [], |r| {
                    r.get(0)
                })
            })
            .unwrap();
        assert_eq!(indexed, 0);
    }

    #[tokio::test]
    async fn rows_not_yet_indexed_are_found_and_indexed_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        {
            let ledger = Ledger::open(dir.path());
            ledger.write(chunk("log", &["needle here", "hay"])).await;
            ledger.write(single("a needle\nin a push")).await;
            ledger.flush().await;
        }
        // As if the gateway had stopped before indexing it.
        let db =
            rusqlite::Connection::open(dir.path().join(super::super::open::FILE_NAME)).unwrap();
        db.execute_batch(
            "INSERT INTO events_fts(events_fts, rowid, text, metadata)
                 SELECT 'delete', id, text, metadata FROM events;
             UPDATE events SET indexed = 0;",
        )
        .unwrap();
        assert!(backlog(&db));
        drop(db);
        let ledger = Ledger::open(dir.path());
        // Before the writer gets to them, a search reads their text: the push is one event,
        // newline and all; of the chunk, only the line that matches.
        let (hits, _) = list(&ledger, Some("needle"), None, 10);
        let texts: Vec<&str> = hits.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["a needle\nin a push", "needle here"]);
        ledger.flush().await;
        let (hits, _) = list(&ledger, Some("needle"), None, 10);
        assert_eq!(hits.len(), 2);
        let left: bool = ledger.read(|c| Ok(backlog(c))).unwrap();
        assert!(!left, "the next start indexed it");
    }

    #[test]
    fn a_chunk_expands_newest_first_with_the_ids_below_its_own() {
        let got: Vec<_> = expand(12, 3, "a\nb\nc").collect();
        assert_eq!(got, [(12, "c"), (11, "b"), (10, "a")]);
        let one: Vec<_> = expand(5, 1, "x\ny").collect();
        assert_eq!(one, [(5, "x\ny")], "a single event keeps its newlines");
    }
}

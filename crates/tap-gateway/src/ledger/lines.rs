//! Chunk rows: an emitter's lines stored many to a row, each line keeping an id of its own.
//!
//! - A chunk row's `id` is its newest line's; its `lines` - 1 older lines have the ids just
//!   below (`id - lines + 1` ..= `id`), which the writer reserves by inserting the row at
//!   `max(id) + lines`. Rows never overlap, so "newest first, before id N" stays one range
//!   scan of the primary key, and a page can end inside a chunk.
//! - Chunks, and pushed events too, go into full-text search after they are committed, in
//!   steps the writer takes while its queue is empty ([`index_step`]): indexing 900,000
//!   distinct words costs about 1.5 s of the writer's time, and FTS5 was about 80 % of a
//!   push's insert (docs/performance.md runs 8 and 29), which on the commit path would pace
//!   the emitter and the pushes. Until then a search scans those rows' text itself
//!   ([`Terms`]), so nothing is missed.

use super::record::{micros, LinesRow};
use rusqlite::{params, Connection, Transaction};

/// Lines one chunk row holds at most (the emitter's router cuts its chunks to it).
pub(crate) const MAX_LINES_PER_ROW: usize = 4096;

/// Lines indexed for search in one step of the writer, between looks at its queue…
const INDEX_STEP_LINES: i64 = 8192;

/// …and rows at most (a step of pushes, one line each, would otherwise read 8,192 ids).
const INDEX_STEP_ROWS: i64 = 1024;

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

/// Whether some chunk waits to be indexed (at start: a gateway stopped before it was).
pub(super) fn backlog(conn: &Connection) -> bool {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM events WHERE indexed = 0)",
        [],
        |r| r.get(0),
    )
    .unwrap_or(false)
}

/// Indexes the oldest waiting rows, about [`INDEX_STEP_LINES`] lines (or
/// [`INDEX_STEP_ROWS`] rows), in one transaction; whether more wait. The text goes from the
/// table to the index inside SQLite, one row at a time: a chunk may be megabytes.
pub(super) fn index_step(conn: &mut Connection) -> rusqlite::Result<bool> {
    let tx = conn.transaction()?;
    let mut done = 0i64;
    {
        let waiting = tx
            .prepare_cached("SELECT id, lines FROM events WHERE indexed = 0 ORDER BY id LIMIT ?1")?
            .query_map([INDEX_STEP_ROWS], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut index = tx.prepare_cached(
            "INSERT INTO events_fts(rowid, text, metadata)
             SELECT id, text, metadata FROM events WHERE id = ?1",
        )?;
        let mut mark = tx.prepare_cached("UPDATE events SET indexed = 1 WHERE id = ?1")?;
        for (id, lines) in waiting {
            index.execute([id])?;
            mark.execute([id])?;
            done += lines.max(1);
            if done >= INDEX_STEP_LINES {
                break;
            }
        }
    }
    tx.commit()?;
    Ok(done > 0 && backlog(conn))
}

/// A search's words, as the full-text query matches them: each word's tokens (runs of
/// letters and digits, lowercased) in a row, the last one as a prefix; every word must
/// match, in the line or in its metadata. Used on chunk rows, where the index (when it has
/// the row) only says that some line of the chunk matches.
pub(crate) struct Terms(Vec<Vec<String>>);

impl Terms {
    pub fn parse(search: &str) -> Self {
        Self(
            search
                .split_whitespace()
                .map(tokens)
                .filter(|t| !t.is_empty())
                .collect(),
        )
    }

    pub fn matches(&self, line: &str, metadata: Option<&str>) -> bool {
        let line = tokens(line);
        let meta = metadata.map(tokens).unwrap_or_default();
        self.0
            .iter()
            .all(|word| has_phrase(&line, word) || has_phrase(&meta, word))
    }
}

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn has_phrase(haystack: &[String], word: &[String]) -> bool {
    let Some((last, exact)) = word.split_last() else {
        return true;
    };
    haystack
        .windows(word.len())
        .any(|w| w[..exact.len()] == *exact && w[exact.len()].starts_with(last.as_str()))
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
    fn search_words_match_as_the_index_does() {
        let t = Terms::parse("Build fail");
        assert!(t.matches("build failed on linux", None));
        assert!(!t.matches("build ok", None));
        assert!(
            !t.matches("rebuild failed", None),
            "a word matches at a token's start"
        );
        assert!(Terms::parse("lint").matches("x", Some(r#"{"job":"lint"}"#)));
        assert!(Terms::parse("foo-ba").matches("a foo bar", None));
        assert!(!Terms::parse("foo-ba").matches("foo x bar", None));
    }

    #[test]
    fn a_chunk_expands_newest_first_with_the_ids_below_its_own() {
        let got: Vec<_> = expand(12, 3, "a\nb\nc").collect();
        assert_eq!(got, [(12, "c"), (11, "b"), (10, "a")]);
        let one: Vec<_> = expand(5, 1, "x\ny").collect();
        assert_eq!(one, [(5, "x\ny")], "a single event keeps its newlines");
    }
}

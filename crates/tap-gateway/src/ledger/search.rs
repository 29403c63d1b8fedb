//! Full-text search of events, chunk rows and pushes alike.
//!
//! - Events go into the index after they are committed, in steps the writer takes while
//!   its queue is empty ([`index_step`]): indexing 900,000 distinct words costs about 1.5 s
//!   of the writer's time, and FTS5 was about 80 % of a push's insert
//!   (docs/performance-log.md, runs 8 and 29), which on the commit path would pace the
//!   emitter and the pushes.
//! - Until then a search scans those rows' text itself ([`Terms`]), so nothing is missed.

use crate::limits::{INDEX_STEP_LINES, INDEX_STEP_ROWS};
use rusqlite::Connection;

/// Whether some event (a push or a chunk) waits to be indexed (at start: a gateway stopped
/// before it was).
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
/// match, in the line or in its metadata. Used on rows not indexed yet, and on chunk rows,
/// where the index (when it has the row) only says that some line of the chunk matches.
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

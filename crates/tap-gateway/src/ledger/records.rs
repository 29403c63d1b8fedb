//! What `tap_query_records` reads beyond the panel's pages (`read`): which sessions a
//! session may see (itself and the earlier sessions of its workspace), and emitter runs.
//! Blocking SQLite reads on the read connection, as `read`'s are.

use super::Ledger;
use crate::limits::MAX_WORKSPACE_SESSIONS;
use rusqlite::params;
use tap_protocol::Json;

/// The sessions `session_id` may read: itself, and the newest [`MAX_WORKSPACE_SESSIONS`]
/// sessions that started before it in the same working directory `cwd` (none without a
/// cwd). The same directory is the same string: hosts register absolute paths.
pub(crate) fn visible_sessions(
    ledger: &Ledger,
    session_id: &str,
    cwd: Option<&str>,
) -> rusqlite::Result<Vec<String>> {
    let mut ids = vec![session_id.to_string()];
    let Some(cwd) = cwd else {
        return Ok(ids);
    };
    ledger.read(|c| {
        // A session not written yet (its start is queued) started after every other.
        let mut stmt = c.prepare_cached(
            "SELECT id FROM sessions
             WHERE cwd = ?2 AND id <> ?1
               AND started_us <= coalesce((SELECT started_us FROM sessions WHERE id = ?1),
                                          9223372036854775807)
             ORDER BY started_us DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![session_id, cwd, MAX_WORKSPACE_SESSIONS], |r| {
            r.get::<_, String>(0)
        })?;
        for id in rows {
            ids.push(id?);
        }
        Ok(ids)
    })
}

/// One emitter run as the ledger keeps it.
pub(crate) struct RunRow {
    pub session_id: String,
    pub emitter: String,
    /// When the row was last written (its run started, or its status changed), µs.
    pub written_us: i64,
    pub rowid: i64,
    pub run: Json,
}

/// Filters of [`runs`].
pub(crate) struct RunsQuery<'a> {
    /// A JSON array of session ids.
    pub sessions: &'a str,
    pub emitter: Option<&'a str>,
    pub status: Option<&'a str>,
    pub since_us: Option<i64>,
    pub until_us: Option<i64>,
    /// The last row of the previous page: `(written_us, rowid)`.
    pub before: Option<(i64, i64)>,
    pub limit: u32,
}

/// Emitter runs, the most recently written first, up to `q.limit`.
pub(crate) fn runs(ledger: &Ledger, q: &RunsQuery<'_>) -> rusqlite::Result<Vec<RunRow>> {
    ledger.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT session_id, emitter, started_us, rowid, body FROM emitter_runs
             WHERE session_id IN (SELECT value FROM json_each(?1))
               AND (?2 IS NULL OR emitter = ?2)
               AND (?3 IS NULL OR status = ?3)
               AND (?4 IS NULL OR started_us >= ?4)
               AND (?5 IS NULL OR started_us < ?5)
               AND (?6 IS NULL OR started_us < ?6 OR (started_us = ?6 AND rowid < ?7))
             ORDER BY started_us DESC, rowid DESC LIMIT ?8",
        )?;
        let (before_us, before_row) = q.before.unzip();
        let rows = stmt.query_map(
            params![
                q.sessions, q.emitter, q.status, q.since_us, q.until_us, before_us, before_row,
                q.limit
            ],
            |r| {
                let body: String = r.get(4)?;
                Ok(RunRow {
                    session_id: r.get(0)?,
                    emitter: r.get(1)?,
                    written_us: r.get(2)?,
                    rowid: r.get(3)?,
                    run: serde_json::from_str(&body).unwrap_or(Json::Null),
                })
            },
        )?;
        rows.collect()
    })
}

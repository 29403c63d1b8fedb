//! Retention: history older than the age limit goes (the activity rollup's rows too, and
//! past their own limits), then the oldest events and spans go until the database is under
//! its size limit; freed pages go back to the file system.
//! Run by the writer when the gateway's timer (or a test, with its own `now`) asks.

use super::record::micros;
use crate::limits::{ACTIVITY_KEPT, ACTIVITY_MINUTES_KEPT, TRIM_STEP_ROWS};
use rusqlite::{params, Connection};
use std::time::{Duration, SystemTime};

/// What one trim did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Trimmed {
    pub removed: u64,
    /// The database's used size afterwards.
    pub bytes: u64,
}

/// Removes what is older than `max_age` (relative to `now`), then the oldest rows while the
/// used size is above `max_bytes`.
pub(crate) fn trim(
    conn: &Connection,
    now: SystemTime,
    max_age: Duration,
    max_bytes: u64,
) -> rusqlite::Result<Trimmed> {
    let cutoff = micros(now) - max_age.as_micros().min(i64::MAX as u128) as i64;
    let mut removed = 0u64;
    removed += conn.execute("DELETE FROM events WHERE at_us < ?1", params![cutoff])? as u64;
    removed += conn.execute("DELETE FROM spans WHERE start_us < ?1", params![cutoff])? as u64;
    removed += conn.execute(
        "DELETE FROM pairing_audit WHERE at_us < ?1",
        params![cutoff],
    )? as u64;
    removed += conn.execute(
        "DELETE FROM emitter_runs WHERE started_us < ?1",
        params![cutoff],
    )? as u64;
    // Ended sessions and gone providers only: a live one is still named by new rows.
    removed += conn.execute(
        "DELETE FROM sessions WHERE ended_us IS NOT NULL AND ended_us < ?1",
        params![cutoff],
    )? as u64;
    removed += conn.execute(
        "DELETE FROM providers WHERE disconnected_us IS NOT NULL AND disconnected_us < ?1",
        params![cutoff],
    )? as u64;
    rollup(conn, now, cutoff)?;
    while used_bytes(conn)? > max_bytes {
        // Oldest first, across both big tables: whichever holds the older rows loses them.
        let oldest_event: Option<i64> =
            conn.query_row("SELECT min(at_us) FROM events", [], |r| r.get(0))?;
        let oldest_span: Option<i64> =
            conn.query_row("SELECT min(start_us) FROM spans", [], |r| r.get(0))?;
        let spans_first = match (oldest_event, oldest_span) {
            (None, None) => break,
            (Some(e), Some(s)) => s < e,
            (None, Some(_)) => true,
            (Some(_), None) => false,
        };
        let table = if spans_first { "spans" } else { "events" };
        let rows: i64 =
            conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        let n = (rows / 20).clamp(1, TRIM_STEP_ROWS);
        let step = if spans_first {
            conn.execute(
                "DELETE FROM spans WHERE row IN (SELECT row FROM spans ORDER BY start_us LIMIT ?1)",
                params![n],
            )?
        } else {
            conn.execute(
                "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?1)",
                params![n],
            )?
        };
        if step == 0 {
            break;
        }
        removed += step as u64;
    }
    if removed > 0 {
        conn.execute_batch("PRAGMA incremental_vacuum;")?;
        // The write-ahead log holds the removed pages' last versions until a checkpoint:
        // fold it in and truncate it, so the space is given back on disk now. A reader in
        // the middle of a query can hold it back; the next trim tries again.
        let _: (i64, i64, i64) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    }
    Ok(Trimmed {
        removed,
        bytes: used_bytes(conn)?,
    })
}

/// The activity rollup (`rollup`) by the spans' age rule, and by its own limits: no
/// window reads minute rows older than [`ACTIVITY_MINUTES_KEPT`] nor half-hour rows older
/// than [`ACTIVITY_KEPT`]. A row goes once its whole period is past the cutoff. Not counted
/// in `removed`: its rows are a few bytes each, and the pages they free are taken again by
/// new rows, so they are no reason to vacuum. The size rule leaves the rollup alone: the
/// figures outlive the spans of the calls they count when the database is over its size.
fn rollup(conn: &Connection, now: SystemTime, cutoff_us: i64) -> rusqlite::Result<()> {
    let now_s = micros(now).div_euclid(1_000_000);
    let by_age = cutoff_us.div_euclid(1_000_000);
    for (period, kept) in [
        (super::rollup::MINUTE, ACTIVITY_MINUTES_KEPT),
        (super::rollup::HALF_HOUR, ACTIVITY_KEPT),
    ] {
        let cutoff = by_age.max(now_s - kept.as_secs() as i64);
        conn.prepare_cached("DELETE FROM call_rollup WHERE period = ?1 AND start_s <= ?2 - ?1")?
            .execute(params![period, cutoff])?;
    }
    Ok(())
}

/// Pages in use (not on the free list) times the page size.
pub(crate) fn used_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(((pages - free).max(0) * size) as u64)
}

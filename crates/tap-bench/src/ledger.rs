//! S3d: what the ledger can take. One provider pushes `n` `keep` events (distinct text,
//! some metadata) as fast as a gateway with `History::File` accepts them; the bench then
//! waits for `Gateway::flush_history`. The rate is pushes/s from the first push to the
//! flush. Afterwards the ledger's `events` table must hold exactly `n` rows: nothing lost.
//!
//! The baseline, measured in the same run: the same rows bulk-inserted with rusqlite into a
//! fresh database with the ledger's own schema (`tap_gateway::ledger_schema_sql`, not a
//! copy) and settings (incremental auto-vacuum, WAL, `synchronous = NORMAL`), 1024 rows
//! per transaction like the ledger's writer. It does no socket, JSON or queue work, and its
//! metadata is serialized before the clock starts: it is the floor of the insert itself.

use crate::provider;
use crate::rss;
use crate::scenarios::{self, Rig};
use crate::stats::rate;
use crate::tempdir::TempDir;
use rusqlite::{params, Connection, OpenFlags};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Instant, SystemTime};
use tap_gateway::History;

/// Rows per transaction in the baseline: the ledger writer's batch (`LEDGER_WRITE_BATCH`).
const BATCH: usize = 1024;

/// The provider (and its stream) that pushes in S3d and in the baseline's rows.
const PUSHER: &str = "ledger-pusher";

/// One S3d run.
pub struct LedgerRun {
    /// Pushes/s, first push to flush done.
    pub rate: f64,
    /// Rows in the ledger's `events` table afterwards.
    pub rows: u64,
    /// How often the connection had to wait for room in the ledger's queue.
    pub waits: u64,
    /// The bench process's resident set (the gateway runs in it) when the pushes started,
    /// and its peak during them, in KiB (`None` when the peak cannot be reset).
    pub rss: Option<(u64, u64)>,
}

/// The `i`th event of run `run`: distinct text, and metadata like a CI provider's.
fn event(run: usize, i: usize) -> (String, Value) {
    let job = i % 13;
    (
        format!(
            "run {run}: step {i} of job lint-{job} finished in {} ms",
            (i * 7919) % 5000
        ),
        json!({"job": format!("lint-{job}"), "seq": i, "ok": i % 10 != 0}),
    )
}

/// S3d against a fresh gateway (its own temp `TAP_HOME`, history in the file).
pub async fn s3d(n: usize, run: usize) -> Result<LedgerRun, String> {
    let rig = Rig::start(History::File).await?;
    let result = pushes_into(&rig, n, run).await;
    rig.stop().await;
    result
}

async fn pushes_into(rig: &Rig, n: usize, run: usize) -> Result<LedgerRun, String> {
    let gw = rig.gateway();
    let ledger = gw.diagnostics().ledger;
    if !ledger.durable {
        return Err(format!(
            "the ledger is not on its file: {}",
            ledger.reason.unwrap_or_default()
        ));
    }
    let session = rig.session("s3d").await?;
    let mut ws = provider::bind(&rig.url(), &rig.token(), PUSHER, &session, &[]).await?;
    let frames: Vec<String> = (0..n)
        .map(|i| {
            let (text, metadata) = event(run, i);
            json!({"type": "push", "level": "keep", "event": text, "metadata": metadata})
                .to_string()
        })
        .collect();
    let want = event(run, n - 1).0;
    // The session's and provider's own records are committed before the clock starts.
    gw.flush_history().await;
    let peak = PeakRss::reset();
    let start = Instant::now();
    scenarios::push_and_sync(&mut ws, PUSHER, frames, &want).await?;
    gw.flush_history().await;
    let elapsed = start.elapsed();
    let rss = peak.read();
    let _ = ws.close(None).await;
    let waits = gw.diagnostics().ledger.waits;
    let path = std::path::PathBuf::from(&ledger.path);
    let rows = tokio::task::spawn_blocking(move || count_events(&path))
        .await
        .map_err(|e| format!("counting rows: {e}"))??;
    Ok(LedgerRun {
        rate: rate(n, elapsed),
        rows,
        waits,
        rss,
    })
}

/// Rows in the `events` table of the database at `path`, read on a connection of our own.
fn count_events(path: &Path) -> Result<u64, String> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    conn.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))
        .map(|c| c as u64)
        .map_err(|e| format!("counting {}: {e}", path.display()))
}

/// The baseline: the same `n` rows into a fresh database, 1024 per transaction; rows/s.
pub async fn bare_insert(n: usize, run: usize) -> Result<f64, String> {
    tokio::task::spawn_blocking(move || bare_insert_blocking(n, run))
        .await
        .map_err(|e| format!("bare insert: {e}"))?
}

fn bare_insert_blocking(n: usize, run: usize) -> Result<f64, String> {
    let sql = |e: rusqlite::Error| format!("bare SQLite: {e}");
    let dir = TempDir::new("sqlite")?;
    let mut conn = Connection::open(dir.path().join("bare.sqlite3")).map_err(sql)?;
    // The ledger's settings (tap-gateway's `ledger/open.rs`): auto-vacuum is chosen before
    // the first table exists, then WAL, and NORMAL sync (no fsync per commit).
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
        .map_err(sql)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("bare SQLite: journal mode stays '{mode}'"));
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL;")
        .map_err(sql)?;
    for ddl in tap_gateway::ledger_schema_sql() {
        let tx = conn.transaction().map_err(sql)?;
        tx.execute_batch(ddl).map_err(sql)?;
        tx.commit().map_err(sql)?;
    }
    let rows: Vec<(String, String)> = (0..n)
        .map(|i| {
            let (text, metadata) = event(run, i);
            (text, metadata.to_string())
        })
        .collect();
    // A session id shaped like the gateway's.
    let session = "s-5f0e8a4c2b1d9e77";
    let start = Instant::now();
    for chunk in rows.chunks(BATCH) {
        let tx = conn.transaction().map_err(sql)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO events(at_us, session_id, provider, stream, outcome, text, metadata, trace_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql)?;
            for (text, metadata) in chunk {
                insert
                    .execute(params![
                        now_us(),
                        session,
                        PUSHER,
                        PUSHER,
                        "keep",
                        text,
                        metadata,
                        None::<String>
                    ])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
    }
    let elapsed = start.elapsed();
    let count: i64 = conn
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .map_err(sql)?;
    if count as usize != n {
        return Err(format!("bare SQLite holds {count} rows, expected {n}"));
    }
    Ok(rate(n, elapsed))
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The process's peak resident set over a stretch of the run: `/proc/self/clear_refs`
/// (`5`) resets `VmHWM` to the current RSS, so `VmHWM` afterwards is the peak since.
pub(crate) struct PeakRss {
    start: Option<u64>,
}

impl PeakRss {
    pub(crate) fn reset() -> Self {
        let pid = std::process::id();
        let start = std::fs::write("/proc/self/clear_refs", "5")
            .ok()
            .and_then(|()| rss::vm_kib(pid, "VmRSS").ok());
        Self { start }
    }

    /// `(at the reset, peak since)`, in KiB.
    pub(crate) fn read(&self) -> Option<(u64, u64)> {
        let start = self.start?;
        let pid = std::process::id();
        let now = rss::vm_kib(pid, "VmRSS").ok()?;
        // The kernel updates the high-water mark lazily; it can trail the current RSS.
        let peak = rss::vm_kib(pid, "VmHWM").ok()?.max(now).max(start);
        Some((start, peak))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_insert_applies_the_ledger_schema_and_keeps_every_row() {
        assert!(bare_insert_blocking(2 * BATCH + 5, 0).unwrap() > 0.0);
    }

    #[test]
    fn events_are_distinct() {
        let texts: std::collections::HashSet<String> = (0..1000).map(|i| event(1, i).0).collect();
        assert_eq!(texts.len(), 1000);
    }
}

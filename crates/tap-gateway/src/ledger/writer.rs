//! The writer: one OS thread that owns the write connection and commits whatever the
//! queue holds as one transaction, so a flood of pushes costs one commit per batch, not
//! one per row. Socket tasks never touch the disk; they only queue.
//!
//! A write that fails (disk full, the file made read-only, corruption found) does not stop
//! anything: the writer moves to a database in memory, writes the failed batch there, and
//! the gateway carries on with this run's history, saying why (log, Diagnostics).

use super::open::open_memory;
use super::record::{micros, Attr, EventRow, PairingAudit, Record, SpanRow};
use super::{lines, retention, search, Queued, Shared};
use crate::ids::Hex;
use crate::limits::{
    GROUP_COMMIT_WINDOW, INDEX_AT_THE_LATEST, INDEX_WHEN_IDLE_FOR, LEDGER_WRITE_BATCH,
};
use rusqlite::{params, Connection, Transaction};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Runs until every sender is gone.
pub(crate) fn run(
    mut conn: Arc<Mutex<Connection>>,
    mut rx: mpsc::Receiver<Queued>,
    shared: Arc<Shared>,
) {
    let mut batch = Vec::with_capacity(LEDGER_WRITE_BATCH);
    // Chunks and events wait to be indexed for search (`search`): done once the queue has
    // been empty for a moment, so a burst of lines or pushes is committed at the rows' pace
    // and indexed after it; under a flood that lasts, in steps between batches; always
    // before a flush.
    let mut backlog =
        search::backlog(&conn.lock().unwrap_or_else(|e| e.into_inner())).then(Instant::now);
    // Only to wait for the queue with a timeout; the writer does all its work in this
    // thread, outside any async runtime.
    let clock = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a timer for the ledger's writer");
    let mut indexing = false;
    loop {
        let first = match backlog {
            Some(since) => {
                let wait = if indexing || since.elapsed() >= INDEX_AT_THE_LATEST {
                    Duration::ZERO
                } else {
                    INDEX_WHEN_IDLE_FOR
                };
                match clock.block_on(async { tokio::time::timeout(wait, rx.recv()).await }) {
                    Ok(Some(r)) => {
                        indexing = false;
                        r
                    }
                    Ok(None) => break,
                    Err(_) => {
                        // Step after step until a record comes or nothing is left.
                        indexing = index_step(&conn);
                        if !indexing {
                            backlog = None;
                        }
                        continue;
                    }
                }
            }
            None => match rx.blocking_recv() {
                Some(r) => r,
                None => break,
            },
        };
        let mut weight = first.weight as usize;
        batch.push(first.record);
        while batch.len() < LEDGER_WRITE_BATCH {
            match rx.try_recv() {
                Ok(q) => {
                    weight += q.weight as usize;
                    batch.push(q.record);
                }
                Err(_) => break,
            }
        }
        shared
            .depth
            .fetch_sub(batch.len() as u64, Ordering::Relaxed);
        let rollup = shared.rollup.load(Ordering::Relaxed);
        let result = {
            let mut c = conn.lock().unwrap_or_else(|e| e.into_inner());
            write_batch(&mut c, &batch, rollup)
        };
        if let Err(e) = result {
            let reason = format!("writing history failed: {e}");
            tracing::error!(error = %reason, "history continues in memory only");
            let memory = open_memory();
            conn = Arc::new(Mutex::new(memory.writer));
            shared.set_reader(conn.clone());
            shared.set_memory_only(reason);
            let mut c = conn.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = write_batch(&mut c, &batch, rollup) {
                tracing::error!(error = %e, "writing history to memory failed; a batch is lost");
            }
        }
        let written = batch
            .iter()
            .filter(|r| {
                !matches!(
                    r,
                    Record::Flush(_) | Record::Checkpoint(_) | Record::Trim { .. }
                )
            })
            .count();
        shared.written.fetch_add(written as u64, Ordering::Relaxed);
        // The batch is committed: its bytes no longer wait.
        shared.bytes.add_permits(weight);
        if backlog.is_none()
            && batch
                .iter()
                .any(|r| matches!(r, Record::Lines(_) | Record::Event(_)))
        {
            backlog = Some(Instant::now());
        }
        for record in batch.drain(..) {
            match record {
                Record::Flush(done) => {
                    while backlog.is_some() && index_step(&conn) {}
                    backlog = None;
                    let _ = done.send(());
                }
                Record::Checkpoint(done) => {
                    while backlog.is_some() && index_step(&conn) {}
                    backlog = None;
                    let c = conn.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);") {
                        tracing::warn!(error = %e, "folding the history's log into its file failed");
                    }
                    let _ = done.send(());
                }
                Record::Trim {
                    now,
                    max_age,
                    max_bytes,
                } => {
                    let c = conn.lock().unwrap_or_else(|e| e.into_inner());
                    match retention::trim(&c, now, max_age, max_bytes) {
                        Ok(t) if t.removed > 0 => {
                            tracing::info!(removed = t.removed, bytes = t.bytes, "history trimmed")
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "trimming history failed"),
                    }
                }
                _ => {}
            }
        }
        if rx.is_empty() {
            std::thread::sleep(GROUP_COMMIT_WINDOW);
        }
    }
}

/// One step of indexing chunks for search; whether more wait. A failure is logged and
/// ends the backlog for this run (the next start finds the rows and tries again).
fn index_step(conn: &Mutex<Connection>) -> bool {
    let mut c = conn.lock().unwrap_or_else(|e| e.into_inner());
    search::index_step(&mut c).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "indexing history for search failed");
        false
    })
}

/// Writes every row of `batch` in one transaction, and (`rollup`) adds its tool calls to
/// the activity rollup in the same one: the figures never count a call the spans lack.
pub(super) fn write_batch(
    conn: &mut Connection,
    batch: &[Record],
    rollup: bool,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for record in batch {
        write(&tx, record)?;
    }
    if rollup {
        super::rollup::add(&tx, batch)?;
    }
    tx.commit()
}

fn write(tx: &Transaction<'_>, record: &Record) -> rusqlite::Result<()> {
    match record {
        Record::Event(e) => event(tx, e),
        Record::Lines(l) => lines::write(tx, l),
        Record::Span(s) => span(tx, s),
        Record::SessionStarted { id, label, cwd, at } => tx
            .prepare_cached(
                "INSERT INTO sessions(id, label, cwd, started_us) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET label = ?2, cwd = ?3, ended_us = NULL, end_reason = NULL",
            )?
            .execute(params![id, label, cwd, micros(*at)])
            .map(drop),
        Record::SessionEnded { id, reason, at } => tx
            .prepare_cached("UPDATE sessions SET ended_us = ?2, end_reason = ?3 WHERE id = ?1")?
            .execute(params![id, micros(*at), reason])
            .map(drop),
        Record::ProviderBound { id, name, session_id, at } => tx
            .prepare_cached(
                "INSERT INTO providers(id, name, session_id, connected_us) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![id, name, session_id, micros(*at)])
            .map(drop),
        Record::ProviderGone { id, reason, at } => tx
            .prepare_cached(
                "UPDATE providers SET disconnected_us = ?2, reason = ?3
                 WHERE row = (SELECT max(row) FROM providers WHERE id = ?1) AND disconnected_us IS NULL",
            )?
            .execute(params![id, micros(*at), reason])
            .map(drop),
        Record::Pairing(p) => pairing(tx, p),
        Record::EmitterRun(r) => tx
            .prepare_cached(
                "INSERT OR REPLACE INTO emitter_runs(session_id, emitter, run, started_us, status, trace_id, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                r.session_id,
                r.emitter,
                r.run.run,
                micros(std::time::SystemTime::now()),
                serde_json::to_value(r.run.status).ok().and_then(|v| v.as_str().map(str::to_string)),
                r.run.trace_id,
                serde_json::to_string(&r.run).unwrap_or_default()
            ])
            .map(drop),
        Record::Trim { .. } | Record::Flush(_) | Record::Checkpoint(_) => Ok(()),
    }
}

/// An event, indexed for search later (`search::index_step`), off the pushes' path.
fn event(tx: &Transaction<'_>, e: &EventRow) -> rusqlite::Result<()> {
    let metadata = e
        .metadata
        .as_ref()
        .map(|m| serde_json::to_string(m).unwrap_or_default());
    tx.prepare_cached(
        "INSERT INTO events(at_us, session_id, provider, stream, outcome, text, metadata, trace_id,
                            indexed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)",
    )?
    .execute(params![
        micros(e.at),
        e.session_id,
        e.provider,
        e.stream,
        e.outcome.as_str(),
        e.text,
        metadata,
        e.trace_id
    ])
    .map(drop)
}

fn span(tx: &Transaction<'_>, s: &SpanRow) -> rusqlite::Result<()> {
    let attributes = attrs_json(&s.attributes);
    let events = (!s.events.is_empty()).then(|| {
        let list: Vec<serde_json::Value> = s
            .events
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name,
                    "atUs": micros(e.at),
                    "attributes": attrs_value(&e.attributes),
                })
            })
            .collect();
        serde_json::Value::Array(list).to_string()
    });
    let root = s.parent_id.is_none() || s.remote_parent;
    let trace_id = Hex::<32>::new(s.trace_id);
    let span_id = Hex::<16>::new(s.span_id.into());
    let parent_id = s.parent_id.map(|p| Hex::<16>::new(p.into()));
    tx.prepare_cached(
        "INSERT INTO spans(trace_id, span_id, parent_id, remote_parent, root, name, start_us,
            duration_us, status, error_code, message, session_id, provider, tool, attributes, events)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        trace_id.as_str(),
        span_id.as_str(),
        parent_id.as_ref().map(Hex::as_str),
        s.remote_parent,
        root,
        s.name,
        micros(s.start),
        s.duration.as_micros() as i64,
        s.status.as_str(),
        s.error_code,
        s.message,
        s.session_id,
        s.provider,
        s.tool,
        attributes,
        events
    ])
    .map(drop)
}

fn pairing(tx: &Transaction<'_>, p: &PairingAudit) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO pairing_audit(at_us, action, pairing_id, name, origin, by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        micros(p.at),
        p.action,
        p.pairing_id,
        p.name,
        p.origin,
        p.by
    ])
    .map(drop)
}

fn attrs_value(attrs: &[(&'static str, Attr)]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = attrs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.to_json()))
        .collect();
    serde_json::Value::Object(map)
}

fn attrs_json(attrs: &[(&'static str, Attr)]) -> String {
    attrs_value(attrs).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::schema::migrate;
    use crate::ledger::tests::event;

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// A push is committed without its full-text entry (FTS5 was most of its insert), and
    /// the writer's next index step adds it.
    #[test]
    fn a_push_is_committed_first_and_indexed_for_search_in_a_later_step() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        write_batch(&mut conn, &[event("needle in\na push".into())], true).unwrap();
        let matches = "SELECT count(*) FROM events_fts WHERE events_fts MATCH 'needle'";
        assert_eq!(
            count(&conn, "SELECT count(*) FROM events WHERE indexed = 0"),
            1
        );
        assert_eq!(count(&conn, matches), 0);
        assert!(search::backlog(&conn));

        assert!(!search::index_step(&mut conn).unwrap(), "nothing left");
        assert_eq!(
            count(&conn, "SELECT count(*) FROM events WHERE indexed = 0"),
            0
        );
        assert_eq!(count(&conn, matches), 1);
        // Trimming it takes it out of the index too.
        conn.execute_batch("DELETE FROM events").unwrap();
        assert_eq!(count(&conn, matches), 0);
    }
}

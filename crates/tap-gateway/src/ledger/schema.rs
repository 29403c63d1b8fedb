//! The ledger's tables, and the migrations that build them. `PRAGMA user_version` is the
//! number of migrations applied; each runs once, in its own transaction, in order.
//! A database written by a newer gateway (more migrations than this one knows) is refused
//! rather than guessed at: the gateway then keeps history in memory and says why.

use rusqlite::Connection;

/// Each entry is one schema version. Never edit a released entry: add one.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: sessions, providers, events (with full-text search), spans, pairing audit.
    r#"
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        label TEXT,
        cwd TEXT,
        started_us INTEGER NOT NULL,
        ended_us INTEGER,
        end_reason TEXT
    );
    CREATE INDEX sessions_started ON sessions(started_us);

    CREATE TABLE providers (
        row INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        session_id TEXT,
        connected_us INTEGER NOT NULL,
        disconnected_us INTEGER,
        reason TEXT
    );
    CREATE INDEX providers_id ON providers(id);
    CREATE INDEX providers_connected ON providers(connected_us);

    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        at_us INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        stream TEXT NOT NULL,
        outcome TEXT NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT,
        trace_id TEXT
    );
    CREATE INDEX events_session ON events(session_id, id);
    CREATE INDEX events_at ON events(at_us);
    CREATE VIRTUAL TABLE events_fts USING fts5(
        text, metadata, content='events', content_rowid='id'
    );
    CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN
        INSERT INTO events_fts(rowid, text, metadata) VALUES (new.id, new.text, new.metadata);
    END;
    CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
        INSERT INTO events_fts(events_fts, rowid, text, metadata)
            VALUES ('delete', old.id, old.text, old.metadata);
    END;

    CREATE TABLE spans (
        row INTEGER PRIMARY KEY,
        trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        parent_id TEXT,
        remote_parent INTEGER NOT NULL DEFAULT 0,
        root INTEGER NOT NULL,
        name TEXT NOT NULL,
        start_us INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        status TEXT NOT NULL,
        error_code TEXT,
        message TEXT,
        session_id TEXT,
        provider TEXT,
        tool TEXT,
        attributes TEXT NOT NULL,
        events TEXT
    );
    CREATE INDEX spans_trace ON spans(trace_id);
    CREATE INDEX spans_roots ON spans(start_us) WHERE root = 1;
    CREATE INDEX spans_start ON spans(start_us);

    CREATE TABLE pairing_audit (
        row INTEGER PRIMARY KEY,
        at_us INTEGER NOT NULL,
        action TEXT NOT NULL,
        pairing_id TEXT NOT NULL,
        name TEXT,
        origin TEXT,
        by TEXT NOT NULL
    );
    CREATE INDEX pairing_audit_at ON pairing_audit(at_us);
    "#,
    // 2: emitter runs (the run itself as JSON, as `emitters.runs` shows it).
    r#"
    CREATE TABLE emitter_runs (
        session_id TEXT NOT NULL,
        emitter TEXT NOT NULL,
        run INTEGER NOT NULL,
        started_us INTEGER NOT NULL,
        status TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, emitter, run)
    );
    CREATE INDEX emitter_runs_started ON emitter_runs(started_us);
    "#,
    // 3: an emitter's lines stored as chunks. A chunk row holds `lines` lines joined by
    // '\n'; its `id` is its newest line's, and the ids below it (down to id - lines + 1)
    // are its other lines', so every line keeps an id of its own. A chunk is indexed for
    // search after it is committed (`indexed` = 0 until then), off the emitter's path.
    r#"
    ALTER TABLE events ADD COLUMN lines INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE events ADD COLUMN indexed INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX events_unindexed ON events(id) WHERE indexed = 0;
    DROP TRIGGER events_fts_insert;
    CREATE TRIGGER events_fts_insert AFTER INSERT ON events WHEN new.indexed = 1 BEGIN
        INSERT INTO events_fts(rowid, text, metadata) VALUES (new.id, new.text, new.metadata);
    END;
    DROP TRIGGER events_fts_delete;
    CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN old.indexed = 1 BEGIN
        INSERT INTO events_fts(events_fts, rowid, text, metadata)
            VALUES ('delete', old.id, old.text, old.metadata);
    END;
    "#,
    // 4: the activity rollup (`rollup`): tool calls per period (60 s or 1800 s, starting at
    // `start_s`, seconds since the epoch), provider, tool and client ('' when none), with
    // errors and a latency histogram (`histogram`). Calls made before this version are in
    // their spans only: no backfill, which would read every span at the first start.
    r#"
    CREATE TABLE call_rollup (
        period INTEGER NOT NULL,
        start_s INTEGER NOT NULL,
        provider TEXT NOT NULL,
        tool TEXT NOT NULL,
        client TEXT NOT NULL,
        calls INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        latency BLOB NOT NULL,
        PRIMARY KEY (period, start_s, provider, tool, client)
    ) WITHOUT ROWID;
    "#,
];

/// The schema version this gateway writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Why the schema could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemaError {
    #[error("the history database has schema version {found}, newer than this gateway's {VERSION}; it was left untouched")]
    Newer { found: i64 },
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// Brings `conn` to [`VERSION`], applying the missing migrations in order.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), SchemaError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(SchemaError::Newer { found });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        // PRAGMA takes no parameters; the number is ours.
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_a_new_database_once_and_refuses_a_newer_one() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap(); // a second run applies nothing
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, VERSION);
        conn.execute_batch(&format!("PRAGMA user_version = {}", VERSION + 1))
            .unwrap();
        assert!(matches!(
            migrate(&mut conn),
            Err(SchemaError::Newer { found }) if found == VERSION + 1
        ));
    }

    #[test]
    fn full_text_search_follows_inserts_and_deletes() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO events(at_us, session_id, provider, stream, outcome, text, metadata)
             VALUES (1, 's', 'p', 'st', 'keep', 'build failed on linux', '{\"job\":\"lint\"}');",
        )
        .unwrap();
        let hits = |q: &str| -> i64 {
            conn.query_row(
                "SELECT count(*) FROM events_fts WHERE events_fts MATCH ?1",
                [q],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(hits("failed"), 1);
        assert_eq!(hits("lint"), 1);
        assert_eq!(hits("windows"), 0);
        conn.execute_batch("DELETE FROM events").unwrap();
        assert_eq!(hits("failed"), 0);
    }
}

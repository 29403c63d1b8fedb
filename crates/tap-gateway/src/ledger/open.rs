//! Opening the history database: the file in `TAP_HOME` (0600, WAL), or, when that file
//! cannot be used (corrupt, locked, unwritable, from a newer gateway), a database in memory
//! so the gateway runs on with this run's history and says why.

use super::schema;
use crate::error::Error;
use crate::limits::{LEDGER_BUSY_TIMEOUT, LEDGER_PAGE_CACHE_KIB};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use tap_protocol::ErrorCode;

/// The file's name in `TAP_HOME`.
pub const FILE_NAME: &str = "history.sqlite3";

/// The writer's connection and the readers' connection to one database.
pub(crate) struct Opened {
    pub writer: Connection,
    /// `None` for a database in memory: readers share the writer's connection.
    pub reader: Option<Connection>,
}

/// Opens (creating it 0600 if needed) and migrates the database file at `path`.
pub(crate) fn open_file(path: &Path) -> Result<Opened, Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::new(
                ErrorCode::Internal,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    create_private(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut writer = Connection::open_with_flags(path, flags).map_err(|e| describe(path, e))?;
    writer
        .busy_timeout(LEDGER_BUSY_TIMEOUT)
        .map_err(|e| describe(path, e))?;
    // auto_vacuum must be chosen before the first table exists; on an existing file it is a
    // no-op. INCREMENTAL lets retention hand freed pages back to the file system.
    writer
        .execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
        .map_err(|e| describe(path, e))?;
    let mode: String = writer
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(|e| describe(path, e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::new(
            ErrorCode::Internal,
            format!(
                "{} could not be switched to WAL mode (it stays '{mode}')",
                path.display()
            ),
        ));
    }
    // NORMAL in WAL mode: a commit survives the process being killed (not a power cut),
    // without an fsync per batch.
    writer
        .execute_batch("PRAGMA synchronous = NORMAL;")
        .map_err(|e| describe(path, e))?;
    bound_cache(&writer).map_err(|e| describe(path, e))?;
    schema::migrate(&mut writer).map_err(|e| match e {
        schema::SchemaError::Sqlite(e) => describe(path, e),
        other => Error::internal(other.to_string()),
    })?;
    // A write proves the file is writable now, not only that it opened.
    writer
        .execute_batch("BEGIN IMMEDIATE; COMMIT;")
        .map_err(|e| describe(path, e))?;
    let reader = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| describe(path, e))?;
    reader
        .busy_timeout(LEDGER_BUSY_TIMEOUT)
        .map_err(|e| describe(path, e))?;
    bound_cache(&reader).map_err(|e| describe(path, e))?;
    Ok(Opened {
        writer,
        reader: Some(reader),
    })
}

fn bound_cache(conn: &Connection) -> rusqlite::Result<()> {
    // A negative size is in KiB. PRAGMA takes no parameters; the number is ours.
    conn.execute_batch(&format!("PRAGMA cache_size = -{LEDGER_PAGE_CACHE_KIB};"))
}

/// A fresh database in memory, with the same schema.
pub(crate) fn open_memory() -> Opened {
    let mut writer = Connection::open_in_memory().expect("SQLite opens a database in memory");
    schema::migrate(&mut writer).expect("the schema applies to an empty database");
    Opened {
        writer,
        reader: None,
    }
}

/// Creates the file with mode 0600 if it does not exist, and narrows an existing one to
/// 0600 (SQLite gives its `-wal` and `-shm` files the database file's mode).
fn create_private(path: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("cannot open {}: {e}", path.display()),
                )
            })?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("cannot make {} private: {e}", path.display()),
                )
            })?;
    }
    #[cfg(not(unix))]
    {
        let _ = path;
    }
    Ok(())
}

fn describe(path: &Path, e: rusqlite::Error) -> Error {
    let what = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => "is not a SQLite database (corrupt?)",
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => "is corrupt",
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            "is locked by another process"
        }
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen) => {
            "cannot be written"
        }
        Some(rusqlite::ErrorCode::DiskFull) => "cannot grow: the disk is full",
        _ => "cannot be used",
    };
    Error::internal(format!("{} {what}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_connections_keep_a_bounded_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let opened = open_file(&dir.path().join(FILE_NAME)).unwrap();
        let reader = opened.reader.expect("a file has a reader connection");
        for conn in [&opened.writer, &reader] {
            let size: i64 = conn
                .query_row("PRAGMA cache_size", [], |r| r.get(0))
                .unwrap();
            assert_eq!(size, -LEDGER_PAGE_CACHE_KIB);
        }
    }
}

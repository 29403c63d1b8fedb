//! The ledger: one SQLite database in `TAP_HOME` (`history.sqlite3`) that keeps what
//! happened across session ends and restarts: stream events with the filter's outcome,
//! spans, sessions and providers as they came and went, pairing decisions.
//!
//! - `record`: what the engine hands over; `writer`: the thread that commits it in batches;
//!   `open`: the file (or memory, when the file cannot be used); `schema`: the migrations;
//!   `retention`: age and size limits; `read`: what the panel, the CLI and hosts browse.
//! - Producers never wait on the disk. They queue into a channel bounded by records
//!   ([`LEDGER_QUEUE`]) and by bytes ([`LEDGER_QUEUE_BYTES`]); when it is full they wait
//!   for room (a push's socket stops being read, so the backpressure reaches the provider;
//!   a tool call waits before it starts), and every wait is counted. Nothing is dropped.
//! - The spec's in-memory history toward providers (`stream.query`, the newest 200) is
//!   `streams::store`, untouched; this is the record the humans and agents browse.

pub(crate) mod figures;
mod histogram;
pub(crate) mod lines;
pub(crate) mod open;
pub(crate) mod read;
pub(crate) mod record;
pub(crate) mod records;
pub(crate) mod retention;
pub(crate) mod rollup;
mod schema;
pub(crate) mod search;
mod writer;

use crate::limits::{LEDGER_QUEUE, LEDGER_QUEUE_BYTES};
use record::Record;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tap_protocol::ledger::LedgerState;
use tokio::sync::{mpsc, Semaphore};

/// A record on its way to the writer, with the bytes it holds of [`LEDGER_QUEUE_BYTES`].
pub(crate) struct Queued {
    pub record: Record,
    pub weight: u32,
}

/// [`Record::weight`], as much of the byte budget as it may take (all of it at most).
fn weight(record: &Record) -> u32 {
    record.weight().min(LEDGER_QUEUE_BYTES) as u32
}

/// The schema's DDL, one entry per version, in order (see [`crate::ledger_schema_sql`]).
pub(crate) fn schema_sql() -> &'static [&'static str] {
    schema::MIGRATIONS
}

/// A handle on the ledger; cheap to clone.
#[derive(Clone)]
pub(crate) struct Ledger {
    /// `None` when history is off ([`crate::config::History::Off`]).
    tx: Option<mpsc::Sender<Queued>>,
    shared: Arc<Shared>,
}

/// What the writer and the handles share.
pub(crate) struct Shared {
    path: PathBuf,
    /// The connection reads use: the file's read-only one, or the writer's in memory.
    /// `None` with history off until the first read, which opens an empty database then:
    /// a gateway (or a fuzz input) that never reads its history never pays for SQLite.
    reader: Mutex<Option<Arc<Mutex<Connection>>>>,
    /// `None` while the file is written; why not, once it is not.
    memory_only: Mutex<Option<String>>,
    depth: AtomicU64,
    /// The byte budget of the queue ([`LEDGER_QUEUE_BYTES`]); the writer gives a batch's
    /// bytes back once it is committed.
    bytes: Semaphore,
    waits: AtomicU64,
    written: AtomicU64,
    /// Whether committed tool calls are added to the activity rollup (`rollup`); off only
    /// to measure what it costs (`GatewayConfig::activity_rollup`).
    rollup: AtomicBool,
}

impl Shared {
    fn set_reader(&self, conn: Arc<Mutex<Connection>>) {
        *self.reader.lock().unwrap_or_else(|e| e.into_inner()) = Some(conn);
    }

    fn set_memory_only(&self, reason: String) {
        *self.memory_only.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
    }
}

/// A record the queue had no room for: wait with [`Full::wait`].
pub(crate) struct Full(Box<Record>);

impl std::fmt::Debug for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Full(..)")
    }
}

impl Ledger {
    /// Opens `<data_dir>/history.sqlite3` and starts the writer thread. A file that cannot
    /// be used leaves the ledger in memory, with the reason in the log and in
    /// [`Ledger::state`].
    pub fn open(data_dir: &Path) -> Self {
        let path = data_dir.join(open::FILE_NAME);
        let (opened, reason) = match open::open_file(&path) {
            Ok(o) => (o, None),
            Err(reason) => {
                tracing::error!(error = %reason, "history is kept in memory only");
                (open::open_memory(), Some(reason.message))
            }
        };
        Self::start(path, opened, reason)
    }

    /// A ledger in memory only, for embedders and tests that want no file.
    pub fn in_memory(reason: &str) -> Self {
        Self::start(
            PathBuf::from(":memory:"),
            open::open_memory(),
            Some(reason.to_string()),
        )
    }

    fn start(path: PathBuf, opened: open::Opened, reason: Option<String>) -> Self {
        let (tx, rx) = mpsc::channel(LEDGER_QUEUE);
        let writer = Arc::new(Mutex::new(opened.writer));
        // In memory there is one connection: reads share the writer's.
        let reader = match opened.reader {
            Some(r) => Arc::new(Mutex::new(r)),
            None => writer.clone(),
        };
        let shared = Arc::new(Shared {
            path,
            reader: Mutex::new(Some(reader)),
            memory_only: Mutex::new(reason),
            depth: AtomicU64::new(0),
            bytes: Semaphore::new(LEDGER_QUEUE_BYTES),
            waits: AtomicU64::new(0),
            written: AtomicU64::new(0),
            rollup: AtomicBool::new(true),
        });
        let writer_shared = shared.clone();
        std::thread::Builder::new()
            .name("tap-ledger".into())
            .spawn(move || writer::run(writer, rx, writer_shared))
            .expect("the ledger's writer thread starts");
        Self {
            tx: Some(tx),
            shared,
        }
    }

    /// No history at all: records are discarded (for measuring what history costs).
    pub fn off() -> Self {
        Self {
            tx: None,
            shared: Arc::new(Shared {
                path: PathBuf::from(":off:"),
                reader: Mutex::new(None),
                memory_only: Mutex::new(Some("history is turned off".into())),
                depth: AtomicU64::new(0),
                bytes: Semaphore::new(LEDGER_QUEUE_BYTES),
                waits: AtomicU64::new(0),
                written: AtomicU64::new(0),
                rollup: AtomicBool::new(false),
            }),
        }
    }

    /// Stops adding tool calls to the activity rollup (`activity.query` then answers only
    /// what was there): for measuring what the rollup costs.
    pub fn without_rollup(&self) {
        self.shared.rollup.store(false, Ordering::Relaxed);
    }

    /// Whether tool calls are added to the activity rollup.
    pub fn rollup(&self) -> bool {
        self.shared.rollup.load(Ordering::Relaxed)
    }

    /// Queues `record` if there is room; otherwise hands it back to be waited for.
    pub fn try_write(&self, record: Record) -> Result<(), Full> {
        let Some(tx) = &self.tx else {
            if let Record::Flush(done) | Record::Checkpoint(done) = record {
                let _ = done.send(());
            }
            return Ok(());
        };
        let weight = weight(&record);
        let Ok(bytes) = self.shared.bytes.try_acquire_many(weight) else {
            return Err(Full(Box::new(record)));
        };
        // Counted before it is sent: the writer may take it and count it off at once, and
        // a depth counted after that would go below zero for a moment (and read as 2^64).
        self.shared.depth.fetch_add(1, Ordering::Relaxed);
        match tx.try_send(Queued { record, weight }) {
            Ok(()) => {
                // Given back by the writer once the record is committed.
                bytes.forget();
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(q)) => {
                self.shared.depth.fetch_sub(1, Ordering::Relaxed);
                Err(Full(Box::new(q.record)))
            }
            // The writer is gone only when the process is going down.
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.shared.depth.fetch_sub(1, Ordering::Relaxed);
                Ok(())
            }
        }
    }

    /// Queues `record`, waiting for room if the queue is full.
    pub async fn write(&self, record: Record) {
        if let Err(full) = self.try_write(record) {
            self.wait(full).await;
        }
    }

    /// Queues `record` without waiting: when the queue is full a task waits for room on
    /// the caller's behalf. For the few producers that cannot await (a span ended by a
    /// drop); still counted as a wait, still never dropped.
    pub fn write_detached(&self, record: Record) {
        if let Err(full) = self.try_write(record) {
            let ledger = self.clone();
            tokio::spawn(async move { ledger.wait(full).await });
        }
    }

    /// Waits for room for a record [`Ledger::try_write`] handed back.
    pub async fn wait(&self, Full(record): Full) {
        let record = *record;
        self.shared.waits.fetch_add(1, Ordering::Relaxed);
        let Some(tx) = &self.tx else { return };
        let weight = weight(&record);
        // Both semaphores are fair: a record waits behind those that waited before it.
        let Ok(bytes) = self.shared.bytes.acquire_many(weight).await else {
            return;
        };
        // Counted before it is sent, as in `try_write`.
        self.shared.depth.fetch_add(1, Ordering::Relaxed);
        if tx.send(Queued { record, weight }).await.is_ok() {
            bytes.forget();
        } else {
            self.shared.depth.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Resolves once the queue has room for one more record (at once while it has), after
    /// every record already waiting for room. A tool call waits here before it starts: its
    /// spans end in code that cannot wait ([`Ledger::write_detached`]), so without this a
    /// ledger that falls behind would gather one waiting task per span, without bound, while
    /// the calls went on at full speed. With it the calls slow to the writer's pace, and what
    /// waits is bounded by the calls in flight.
    pub async fn room(&self) {
        let Some(tx) = &self.tx else { return };
        if self.has_room() {
            return;
        }
        self.shared.waits.fetch_add(1, Ordering::Relaxed);
        // Both semaphores are fair: these permits come after every detached record that
        // was waiting. Dropping them unused gives the places back.
        let _ = self.shared.bytes.acquire().await;
        let _ = tx.reserve().await;
    }

    /// Whether a record would be queued now without waiting (two atomic loads): what a
    /// caller checks before it sets up a wait with [`Ledger::room`].
    pub fn has_room(&self) -> bool {
        self.tx
            .as_ref()
            .is_none_or(|tx| tx.capacity() > 0 && self.shared.bytes.available_permits() > 0)
    }

    /// Producers that waited for room so far (what [`Ledger::state`] reports, without
    /// reading the database).
    #[cfg(test)]
    pub fn waits(&self) -> u64 {
        self.shared.waits.load(Ordering::Relaxed)
    }

    /// Counts a wait for room that a producer made on its own terms (an emitter run's
    /// share of the queue), so Diagnostics shows it with the others.
    pub fn count_wait(&self) {
        self.shared.waits.fetch_add(1, Ordering::Relaxed);
    }

    /// Resolves once everything queued before it is committed.
    pub async fn flush(&self) {
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        self.write(Record::Flush(done)).await;
        let _ = tokio::task::spawn_blocking(move || wait.recv()).await;
    }

    /// [`Ledger::flush`], then folds the write-ahead log into the database file (at stop).
    pub async fn checkpoint(&self) {
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        self.write(Record::Checkpoint(done)).await;
        let _ = tokio::task::spawn_blocking(move || wait.recv()).await;
    }

    /// Runs `f` on the read connection (blocking: call it from `spawn_blocking`).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let conn = self
            .shared
            .reader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| Arc::new(Mutex::new(open::open_memory().writer)))
            .clone();
        let guard = conn.lock().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    /// The estimated bytes of the records waiting: what the byte budget has lent out (the
    /// writer gives a batch's bytes back once it is committed).
    fn queue_bytes(&self) -> u64 {
        LEDGER_QUEUE_BYTES.saturating_sub(self.shared.bytes.available_permits()) as u64
    }

    /// Whether history is durable, and the queue's counters.
    pub fn state(&self) -> LedgerState {
        let reason = self
            .shared
            .memory_only
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let durable = reason.is_none();
        let bytes = if durable {
            file_bytes(&self.shared.path)
        } else {
            self.read(retention::used_bytes).unwrap_or(0)
        };
        LedgerState {
            durable,
            reason,
            path: self.shared.path.display().to_string(),
            queue_depth: self
                .shared
                .depth
                .load(Ordering::Relaxed)
                .min(u32::MAX as u64) as u32,
            queue_capacity: LEDGER_QUEUE as u32,
            queue_bytes: self.queue_bytes(),
            queue_bytes_capacity: LEDGER_QUEUE_BYTES as u64,
            waits: self.shared.waits.load(Ordering::Relaxed),
            written: self.shared.written.load(Ordering::Relaxed),
            bytes,
        }
    }
}

/// The database file and its write-ahead log, on disk.
fn file_bytes(path: &Path) -> u64 {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    size(path) + size(Path::new(&wal))
}

#[cfg(test)]
mod rollup_tests;
#[cfg(test)]
pub(crate) mod tests;

//! Where an emitter's lines go: through its EventFilter; `drop` is counted only, `keep` is
//! appended to the stream (`<stream>@emitters`, and the ledger with the run's trace),
//! `surface` also reaches the session's timeline, `inject` the agent as a prompt.
//!
//! Deliveries follow the push rules: at most [`MAX_EMITTER_DELIVERIES_PER_SECOND`] per
//! emitter (more are kept and counted, not delivered); an `inject` while the session is
//! busy waits for idle, and what arrives meanwhile is batched into that one prompt, at most
//! [`MAX_LINES_PER_INJECT`] lines with the count of the rest folded into its text.

use crate::ledger::record::{EventRow, LinesRow, Record};
use crate::ledger::Full;
use crate::limits::{
    MAX_CHUNKS_QUEUED, MAX_CHUNK_BYTES, MAX_EMITTER_DELIVERIES_PER_SECOND, MAX_LINES_PER_INJECT,
    MAX_LINES_PER_ROW,
};
use crate::processes::command::Batch;
use crate::state::Core;
use crate::streams::store::{Stored, TooManyStreams};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tap_protocol::emitters::LineCounts;
use tap_protocol::host::{BusyState, Delivery};
use tap_protocol::ledger::EventOutcome;
use tap_protocol::provider::PushLevel;
use tap_protocol::JsonObject;
use tokio::sync::Semaphore;

/// The "provider" emitter streams are stored under: `<stream>@emitters`.
pub(crate) const EMITTERS_PROVIDER: &str = "emitters";

/// One run's routing.
pub(crate) struct Router<'a> {
    core: &'a Core,
    em: &'a crate::state::emitters::emitter::Emitter,
    session_id: &'a str,
    emitter: &'a str,
    stream: &'a str,
    run: u32,
    trace_id: String,
    filter: std::sync::Arc<crate::state::emitters::event_filter::EventFilter>,
    filter_generation: u32,
    injector: std::sync::Arc<crate::state::emitters::injector::Injector>,
    pub counts: LineCounts,
    window: (Instant, u32),
    pending: Vec<String>,
    folded: u64,
    /// Chunks of this run queued for the ledger and not yet written.
    queued: Arc<Semaphore>,
    /// The filter's answer for the read being routed, kept for its allocation.
    decided: Vec<u8>,
}

impl<'a> Router<'a> {
    pub fn new(
        core: &'a Core,
        em: &'a crate::state::emitters::emitter::Emitter,
        run: u32,
        trace_id: String,
    ) -> Self {
        let (filter, filter_generation) = em.filter();
        Self {
            core,
            em,
            session_id: &em.session_id,
            emitter: &em.spec.name,
            stream: &em.spec.stream,
            run,
            trace_id,
            filter,
            filter_generation,
            injector: core.emitters.injector(&em.session_id, &em.spec.stream),
            counts: LineCounts::default(),
            window: (Instant::now(), 0),
            pending: Vec::new(),
            folded: 0,
            queued: Arc::new(Semaphore::new(MAX_CHUNKS_QUEUED)),
            decided: Vec::new(),
        }
    }

    /// Routes the lines of one read, `batch` emptied. Consecutive stored lines of one
    /// outcome go to the stream and the ledger together (a chunk: one lock, one row);
    /// waits while this run's chunks fill its share of the ledger's queue, so the pipe is
    /// read no faster than the history is written.
    pub async fn lines(&mut self, batch: &mut Batch, source: &'static str) {
        if self.em.filter_changed(self.filter_generation) {
            (self.filter, self.filter_generation) = self.em.filter();
        }
        let at = SystemTime::now();
        let mut chunk = Chunk::default();
        self.counts.lines += batch.len() as u64;
        let mut decided = std::mem::take(&mut self.decided);
        self.filter.decide_all(batch, &mut decided);
        for (text, &rule) in batch.iter().zip(&decided) {
            let outcome = self.filter.outcome(rule);
            let level = match self.injector.deliver_as(outcome) {
                EventOutcome::Drop => {
                    self.counts.dropped += 1;
                    continue;
                }
                EventOutcome::Keep => PushLevel::Keep,
                EventOutcome::Surface | EventOutcome::Inject if !self.within_rate() => {
                    PushLevel::Keep
                }
                EventOutcome::Surface => PushLevel::Surface,
                EventOutcome::Inject => PushLevel::Inject,
            };
            let full = chunk.lines >= MAX_LINES_PER_ROW || chunk.text.len() >= MAX_CHUNK_BYTES;
            if chunk.lines > 0 && (level != chunk.level || full) {
                self.store_chunk(std::mem::take(&mut chunk), source, at)
                    .await;
            }
            chunk.push(text, level);
        }
        batch.clear();
        self.decided = decided;
        if chunk.lines > 0 {
            self.store_chunk(chunk, source, at).await;
        }
    }

    /// Stores a chunk, counts it, delivers its lines when they surface or inject (the
    /// rate above lets through a few a second), then queues its ledger row.
    async fn store_chunk(&mut self, chunk: Chunk, source: &'static str, at: SystemTime) {
        let n = chunk.lines as u64;
        let level = chunk.level;
        let metadata = self.metadata(source);
        let stored = self.core.streams.append_lines(
            self.session_id,
            EMITTERS_PROVIDER,
            self.stream,
            &chunk.text,
            level,
            &metadata,
            at,
        );
        if stored.is_err() {
            // Beyond the streams a session may hold: counted, never silently.
            self.counts.dropped += n;
            return;
        }
        match level {
            PushLevel::Keep => self.counts.kept += n,
            PushLevel::Surface => {
                self.counts.surfaced += n;
                for line in chunk.text.split('\n') {
                    self.deliver(PushLevel::Surface, line, None, at);
                }
            }
            PushLevel::Inject => {
                self.counts.injected += n;
                for line in chunk.text.split('\n') {
                    self.inject(line.to_string(), at);
                }
            }
        }
        let permit = match self.queued.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                self.core.ledger.count_wait();
                self.queued.clone().acquire_owned().await.ok()
            }
        };
        let row = LinesRow {
            at,
            session_id: self.session_id.to_string(),
            provider: EMITTERS_PROVIDER,
            stream: self.stream.to_string(),
            outcome: level.into(),
            text: chunk.text,
            lines: chunk.lines,
            metadata,
            trace_id: Some(self.trace_id.clone()),
            _permit: permit,
        };
        self.core.ledger.write(Record::Lines(Box::new(row))).await;
    }

    /// Keeps a prompt emitter's prompt in its stream (it was delivered by the caller).
    pub fn keep_prompt(&mut self, text: String) -> Option<Full> {
        let event = StreamEvent {
            session_id: self.session_id,
            stream: self.stream,
            text,
            level: PushLevel::Inject,
            metadata: self.metadata("emitter:prompt"),
            at: SystemTime::now(),
            trace_id: Some(self.trace_id.clone()),
        };
        keep(self.core, event)
            .ok()
            .and_then(|record| self.core.ledger.try_write(record).err())
    }

    /// What every stored line of this run carries: the emitter, the run, the pipe.
    fn metadata(&self, source: &'static str) -> JsonObject {
        let mut metadata = serde_json::Map::new();
        metadata.insert("emitter".into(), self.emitter.into());
        metadata.insert("run".into(), self.run.into());
        metadata.insert("source".into(), source.into());
        metadata
    }

    /// Delivers what waited for the session to go idle; `true` when nothing waits now.
    pub fn flush_injects(&mut self) -> bool {
        if self.pending.is_empty() {
            return true;
        }
        if !self.session_idle() {
            return false;
        }
        let mut text = self.pending.join("\n");
        if self.folded > 0 {
            text.push_str(&format!(
                "\n(+{} more lines from '{}', in the stream)",
                self.folded, self.emitter
            ));
        }
        self.pending.clear();
        self.folded = 0;
        self.deliver(PushLevel::Inject, &text, None, SystemTime::now());
        true
    }

    /// Lines waiting for the session to go idle.
    pub fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    fn inject(&mut self, text: String, at: SystemTime) {
        if self.pending.is_empty() && self.session_idle() {
            self.deliver(PushLevel::Inject, &text, None, at);
        } else if self.pending.len() < MAX_LINES_PER_INJECT {
            self.pending.push(text);
        } else {
            self.folded += 1;
        }
    }

    fn within_rate(&mut self) -> bool {
        let (start, n) = &mut self.window;
        if start.elapsed() >= Duration::from_secs(1) {
            *start = Instant::now();
            *n = 0;
        }
        *n += 1;
        *n <= MAX_EMITTER_DELIVERIES_PER_SECOND
    }

    fn session_idle(&self) -> bool {
        self.core
            .state()
            .sessions
            .get(self.session_id)
            .is_some_and(|s| s.busy == BusyState::Idle)
    }

    fn deliver(&self, level: PushLevel, text: &str, prompt: Option<String>, at: SystemTime) {
        deliver(
            self.core,
            self.session_id,
            self.stream,
            level,
            text,
            prompt,
            at,
        );
    }
}

/// Consecutive stored lines of one level, joined by '\n' (a line never holds one: the
/// pipe is split on them).
struct Chunk {
    text: String,
    lines: usize,
    level: PushLevel,
}

impl Default for Chunk {
    fn default() -> Self {
        Self {
            text: String::new(),
            lines: 0,
            level: PushLevel::Keep,
        }
    }
}

impl Chunk {
    fn push(&mut self, line: &str, level: PushLevel) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
        self.level = level;
    }
}

/// One event of an emitter stream (`<stream>@emitters`): an emitter's line, or the agent's
/// post (`tap_post`).
pub(crate) struct StreamEvent<'a> {
    pub session_id: &'a str,
    pub stream: &'a str,
    pub text: String,
    pub level: PushLevel,
    pub metadata: JsonObject,
    pub at: SystemTime,
    pub trace_id: Option<String>,
}

/// Appends `e` to the session's stream; the ledger record to write for it (each caller
/// writes it its own way: a run waits for room, reading no further meanwhile). `Err`: the
/// session already has its limit of emitter streams and this one is new.
pub(crate) fn keep(core: &Core, e: StreamEvent<'_>) -> Result<Record, TooManyStreams> {
    let stored = Stored {
        at: e.at,
        event: e.text.clone(),
        level: e.level,
        metadata: Some(Arc::new(e.metadata.clone())),
    };
    core.streams
        .append(e.session_id, EMITTERS_PROVIDER, e.stream, stored)?;
    Ok(Record::Event(EventRow {
        at: e.at,
        session_id: e.session_id.to_string(),
        provider: EMITTERS_PROVIDER.to_string(),
        stream: e.stream.to_string(),
        outcome: e.level.into(),
        text: e.text,
        metadata: Some(e.metadata),
        trace_id: e.trace_id,
    }))
}

/// Sends a delivery to the session's host, or queues it until one attaches
/// (`state/delivery_queue.rs`); `false` when the session is gone.
pub(crate) fn deliver(
    core: &Core,
    session_id: &str,
    stream: &str,
    level: PushLevel,
    text: &str,
    prompt: Option<String>,
    at: SystemTime,
) -> bool {
    let delivery = Delivery {
        session_id: session_id.to_string(),
        level,
        stream: stream.to_string(),
        provider: EMITTERS_PROVIDER.to_string(),
        event: text.to_string(),
        prompt,
        metadata: None,
        ts: crate::time::rfc3339(at),
    };
    let outcome = crate::state::delivery_queue::deliver(&mut core.state(), delivery);
    outcome != crate::state::delivery_queue::Outcome::NoSession
}

//! One emitter: its checked definition, the token that stops it, and what it is doing now
//! (status, counters, its newest runs), as `emitters.list` shows it.

use super::event_filter::EventFilter;
use super::spec::Spec;
use crate::limits::RUNS_KEPT;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;
use tap_protocol::emitters::{
    EmitterInfo, EmitterKind, EmitterRule, EmitterRun, EmitterStart, EmitterStatus, LineCounts,
};
use tokio_util::sync::CancellationToken;

pub(crate) struct Emitter {
    pub session_id: String,
    pub spec: Spec,
    /// Cancelled to stop it (a child of its session's token: the session's end stops it).
    pub cancel: CancellationToken,
    /// The request it was started from, as changed since (its filter): what a persistent
    /// emitter's config entry says, and what a config reload compares against.
    request: Mutex<EmitterStart>,
    /// The filter in force: replaced by `tap_set_event_filter` while it runs; routing
    /// notices through `filter_generation` without taking the lock per line.
    filter: Mutex<Arc<EventFilter>>,
    filter_generation: AtomicU32,
    live: Mutex<Live>,
}

/// What changes while it runs.
#[derive(Default)]
pub(crate) struct Live {
    pub status: Option<EmitterStatus>,
    pub run_count: u32,
    pub counts: LineCounts,
    pub next_run_at: Option<SystemTime>,
    pub last_error: Option<String>,
    /// Newest first.
    pub runs: VecDeque<EmitterRun>,
}

impl Emitter {
    pub fn new(
        session_id: String,
        spec: Spec,
        request: EmitterStart,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            session_id,
            filter: Mutex::new(spec.filter.clone()),
            filter_generation: AtomicU32::new(0),
            spec,
            request: Mutex::new(request),
            cancel,
            live: Mutex::new(Live {
                status: Some(EmitterStatus::Queued),
                ..Live::default()
            }),
        }
    }

    /// The live part; never held across an await.
    pub fn live(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The request it runs from (with any filter set since).
    pub fn request(&self) -> EmitterStart {
        self.request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The filter in force and its generation.
    pub fn filter(&self) -> (Arc<EventFilter>, u32) {
        let f = self.filter.lock().unwrap_or_else(|e| e.into_inner());
        (f.clone(), self.filter_generation.load(Ordering::Acquire))
    }

    /// Whether the filter changed since `generation`.
    pub fn filter_changed(&self, generation: u32) -> bool {
        self.filter_generation.load(Ordering::Acquire) != generation
    }

    /// Replaces the filter; the next line routed uses it.
    pub fn set_filter(&self, filter: EventFilter, rules: Vec<EmitterRule>) {
        let mut f = self.filter.lock().unwrap_or_else(|e| e.into_inner());
        *f = Arc::new(filter);
        self.request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .event_filter = Some(rules);
        self.filter_generation.fetch_add(1, Ordering::AcqRel);
    }

    pub fn set_status(&self, status: EmitterStatus) {
        self.live().status = Some(status);
    }

    /// Records a run (a new one, or a change to the newest).
    pub fn put_run(&self, run: EmitterRun) {
        let mut live = self.live();
        match live.runs.front_mut() {
            Some(newest) if newest.run == run.run => *newest = run,
            _ => {
                live.runs.push_front(run);
                live.runs.truncate(RUNS_KEPT);
            }
        }
    }

    pub fn info(&self) -> EmitterInfo {
        let live = self.live();
        let s = &self.spec;
        EmitterInfo {
            name: s.name.clone(),
            session_id: self.session_id.clone(),
            kind: s.kind,
            command: (s.kind == EmitterKind::Command).then(|| s.text.clone()),
            prompt: (s.kind == EmitterKind::Prompt).then(|| s.text.clone()),
            schedule: s.schedule,
            every: s.every_text.clone(),
            status: live.status.unwrap_or(EmitterStatus::Queued),
            stream: s.stream.clone(),
            run_count: live.run_count,
            counts: live.counts,
            event_filter: self.filter().0.source.clone(),
            lifespan: s.lifespan,
            ownership: s.ownership,
            next_run_at: live.next_run_at.map(crate::time::rfc3339),
            last_error: live.last_error.clone(),
            description: s.description.clone(),
        }
    }
}

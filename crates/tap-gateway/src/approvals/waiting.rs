//! Calls waiting for the user's answer. Each has exactly one outcome: whoever takes its
//! entry out of the table (an answer, the call's own timeout, its caller going away, its
//! session ending) decides it, and anyone later finds nothing.

use crate::error::Error;
use crate::events::{Events, GatewayEvent};
use crate::limits::MAX_WAITING_APPROVALS;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use tap_protocol::approvals::{ApprovalOutcome, WaitingCall};
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// The user's answer to a waiting call, with the grant it made if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    Approved(Option<String>),
    Denied(Option<String>),
}

/// An answer and where it was given: the trace's `approval.by` (`user` for the tray,
/// panel and CLI, `client` for the calling MCP client, `host` for the session host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answered {
    pub answer: Answer,
    pub by: &'static str,
}

struct Entry {
    call: WaitingCall,
    /// Orders `list` (oldest first).
    seq: u64,
    /// Every answer acts as `once`: it makes no grant (`tap_set_session_mode`).
    once: bool,
    answer: oneshot::Sender<Answered>,
}

/// A waiting call taken out of the table: its outcome is the taker's to give.
pub(crate) struct Taken {
    pub call: WaitingCall,
    /// Every answer acts as `once`.
    pub once: bool,
    answer: oneshot::Sender<Answered>,
}

/// The table of waiting calls.
pub(crate) struct Waiting {
    entries: Mutex<(u64, BTreeMap<String, Entry>)>,
    events: Events,
}

/// The waiting call's end: its answer arrives on `answer`. Dropped before an outcome (the
/// caller went away), it takes the entry out as `gone`.
pub(crate) struct Ticket<'a> {
    pub id: String,
    pub answer: oneshot::Receiver<Answered>,
    table: &'a Waiting,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.table.remove(&self.id) {
            self.table.resolved(&t.call.id, ApprovalOutcome::Gone);
        }
    }
}

impl Ticket<'_> {
    /// Ends the wait without an answer (`timedOut` or `gone`): `true` when this took the
    /// entry, `false` when an answer came first (it is then on `answer`).
    pub fn give_up(&self, outcome: ApprovalOutcome) -> bool {
        match self.table.remove(&self.id) {
            Some(_) => {
                self.table.resolved(&self.id, outcome);
                true
            }
            None => false,
        }
    }
}

impl Waiting {
    pub fn new(events: Events) -> Self {
        Self {
            entries: Mutex::new((0, BTreeMap::new())),
            events,
        }
    }

    fn lock(&self) -> MutexGuard<'_, (u64, BTreeMap<String, Entry>)> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a waiting call (its `id` is set here) and announces it; refused beyond
    /// [`MAX_WAITING_APPROVALS`].
    pub fn add(&self, call: WaitingCall) -> Result<Ticket<'_>, Error> {
        self.add_with(call, false)
    }

    /// As [`Waiting::add`], for a call that is asked every time: whatever scope its answer
    /// names, it acts as `once` and makes no grant.
    pub fn add_once(&self, call: WaitingCall) -> Result<Ticket<'_>, Error> {
        self.add_with(call, true)
    }

    fn add_with(&self, mut call: WaitingCall, once: bool) -> Result<Ticket<'_>, Error> {
        let (tx, rx) = oneshot::channel();
        {
            let mut guard = self.lock();
            let (seq, entries) = &mut *guard;
            if entries.len() >= MAX_WAITING_APPROVALS {
                return Err(Error::new(
                    ErrorCode::Denied,
                    format!(
                        "'{}' needs the user's approval, and {MAX_WAITING_APPROVALS} calls already wait for one: denied. Answer those first (tap approvals list).",
                        call.tool
                    ),
                ));
            }
            call.id = loop {
                let id = crate::ids::short("a");
                if !entries.contains_key(&id) {
                    break id;
                }
            };
            *seq += 1;
            entries.insert(
                call.id.clone(),
                Entry {
                    call: call.clone(),
                    seq: *seq,
                    once,
                    answer: tx,
                },
            );
        }
        let id = call.id.clone();
        self.events
            .emit(GatewayEvent::ApprovalWaiting(Box::new(call)));
        Ok(Ticket {
            id,
            answer: rx,
            table: self,
        })
    }

    fn remove(&self, id: &str) -> Option<Taken> {
        self.lock().1.remove(id).map(|e| Taken {
            call: e.call,
            once: e.once,
            answer: e.answer,
        })
    }

    fn resolved(&self, id: &str, outcome: ApprovalOutcome) {
        self.events.emit(GatewayEvent::ApprovalResolved {
            id: id.to_string(),
            outcome,
        });
    }

    /// Takes waiting call `id` to answer it.
    pub fn take(&self, id: &str) -> Result<Taken, Error> {
        self.remove(id).ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("No call '{id}' waits for approval: it was answered, timed out or its caller went away (see tap approvals list)"),
            )
        })
    }

    /// Waiting call `id`, if it still waits.
    pub fn get(&self, id: &str) -> Option<WaitingCall> {
        self.lock().1.get(id).map(|e| e.call.clone())
    }

    /// Gives a taken call its answer, given `by` (the trace's `approval.by`).
    pub fn settle(&self, taken: Taken, answer: Answer, by: &'static str) {
        let outcome = match answer {
            Answer::Approved(_) => ApprovalOutcome::Approved,
            Answer::Denied(_) => ApprovalOutcome::Denied,
        };
        let _ = taken.answer.send(Answered { answer, by });
        self.resolved(&taken.call.id, outcome);
    }

    /// Every waiting call, oldest first.
    pub fn list(&self) -> Vec<WaitingCall> {
        let guard = self.lock();
        let mut all: Vec<&Entry> = guard.1.values().collect();
        all.sort_by_key(|e| e.seq);
        all.into_iter().map(|e| e.call.clone()).collect()
    }

    /// Denies every call of session `id` still waiting (the session ended): their callers
    /// get `gone`.
    pub fn end_session(&self, session_id: &str) {
        let gone: Vec<Entry> = {
            let mut guard = self.lock();
            let ids: Vec<String> = guard
                .1
                .values()
                .filter(|e| e.call.session_id == session_id)
                .map(|e| e.call.id.clone())
                .collect();
            ids.iter().filter_map(|id| guard.1.remove(id)).collect()
        };
        for e in gone {
            // The receiver reads a dropped sender as the caller's end: no answer.
            drop(e.answer);
            self.resolved(&e.call.id, ApprovalOutcome::Gone);
        }
    }
}

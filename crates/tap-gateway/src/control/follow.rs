//! What one control connection follows (`diagnostics.follow`, `emitters.follow`,
//! `traces.follow`, `logs.follow`, `streams.follow`, `unfollow`) and the events that
//! brings.
//!
//! These topics are opt-in: they can be busy (a log line per connection, an entry per
//! push), and most clients (`tap pairing`, the tray) want none of them. Each has its own
//! receiver, so a flood of stream entries cannot push pairing events out of the shared
//! event buffer; a follower that falls behind one topic is told how much it missed
//! there (`follow.lagged`) and nothing else is lost. `emitters.changed` and
//! `traces.changed` share one receiver of the engine's coalesced notices; one that falls
//! behind it is sent the notices of what it follows once more (they carry no data, so
//! nothing else is owed).

use crate::events::{Changed, ChangedReceiver};
use crate::state::Core;
use crate::streams::tail::{TailEntry, TailReceiver};
use std::future::pending;
use std::sync::Arc;
use tap_protocol::control::{ControlError, ControlEvent, FollowTopic, StreamsHistory};
use tap_protocol::logs::{LogLevel, LogRecord, LogsParams, LogsRecent};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;

#[derive(Default)]
pub(super) struct Follows {
    /// Forward `diagnostics.changed`.
    pub diagnostics: bool,
    /// Coalesced notices (`emitters.changed`, `traces.changed`) while either is followed.
    changed: Option<ChangedReceiver>,
    /// Which of them to forward.
    emitters: bool,
    traces: bool,
    /// Notices to send again after falling behind, before any new one.
    owed: Vec<Changed>,
    /// New log records, and the least severe level to forward.
    logs: Option<(Receiver<Arc<LogRecord>>, Option<LogLevel>)>,
    /// New stream entries, and the session to forward them for.
    streams: Option<(TailReceiver, String)>,
}

impl Follows {
    /// `logs.follow`: the recent records, and `log` events from now on.
    pub fn logs(&mut self, core: &Core, p: LogsParams) -> LogsRecent {
        let Some(buffer) = core.config.logs.as_ref() else {
            self.logs = None;
            return LogsRecent {
                records: Vec::new(),
                capacity: 0,
                enabled: false,
            };
        };
        let (records, rx) = buffer.follow(p.limit, p.level);
        self.logs = Some((rx, p.level));
        LogsRecent {
            records,
            capacity: buffer.capacity(),
            enabled: true,
        }
    }

    /// `streams.follow`: the session's history, and `stream.entry` events from now on.
    pub fn streams(
        &mut self,
        core: &Core,
        session_id: String,
    ) -> Result<StreamsHistory, ControlError> {
        if !core.state().sessions.contains_key(&session_id) {
            return Err(crate::state::unknown_session(&session_id).into());
        }
        let (rx, streams) = core.streams.follow(&session_id);
        self.streams = Some((rx, session_id.clone()));
        Ok(StreamsHistory {
            session_id,
            streams,
        })
    }

    /// `emitters.follow`, `traces.follow`: their `*.changed` events from now on.
    pub fn changes(&mut self, core: &Core, topic: Changed) {
        if self.changed.is_none() {
            self.changed = Some(core.events.subscribe_changed());
        }
        match topic {
            Changed::Emitters => self.emitters = true,
            Changed::Traces => self.traces = true,
        }
    }

    pub fn stop(&mut self, topic: FollowTopic) {
        match topic {
            FollowTopic::Diagnostics => self.diagnostics = false,
            FollowTopic::Emitters => self.emitters = false,
            FollowTopic::Traces => self.traces = false,
            FollowTopic::Logs => self.logs = None,
            FollowTopic::Streams => self.streams = None,
        }
        if !self.emitters && !self.traces {
            self.changed = None;
            self.owed.clear();
        }
    }

    fn follows(&self, changed: Changed) -> bool {
        match changed {
            Changed::Emitters => self.emitters,
            Changed::Traces => self.traces,
        }
    }

    /// The next event of a followed topic; pending while there is none. Cancel-safe.
    pub async fn next(&mut self) -> ControlEvent {
        loop {
            while let Some(owed) = self.owed.pop() {
                if self.follows(owed) {
                    return changed_event(owed);
                }
            }
            tokio::select! {
                got = next_changed(&mut self.changed) => match got {
                    Ok(c) if self.follows(c) => return changed_event(c),
                    Ok(_) => {}
                    Err(()) => self.owed = vec![Changed::Traces, Changed::Emitters],
                },
                got = next_log(&mut self.logs) => match got {
                    Ok(Some(record)) => return ControlEvent::Log { record },
                    Ok(None) => {}
                    Err(missed) => return lagged(FollowTopic::Logs, missed),
                },
                got = next_entry(&mut self.streams) => match got {
                    Ok(Some(e)) => {
                        return ControlEvent::StreamEntry {
                            session_id: e.session.clone(),
                            stream: e.key.clone(),
                            entry: e.entry.clone(),
                        }
                    }
                    Ok(None) => {}
                    Err(missed) => return lagged(FollowTopic::Streams, missed),
                },
            }
        }
    }
}

fn lagged(topic: FollowTopic, missed: u64) -> ControlEvent {
    ControlEvent::FollowLagged { topic, missed }
}

fn changed_event(changed: Changed) -> ControlEvent {
    match changed {
        Changed::Emitters => ControlEvent::EmittersChanged,
        Changed::Traces => ControlEvent::TracesChanged,
    }
}

/// The next coalesced notice; `Err` when some were missed.
async fn next_changed(changed: &mut Option<ChangedReceiver>) -> Result<Changed, ()> {
    let Some(rx) = changed else {
        return pending().await;
    };
    match rx.recv().await {
        Ok(c) => Ok(c),
        Err(RecvError::Lagged(_)) => Err(()),
        // The sender lives as long as the gateway.
        Err(RecvError::Closed) => {
            *changed = None;
            pending().await
        }
    }
}

/// `Ok(Some)`: a record to forward; `Ok(None)`: one filtered out; `Err(n)`: `n` missed.
async fn next_log(
    logs: &mut Option<(Receiver<Arc<LogRecord>>, Option<LogLevel>)>,
) -> Result<Option<LogRecord>, u64> {
    let Some((rx, min)) = logs else {
        return pending().await;
    };
    match rx.recv().await {
        Ok(r) if min.is_none_or(|m| r.level <= m) => Ok(Some((*r).clone())),
        Ok(_) => Ok(None),
        Err(RecvError::Lagged(n)) => Err(n),
        Err(RecvError::Closed) => {
            *logs = None;
            Ok(None)
        }
    }
}

async fn next_entry(
    streams: &mut Option<(TailReceiver, String)>,
) -> Result<Option<Arc<TailEntry>>, u64> {
    let Some((tail, session)) = streams else {
        return pending().await;
    };
    match tail.rx.recv().await {
        Ok(e) if e.session == *session => Ok(Some(e)),
        Ok(_) => Ok(None),
        Err(RecvError::Lagged(n)) => Err(n),
        Err(RecvError::Closed) => {
            *streams = None;
            Ok(None)
        }
    }
}

//! `push`: each event through the stream's filter and budgets into the session's stream,
//! and (`surface` / `inject`) to the session's host, or its delivery queue while none is
//! attached.

use super::all_binding::{targets, Absent};
use super::ProviderConn;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::ledger::record::{EventRow, Record};
use crate::ledger::Full;
use crate::providers::validate::{self};
use crate::streams::store::Stored;
use std::time::SystemTime;
use tap_protocol::host::Delivery;
use tap_protocol::ledger::EventOutcome;
use tap_protocol::limits::MAX_STREAMS_PER_PROVIDER;
use tap_protocol::provider::{Push, PushLevel};
use tap_protocol::ErrorCode;

impl ProviderConn {
    pub(super) fn on_push(&mut self, p: Push) {
        if let Err(Error { code, message, .. }) = validate::push(&p) {
            self.error(code, message, Some("push"));
            return;
        }
        // An "all" provider names the session, or broadcasts to every one it is in.
        let absent = if p.broadcast {
            Absent::Every
        } else {
            Absent::Refuse
        };
        let Some(resolved) = self.with_entry(|s, id| {
            targets(s, id, p.session_id.as_deref(), absent)
                .map(|t| (t, s.providers[id].name.clone().unwrap_or_default()))
        }) else {
            return;
        };
        let (sessions, provider) = match resolved {
            Ok(r) => r,
            Err(Error { code, message, .. }) => return self.error(code, message, Some("push")),
        };
        // Only a broadcast's extra sessions get copies; the usual single session (and a
        // broadcast's last) takes the push itself, so its text and metadata move.
        let mut sessions = sessions;
        let Some(last) = sessions.pop() else { return };
        for session in sessions {
            if let Some(full) = self.push_to(session, &provider, p.clone()) {
                self.ledger_backlog.push(full);
            }
        }
        if let Some(full) = self.push_to(last, &provider, p) {
            self.ledger_backlog.push(full);
        }
    }

    /// One push into one session: the stream's filter and the budgets decide its level,
    /// then it is stored and (`surface` / `inject`) delivered to the session's host. Every
    /// outcome, a filter's drop included, goes to the ledger; a push with a delivery is a
    /// trace (`push` → `delivery`). Returns the ledger record the queue had no room for.
    pub(super) fn push_to(&self, session: String, provider: &str, p: Push) -> Option<Full> {
        let stream = p.stream.unwrap_or_else(|| provider.to_string());
        let text = p
            .event
            .filter(|e| !e.is_empty())
            .or_else(|| p.prompt.clone())
            .unwrap_or_default();
        let pid = self.id.clone().unwrap_or_default();
        let streams = &self.core.streams;
        let level = match self
            .core
            .stream_controls
            .admit(&pid, &session, &stream, &text, p.level)
        {
            Ok(Some(level)) => level,
            Ok(None) => {
                // Dropped by the stream's filter: not in the stream, but on the record.
                return self
                    .core
                    .ledger
                    .try_write(Record::Event(EventRow {
                        at: SystemTime::now(),
                        session_id: session,
                        provider: provider.to_string(),
                        stream,
                        outcome: EventOutcome::Drop,
                        text,
                        metadata: p.metadata,
                        trace_id: None,
                    }))
                    .err();
            }
            Err(message) => {
                self.core.diagnostics.limit_hit(Limit::PushBudget);
                self.error(ErrorCode::RateLimited, message.message, Some("push"));
                return None;
            }
        };
        let at = SystemTime::now();
        let delivery = (level != PushLevel::Keep).then(|| Delivery {
            session_id: session.clone(),
            level,
            stream: stream.clone(),
            provider: provider.to_string(),
            event: text.clone(),
            prompt: p.prompt,
            metadata: p.metadata.clone(),
            ts: crate::time::rfc3339(at),
        });
        let row = EventRow {
            at,
            session_id: session.clone(),
            provider: provider.to_string(),
            stream: stream.clone(),
            outcome: level.into(),
            text: text.clone(),
            metadata: p.metadata.clone(),
            trace_id: None,
        };
        let stored = Stored {
            at,
            event: text,
            level,
            metadata: p.metadata.map(std::sync::Arc::new),
        };
        if streams.append(&session, provider, &stream, stored).is_err() {
            self.core.diagnostics.limit_hit(Limit::StreamCount);
            self.error(
                ErrorCode::PayloadTooLarge,
                format!(
                    "A provider may use at most {MAX_STREAMS_PER_PROVIDER} streams per session; '{stream}' would be one more"
                ),
                Some("push"),
            );
            return None;
        }
        let mut row = row;
        if let Some(delivery) = delivery {
            let mut push = self.core.tracer.start("push", None);
            push.session(&session);
            push.provider(provider);
            push.set("stream", stream.as_str());
            push.set("level", EventOutcome::from(level).as_str());
            row.trace_id = Some(push.context().trace_hex());
            let mut span = push.child("delivery");
            span.session(&session);
            // Shown now, or queued until a host attaches; never an answer to the
            // provider (the spec's `push` has none), only the trace's.
            let outcome = crate::state::delivery_queue::deliver(&mut self.core.state(), delivery);
            outcome.record(span);
            push.ok();
        }
        self.core.ledger.try_write(Record::Event(row)).err()
    }
}

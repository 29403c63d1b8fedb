//! A span while its work runs: started with a name and a parent, given attributes and
//! events as the work goes, and finished exactly once, with its outcome. A span dropped
//! without an outcome (its future was cancelled) is finished as `ABANDONED`, so a trace
//! never silently loses a piece.

use super::context::{new_span_id, new_trace_id, SpanContext};
use super::Tracer;
use crate::ledger::record::{Attr, SpanEventRow, SpanRow};
use std::time::{Duration, Instant, SystemTime};
use tap_protocol::ledger::SpanStatus;

/// A running span. Finish it with [`OpenSpan::ok`], [`OpenSpan::fail`] or
/// [`OpenSpan::end`]; dropping it finishes it as abandoned.
pub(crate) struct OpenSpan {
    tracer: Tracer,
    row: Option<SpanRow>,
    started: Instant,
}

impl OpenSpan {
    /// A span under `parent` (a remote one from a `traceparent`, or a local span's
    /// context), or the root of a new trace.
    pub fn start(tracer: &Tracer, name: &'static str, parent: Option<SpanContext>) -> Self {
        let (trace_id, parent_id, remote_parent) = match parent {
            Some(p) => (p.trace_id, Some(p.span_id), p.remote),
            None => (new_trace_id(), None, false),
        };
        Self {
            tracer: tracer.clone(),
            started: Instant::now(),
            row: Some(SpanRow {
                trace_id,
                span_id: new_span_id(),
                parent_id,
                remote_parent,
                name,
                start: SystemTime::now(),
                duration: Duration::ZERO,
                status: SpanStatus::Ok,
                error_code: None,
                message: None,
                session_id: None,
                provider: None,
                tool: None,
                attributes: Vec::new(),
                events: Vec::new(),
            }),
        }
    }

    /// A child of this span.
    pub fn child(&self, name: &'static str) -> Self {
        Self::start(&self.tracer, name, Some(self.context()))
    }

    /// This span's ids, for its children (and `traceparent`).
    pub fn context(&self) -> SpanContext {
        let row = self.row();
        SpanContext {
            trace_id: row.trace_id,
            span_id: row.span_id,
            remote: false,
        }
    }

    /// Sets an attribute.
    pub fn set(&mut self, key: &'static str, value: impl Into<Attr>) {
        self.row_mut().attributes.push((key, value.into()));
    }

    /// The session the work runs in (indexed: the trace list filters on it).
    pub fn session(&mut self, id: &str) {
        self.row_mut().session_id = Some(id.to_string());
    }

    /// The provider the work reached (indexed).
    pub fn provider(&mut self, name: &str) {
        self.row_mut().provider = Some(name.to_string());
    }

    /// The tool called (indexed).
    pub fn tool(&mut self, name: &str) {
        self.row_mut().tool = Some(name.to_string());
    }

    /// Something that happened now, during the span.
    pub fn event(&mut self, name: &'static str, attributes: Vec<(&'static str, Attr)>) {
        self.event_at(name, SystemTime::now(), attributes);
    }

    /// Something that happened at `at`, during the span.
    pub fn event_at(
        &mut self,
        name: &'static str,
        at: SystemTime,
        attributes: Vec<(&'static str, Attr)>,
    ) {
        self.row_mut().events.push(SpanEventRow {
            name,
            at,
            attributes,
        });
    }

    /// Finishes the span as succeeded.
    pub fn ok(mut self) {
        self.finish(SpanStatus::Ok, None, None);
    }

    /// Finishes the span as failed with `code` and `message`.
    pub fn fail(mut self, code: impl ToString, message: impl Into<String>) {
        self.finish(
            SpanStatus::Error,
            Some(code.to_string()),
            Some(message.into()),
        );
    }

    fn finish(&mut self, status: SpanStatus, code: Option<String>, message: Option<String>) {
        let Some(mut row) = self.row.take() else {
            return;
        };
        row.duration = self.started.elapsed();
        row.status = status;
        row.error_code = code;
        row.message = message;
        self.tracer.finish(row);
    }

    fn row(&self) -> &SpanRow {
        self.row.as_ref().expect("a span is open until finished")
    }

    fn row_mut(&mut self) -> &mut SpanRow {
        self.row.as_mut().expect("a span is open until finished")
    }
}

impl Drop for OpenSpan {
    fn drop(&mut self) {
        if self.row.is_some() {
            self.finish(
                SpanStatus::Error,
                Some("ABANDONED".into()),
                Some("the work was dropped before it finished".into()),
            );
        }
    }
}

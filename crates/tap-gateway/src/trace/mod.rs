//! Traces: every unit of work is a span with W3C trace context (a tool call with its
//! precheck, gates, queueing and provider round trip; a push with its deliveries; a pairing
//! request; a session's start and end), kept in the ledger.
//!
//! - `context`: ids and the `traceparent` header; `span`: a span while its work runs.
//! - Spans are always on, so starting one is a few words of memory and two random numbers,
//!   and finishing one is one queue send; the writer thread does the rest.
//! - Each finished span also notes a change for `traces.changed` (coalesced: at most one
//!   event per 250 ms, sent once the spans are committed).
//! - `otlp`: with an endpoint configured, finished spans are also offered to the OTLP/HTTP
//!   exporter (a `try_send`: it never waits, and what it drops the ledger still has).

pub(crate) mod context;
pub(crate) mod otlp;
pub(crate) mod span;

/// The tool call's root span and its client attribute, named where the ledger's activity
/// rollup counts them.
pub(crate) use crate::ledger::rollup::{CALL_SPAN, CLIENT_ATTR};
pub(crate) use context::SpanContext;
pub(crate) use span::OpenSpan;

use crate::diagnostics::Coalesced;
use crate::ledger::record::{Record, SpanRow};
use crate::ledger::Ledger;

/// Where finished spans go: the ledger, and the OTLP exporter when one is configured.
#[derive(Clone)]
pub(crate) struct Tracer {
    ledger: Ledger,
    export: Option<otlp::Exporter>,
    /// `traces.changed`.
    changed: Coalesced,
}

impl Tracer {
    pub fn new(ledger: Ledger, export: Option<otlp::Exporter>, changed: Coalesced) -> Self {
        Self {
            ledger,
            export,
            changed,
        }
    }

    /// The OTLP export's counters, when spans are exported.
    pub fn export_stats(&self) -> Option<tap_protocol::diagnostics::OtlpExport> {
        self.export.as_ref().map(otlp::Exporter::stats)
    }

    /// A new span (see [`OpenSpan::start`]).
    pub fn start(&self, name: &'static str, parent: Option<SpanContext>) -> OpenSpan {
        OpenSpan::start(self, name, parent)
    }

    fn finish(&self, row: SpanRow) {
        if let Some(export) = &self.export {
            export.offer(&row);
        }
        self.ledger.write_detached(Record::Span(Box::new(row)));
        self.changed.changed();
    }
}

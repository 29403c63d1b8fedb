//! The activity rollup: as the writer commits a batch, the tool calls in it (root
//! `tool.call` spans) are added to `call_rollup`, one row per period, provider, tool and
//! client, with calls, errors and a latency histogram (`histogram`). `activity.query`
//! (`figures`) reads only these rows, so its cost depends on the window's periods and
//! keys, never on the number of calls.
//!
//! Two periods: minutes, for the 15 min and 1 h windows, and half hours, for the 24 h and
//! 7 d windows (a 7 d window is 336 half hours per key instead of 10,080 minutes). The calls
//! of one batch are summed per row first, so a busy batch costs one read and one write per
//! row it touches, whatever its number of calls.

use super::histogram::Histogram;
use super::record::{micros, Attr, Record, SpanRow};
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::HashMap;
use tap_protocol::ledger::SpanStatus;

/// The root span of a tool call (`tools/traced.rs`).
pub(crate) const CALL_SPAN: &str = "tool.call";
/// The call's session's client, an attribute of its root span (`tools/traced.rs`).
pub(crate) const CLIENT_ATTR: &str = "session.client";
/// A minute row's period, in seconds.
pub(crate) const MINUTE: i64 = 60;
/// A half-hour row's period, in seconds.
pub(crate) const HALF_HOUR: i64 = 1800;

/// Whether a span is a tool call's root: the one span counted per call. Its parent, when
/// it has one, is the caller's (`traceparent`), not one of ours.
pub(crate) fn is_call_root(s: &SpanRow) -> bool {
    s.name == CALL_SPAN && (s.parent_id.is_none() || s.remote_parent)
}

/// A row's key: period, its start (seconds since the epoch), provider, tool, client.
type Key<'a> = (i64, i64, &'a str, &'a str, &'a str);

#[derive(Default)]
struct Sums {
    calls: u64,
    errors: u64,
    latency: Histogram,
}

/// Adds the tool calls among `batch`'s spans to the rollup, in the batch's transaction.
pub(super) fn add(tx: &Transaction<'_>, batch: &[Record]) -> rusqlite::Result<()> {
    let mut sums: HashMap<Key<'_>, Sums> = HashMap::new();
    for record in batch {
        let Record::Span(s) = record else { continue };
        if !is_call_root(s) {
            continue;
        }
        let client = s
            .attributes
            .iter()
            .find_map(|(k, v)| match v {
                Attr::Str(c) if *k == CLIENT_ATTR => Some(c.as_str()),
                _ => None,
            })
            .unwrap_or("");
        let at = micros(s.start).div_euclid(1_000_000);
        let us = s.duration.as_micros().min(u64::MAX as u128) as u64;
        for period in [MINUTE, HALF_HOUR] {
            let key = (
                period,
                at - at.rem_euclid(period),
                s.provider.as_deref().unwrap_or(""),
                s.tool.as_deref().unwrap_or(""),
                client,
            );
            let row = sums.entry(key).or_default();
            row.calls += 1;
            row.errors += u64::from(s.status == SpanStatus::Error);
            row.latency.record(us);
        }
    }
    for ((period, start, provider, tool, client), mut sums) in sums {
        let key = params![period, start, provider, tool, client];
        let stored: Option<(i64, i64, Vec<u8>)> = tx
            .prepare_cached(
                "SELECT calls, errors, latency FROM call_rollup
                 WHERE period = ?1 AND start_s = ?2 AND provider = ?3 AND tool = ?4 AND client = ?5",
            )?
            .query_row(key, |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        if let Some((calls, errors, latency)) = stored {
            sums.calls += calls.max(0) as u64;
            sums.errors += errors.max(0) as u64;
            sums.latency.merge_encoded(&latency);
        }
        tx.prepare_cached(
            "INSERT OR REPLACE INTO call_rollup(period, start_s, provider, tool, client, calls, errors, latency)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            period,
            start,
            provider,
            tool,
            client,
            sums.calls as i64,
            sums.errors as i64,
            sums.latency.encode()
        ])?;
    }
    Ok(())
}

/// One tool call for [`prefill`]: start, duration, provider, tool, client, succeeded.
pub type PrefillCall = (
    std::time::SystemTime,
    std::time::Duration,
    String,
    String,
    String,
    bool,
);

/// Writes `calls` as root `tool.call` spans through a ledger on `data_dir`'s file (its
/// writer thread, batches and rollup, as a gateway would), then folds the log into the
/// file and lets go of it. For `tap-bench`, which times `activity.query` over a week of
/// calls without waiting a week.
pub(crate) async fn prefill(
    data_dir: &std::path::Path,
    calls: impl IntoIterator<Item = PrefillCall>,
) -> Result<(), String> {
    let ledger = super::Ledger::open(data_dir);
    if let Some(reason) = ledger.state().reason {
        return Err(reason);
    }
    for (start, duration, provider, tool, client, ok) in calls {
        let row = SpanRow {
            trace_id: rand::random(),
            span_id: rand::random(),
            parent_id: None,
            remote_parent: false,
            name: CALL_SPAN,
            start,
            duration,
            status: if ok {
                SpanStatus::Ok
            } else {
                SpanStatus::Error
            },
            error_code: (!ok).then(|| "INTERNAL".to_string()),
            message: None,
            session_id: Some("s-prefill".into()),
            provider: Some(provider),
            tool: Some(tool),
            attributes: vec![("via", Attr::from("api")), (CLIENT_ATTR, Attr::Str(client))],
            events: Vec::new(),
        };
        ledger.write(Record::Span(Box::new(row))).await;
    }
    ledger.checkpoint().await;
    Ok(())
}

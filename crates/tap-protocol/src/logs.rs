//! The gateway's log as the control plane shows it (`logs.recent`, `logs.follow`, the
//! `log` event): formatted `tracing` records, newest kept in a ring.

use serde::{Deserialize, Serialize};

/// Severity, most severe first: `error` < `warn` < `info` < `debug` < `trace` in `Ord`,
/// so "at least as severe as `min`" is `level <= min`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Something failed.
    Error,
    /// Something unexpected that the gateway handled.
    Warn,
    /// What the gateway did.
    Info,
    /// Details for debugging.
    Debug,
    /// Very fine details (never kept by the gateway's log ring).
    Trace,
}

/// One log record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LogRecord {
    /// Numbered from 1 in the order the gateway kept its records (a follower that skips
    /// some by level sees gaps).
    pub seq: u64,
    /// RFC 3339 time.
    pub ts: String,
    /// Severity.
    pub level: LogLevel,
    /// The module that logged it, e.g. `tap_gateway::providers::connection`.
    pub target: String,
    /// The message.
    pub message: String,
    /// Structured fields, in the order they were logged (`remote`, `provider`, …).
    pub fields: Vec<LogField>,
}

/// One structured field of a [`LogRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LogField {
    /// Field name.
    pub name: String,
    /// Its value, formatted.
    pub value: String,
}

/// Params of `logs.recent` and `logs.follow`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct LogsParams {
    /// The newest N records (every kept record when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Only records at least this severe (all kept records when absent). For
    /// `logs.follow` it also filters the `log` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
}

/// Result of `logs.recent` and `logs.follow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LogsRecent {
    /// Oldest first.
    pub records: Vec<LogRecord>,
    /// How many records the gateway keeps.
    pub capacity: usize,
    /// `false` when the process hosting the gateway installed no log ring: there are no
    /// records and there will be no `log` events.
    pub enabled: bool,
}

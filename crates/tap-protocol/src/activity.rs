//! Activity figures (`activity.query`): tool calls per time bucket, with errors and latency
//! percentiles, over a window, in total and grouped by provider, tool or client. The
//! gateway counts them from the ledger's per-minute rollup of tool calls
//! (`docs/history-and-traces.md`, "Activity"), never by reading spans one by one.

use crate::ledger::LedgerState;
use serde::{Deserialize, Serialize};

/// How far back the figures go. Each window has its bucket size, which the gateway picks
/// and says ([`ActivityReport::bucket_secs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ActivityWindow {
    /// The last 15 minutes, by minute.
    #[serde(rename = "15m")]
    Minutes15,
    /// The last hour, by minute.
    #[serde(rename = "1h")]
    Hour1,
    /// The last 24 hours, by half hour.
    #[serde(rename = "24h")]
    Hours24,
    /// The last 7 days, by 3 hours.
    #[serde(rename = "7d")]
    Days7,
}

impl ActivityWindow {
    /// Every window, shortest first.
    pub const ALL: [ActivityWindow; 4] = [
        ActivityWindow::Minutes15,
        ActivityWindow::Hour1,
        ActivityWindow::Hours24,
        ActivityWindow::Days7,
    ];

    /// Its length in seconds.
    pub fn secs(self) -> u64 {
        match self {
            ActivityWindow::Minutes15 => 15 * 60,
            ActivityWindow::Hour1 => 3600,
            ActivityWindow::Hours24 => 24 * 3600,
            ActivityWindow::Days7 => 7 * 24 * 3600,
        }
    }

    /// The length of one of its buckets in seconds: a whole number of minutes that divides
    /// the window, so a window is a whole number of buckets aligned on the epoch.
    pub fn bucket_secs(self) -> u64 {
        match self {
            ActivityWindow::Minutes15 | ActivityWindow::Hour1 => 60,
            ActivityWindow::Hours24 => 1800,
            ActivityWindow::Days7 => 10800,
        }
    }

    /// Its name on the wire (`15m`, `1h`, `24h`, `7d`).
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityWindow::Minutes15 => "15m",
            ActivityWindow::Hour1 => "1h",
            ActivityWindow::Hours24 => "24h",
            ActivityWindow::Days7 => "7d",
        }
    }
}

/// What the rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ActivityBy {
    /// The provider (or MCP server) that answered the call.
    Provider,
    /// The tool called.
    Tool,
    /// The session's client (hook rules' `match.client`: `claude-code`, `copilot`, …).
    Client,
}

/// `activity.query`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ActivityQuery {
    /// How far back.
    pub window: ActivityWindow,
    /// Rows grouped by this key; absent: the total only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<ActivityBy>,
    /// Only calls answered by this provider, exactly (`""`: calls no provider answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Only calls of this tool, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Only calls of sessions of this client, exactly (`""`: calls with no client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// One time bucket's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ActivityBucket {
    /// Tool calls that started in the bucket.
    pub calls: u64,
    /// Of those, the calls that ended in an error (any code, `DENIED` and `TIMEOUT` too).
    pub errors: u64,
    /// Median duration in milliseconds, from the latency histogram (see the docs for its
    /// error); `null` without calls.
    pub p50_ms: Option<f64>,
    /// 95th percentile duration in milliseconds, as `p50Ms`.
    pub p95_ms: Option<f64>,
}

/// The figures of one key (or of every call: the total) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ActivityRow {
    /// The provider, tool or client name; `null` for the total. Calls with no provider or
    /// no client have the key `""` (shown as "other").
    pub key: Option<String>,
    /// Tool calls over the whole window.
    pub calls: u64,
    /// Of those, the calls that ended in an error.
    pub errors: u64,
    /// Median duration over the whole window, in milliseconds; `null` without calls.
    pub p50_ms: Option<f64>,
    /// 95th percentile duration over the whole window, in milliseconds.
    pub p95_ms: Option<f64>,
    /// One per bucket from `from` to `to`, oldest first, empty buckets included.
    pub buckets: Vec<ActivityBucket>,
}

/// `activity.query`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ActivityReport {
    /// The window asked for.
    pub window: ActivityWindow,
    /// The length of each bucket, in seconds (60 for `15m` and `1h`, 1800 for `24h`, 10800
    /// for `7d`).
    pub bucket_secs: u32,
    /// The start of the first bucket (RFC 3339, UTC).
    pub from: String,
    /// The end of the last bucket, the current one (RFC 3339, UTC): buckets are
    /// `[from, from + bucketSecs)`, … up to `to`.
    pub to: String,
    /// Every call matching the filters (`key` is `null`).
    pub total: ActivityRow,
    /// With `by`: one row per key, most calls first, at most the gateway's limit (50).
    pub rows: Vec<ActivityRow>,
    /// Whether keys were left out past the limit (the total still counts them).
    pub truncated: bool,
    /// Whether the ledger is writing to its file (else these are only what this run kept
    /// in memory, and `ledger.reason` says why).
    pub ledger: LedgerState,
}

//! Event streams: pushes, gateway-side filters, and history queries.

use crate::JsonObject;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `push`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Push {
    /// `keep`, `surface` or `inject`.
    pub level: PushLevel,
    /// Event text (required unless `prompt` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// A prompt that starts a full AI turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Stream name; defaults to the provider name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Target session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Push to every bound session (`"all"`-bound providers).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broadcast: bool,
    /// Stored with the stream entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

/// Delivery level of a pushed event (and a filter outcome, with `Drop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PushLevel {
    /// Store in the stream only.
    Keep,
    /// Store and show in the session timeline.
    Surface,
    /// Store, show, and start a turn.
    Inject,
}

/// `filter.set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterSet {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The provider's own stream.
    pub stream: String,
    /// Rules, first match wins.
    #[serde(default)]
    pub rules: Vec<FilterRule>,
}

/// One `filter.set` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterRule {
    /// Regex over the event text.
    #[serde(rename = "match")]
    pub pattern: String,
    /// `drop`, `keep`, `surface` or `inject`.
    pub outcome: FilterOutcome,
}

/// What a filter rule does with a matching event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterOutcome {
    /// Discard the event.
    Drop,
    /// Store only.
    Keep,
    /// Store and show.
    Surface,
    /// Store, show, start a turn.
    Inject,
}

/// `stream.query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamQuery {
    /// Echoed in `stream.history`.
    pub query_id: String,
    /// Which session's streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `stream` (own) or `stream@provider` keys; all own streams when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<String>>,
    /// Newest N events per stream (at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

/// `stream.history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamHistory {
    /// The query's id.
    pub query_id: String,
    /// `stream@provider` → newest-first events.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

/// One event of a stream, as stored and as returned by queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct StreamEntry {
    /// RFC 3339 time the gateway accepted it.
    pub ts: String,
    /// Event text.
    pub event: String,
    /// Level it was delivered at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<PushLevel>,
    /// Metadata pushed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
}

//! Params and results of `streams.history` and `streams.follow`.

use crate::provider::StreamEntry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Params of `streams.history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryParams {
    /// The session.
    pub session_id: String,
    /// `stream` (that stream of every provider) or `stream@provider`; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Newest N events per stream (every kept event when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

/// Result of `streams.history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistory {
    /// The session.
    pub session_id: String,
    /// `stream@provider` → its events, newest first.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

/// Params of `streams.follow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StreamsFollowParams {
    /// The session whose streams to follow.
    pub session_id: String,
}

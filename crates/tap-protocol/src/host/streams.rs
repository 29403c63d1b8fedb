//! Pushed events delivered to a host, and stream history.

use crate::provider::{PushLevel, StreamEntry};
use crate::JsonObject;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `delivery`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The session.
    pub session_id: String,
    /// `surface` = show in the timeline; `inject` = start a turn with it.
    pub level: PushLevel,
    /// Stream name.
    pub stream: String,
    /// The pushing provider's name.
    pub provider: String,
    /// Event text.
    pub event: String,
    /// A prompt for a full AI turn, when the provider sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Metadata pushed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// RFC 3339 time the gateway accepted it.
    pub ts: String,
}

/// `streams.history` (request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryRequest {
    /// Echoed in the answer.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// `stream` (every provider's stream of that name) or `stream@provider`; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Newest N per stream (all kept events when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

/// `streams.history` (answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryReply {
    /// The request's id.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// `stream@provider` → newest-first events.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

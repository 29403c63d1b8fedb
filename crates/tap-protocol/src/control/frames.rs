//! The three frames on the wire (request, response, event) and how a request fails.

use super::{ControlCall, ControlEvent};
use crate::{ErrorCode, Json};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A frame a control client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum ClientFrame {
    /// A method call; answered by exactly one [`ServerFrame::Response`] with the same id.
    #[serde(rename = "request")]
    Request(ControlRequest),
}

/// `{"id": "…", "method": "…", "params": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlRequest {
    /// Chosen by the client; echoed in the response.
    pub id: String,
    /// The method and its params.
    #[serde(flatten)]
    pub call: ControlCall,
}

/// A frame the gateway sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum ServerFrame {
    /// The answer to one request.
    #[serde(rename = "response")]
    Response(ControlResponse),
    /// Something changed.
    #[serde(rename = "event")]
    Event(EventFrame),
}

/// `{"id": "…", "result": {…}}` or `{"id": "…", "error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlResponse {
    /// The request's id; `null` only when the frame was too broken to carry one.
    pub id: Option<String>,
    /// The result or the error.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Success; the shape is the method's result type (see [`ControlCall`]).
    Result(Json),
    /// Failure.
    Error(ControlError),
}

/// Why a request failed: a machine-readable code and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlError {
    /// `AUTH_FAILED`, `INVALID_JSON`, `UNKNOWN_TYPE`, `NOT_FOUND`, `INVALID_SESSION`,
    /// `UNAUTHORIZED`, `RATE_LIMITED`, `INTERNAL`.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

impl ControlError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// `{"seq": N, "event": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventFrame {
    /// 1 for the first event on this connection, then +1 per event. A jump means events
    /// were lost: fetch a snapshot.
    pub seq: u64,
    /// What changed.
    pub event: ControlEvent,
}

impl ServerFrame {
    /// A success response.
    pub fn result(id: impl Into<String>, result: impl Serialize) -> Self {
        Self::Response(ControlResponse {
            id: Some(id.into()),
            outcome: Outcome::Result(serde_json::to_value(result).expect("result serializes")),
        })
    }

    /// An error response.
    pub fn error(id: Option<String>, error: ControlError) -> Self {
        Self::Response(ControlResponse {
            id,
            outcome: Outcome::Error(error),
        })
    }

    /// This frame as JSON text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("server frames serialize")
    }
}

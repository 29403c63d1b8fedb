use crate::ErrorCode;
use serde::de::DeserializeOwned;

/// Why a frame could not become a typed message.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Not JSON, not an object, or no string `type`.
    InvalidJson(String),
    /// A `type` this protocol does not have. The connection stays open.
    UnknownType(String),
    /// A known `type` whose fields are missing or mistyped.
    InvalidMessage {
        /// The message's `type`.
        type_name: String,
        /// What is wrong with it.
        detail: String,
    },
}

impl DecodeError {
    /// The error code the spec asks for.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownType(_) => ErrorCode::UnknownType,
            Self::InvalidJson(_) | Self::InvalidMessage { .. } => ErrorCode::InvalidJson,
        }
    }

    /// A message a provider author can act on.
    pub fn message(&self) -> String {
        match self {
            Self::InvalidJson(d) => format!("Malformed message: {d}"),
            Self::UnknownType(t) => format!("Unknown message type '{t}'"),
            Self::InvalidMessage { type_name, detail } => {
                format!("Invalid '{type_name}' message: {detail}")
            }
        }
    }

    /// The `type` of the offending message, when it had one.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Self::InvalidJson(_) => None,
            Self::UnknownType(t) => Some(t),
            Self::InvalidMessage { type_name, .. } => Some(type_name),
        }
    }
}

/// Decodes one frame into `T`, one of the tagged message enums, whose known tags are `types`.
///
/// The fast path is a single typed parse. Only when it fails does the frame get parsed a
/// second time, loosely, to tell "not JSON" from "unknown type" from "bad fields".
pub fn decode<T: DeserializeOwned>(frame: &[u8], types: &[&str]) -> Result<T, DecodeError> {
    match serde_json::from_slice::<T>(frame) {
        Ok(msg) => Ok(msg),
        Err(typed_err) => Err(classify(frame, types, typed_err)),
    }
}

fn classify(frame: &[u8], types: &[&str], typed_err: serde_json::Error) -> DecodeError {
    let value: serde_json::Value = match serde_json::from_slice(frame) {
        Ok(v) => v,
        Err(e) => return DecodeError::InvalidJson(e.to_string()),
    };
    let Some(obj) = value.as_object() else {
        return DecodeError::InvalidJson("expected a JSON object".into());
    };
    let Some(type_name) = obj.get("type").and_then(|t| t.as_str()) else {
        return DecodeError::InvalidJson("missing string field 'type'".into());
    };
    if !types.contains(&type_name) {
        return DecodeError::UnknownType(type_name.to_string());
    }
    DecodeError::InvalidMessage {
        type_name: type_name.to_string(),
        detail: strip_position(&typed_err.to_string()),
    }
}

/// serde_json appends "at line 1 column 57", which means nothing to the sender of a
/// one-line frame.
fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

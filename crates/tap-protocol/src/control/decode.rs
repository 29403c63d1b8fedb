//! Decoding a client frame into a [`ControlRequest`], with the error to answer otherwise.

use super::{ControlCall, ControlError, ControlRequest};
use crate::{ErrorCode, Json};

/// Why a client frame could not become a [`ControlRequest`]; answered with an error
/// response carrying [`RequestError::id`] when the frame had one.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestError {
    /// The request's id, if it could be read.
    pub id: Option<String>,
    /// The error to answer with.
    pub error: ControlError,
}

impl ControlRequest {
    /// Decodes one client frame.
    ///
    /// Lenient where that helps old and new clients alike: unknown fields are ignored, and
    /// `params` may be omitted (or `null`) for methods that take none. Strict where a
    /// mistake would otherwise go unnoticed: a frame that is not a request, an unknown
    /// method (`UNKNOWN_TYPE`) and bad params (`INVALID_JSON`) are errors.
    pub fn decode(frame: &[u8]) -> Result<Self, RequestError> {
        let fail = |id: Option<String>, code, message: String| RequestError {
            id,
            error: ControlError::new(code, message),
        };
        let value: Json = serde_json::from_slice(frame).map_err(|e| {
            fail(
                None,
                ErrorCode::InvalidJson,
                format!("Malformed frame: {e}"),
            )
        })?;
        let Json::Object(mut obj) = value else {
            return Err(fail(
                None,
                ErrorCode::InvalidJson,
                "A frame must be a JSON object".into(),
            ));
        };
        let id = match obj.remove("id") {
            Some(Json::String(id)) => Some(id),
            _ => None,
        };
        match obj.get("type").and_then(Json::as_str) {
            Some("request") => {}
            Some(other) => {
                return Err(fail(
                    id,
                    ErrorCode::UnknownType,
                    format!("Unknown frame type '{other}'; clients send only 'request'"),
                ))
            }
            None => {
                return Err(fail(
                    id,
                    ErrorCode::InvalidJson,
                    "A frame needs a string 'type'".into(),
                ))
            }
        }
        let Some(id) = id else {
            return Err(fail(
                None,
                ErrorCode::InvalidJson,
                "A request needs a string 'id'".into(),
            ));
        };
        let method = match obj.remove("method") {
            Some(Json::String(m)) => m,
            _ => {
                return Err(fail(
                    Some(id),
                    ErrorCode::InvalidJson,
                    "A request needs a string 'method'".into(),
                ))
            }
        };
        if !ControlCall::METHODS.contains(&method.as_str()) {
            return Err(fail(
                Some(id),
                ErrorCode::UnknownType,
                format!("Unknown method '{method}'"),
            ));
        }
        let params = match obj.remove("params") {
            None | Some(Json::Null) => Json::Object(Default::default()),
            Some(p) => p,
        };
        let tagged = serde_json::json!({ "method": method, "params": params });
        match serde_json::from_value::<ControlCall>(tagged) {
            Ok(call) => Ok(Self { id, call }),
            Err(e) => Err(fail(
                Some(id),
                ErrorCode::InvalidJson,
                format!("Invalid params for '{method}': {e}"),
            )),
        }
    }
}

//! Gateway refusals as JSON-RPC errors.

use crate::error::Error;
use rmcp::ErrorData as McpError;
use tap_protocol::ErrorCode;

/// A gateway refusal as a JSON-RPC error (for requests that cannot be served at all; a
/// tool's own failure is an `isError` result instead).
pub(crate) fn gateway_error(Error { code, message, .. }: Error) -> McpError {
    match code {
        ErrorCode::InvalidSession | ErrorCode::InvalidJson | ErrorCode::NotFound => {
            McpError::invalid_params(format!("{code}: {message}"), None)
        }
        _ => McpError::internal_error(format!("{code}: {message}"), None),
    }
}

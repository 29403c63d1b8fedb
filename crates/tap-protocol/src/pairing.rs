//! Pairing of external providers (browser tabs, standalone scripts), as the control plane
//! and `tap pairing list --json` show it.

use crate::JsonObject;
use serde::{Deserialize, Serialize};

/// One pairing: a pending request, or a provider that paired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PairingEntry {
    /// Stable id (`pr-…`), used by deny / revoke / configure.
    pub id: String,
    /// Where it stands.
    pub state: PairingState,
    /// The 6-digit code the user types into the provider; present only while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The `Origin` header of the provider's WebSocket (browser providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Remote address of the provider's socket.
    pub remote: String,
    /// Name the provider sent, if any (in `auth` or, once bound, in `hello`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata the provider sent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// RFC 3339 time of the request.
    pub created_at: String,
    /// RFC 3339 time the code stops working (pending only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The one session the provider may bind to (default: the foreground session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Whether the provider's token survives gateway restarts (only its hash is stored).
    pub remember: bool,
    /// Whether a provider holding this pairing's token is connected now.
    pub connected: bool,
}

/// Where a pairing stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PairingState {
    /// Waiting for the user to type the code into the provider.
    Pending,
    /// The code was confirmed; the provider holds a token.
    Paired,
}

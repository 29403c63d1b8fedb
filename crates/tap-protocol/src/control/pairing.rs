//! Params and results of the `pairing.*` methods.

use crate::pairing::PairingEntry;
use serde::{Deserialize, Serialize};

/// Params naming one pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingId {
    /// The pairing's id (`PairingEntry.id`).
    pub id: String,
}

/// Params of `pairing.configure`; absent fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct PairingConfigure {
    /// The pairing's id.
    pub id: String,
    /// The one session the provider may bind to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Keep the provider's token (its hash) across gateway restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<bool>,
}

/// Result of `pairing.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingList {
    /// Pending requests (newest first), then paired providers (newest first).
    pub pairings: Vec<PairingEntry>,
}

/// Result of `pairing.denyAll`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingDenyAllResult {
    /// How many pending requests were denied.
    pub denied: usize,
}

/// Result of `pairing.configure`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingConfigureResult {
    /// The entry after the change.
    pub pairing: PairingEntry,
}

//! Signing in: `auth` and the snapshot it returns, and `ui.login` links for the panel.

use crate::host::GatewayStatus;
use crate::pairing::PairingEntry;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Params of `auth`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuthParams {
    /// The control token (`$TAP_HOME/control-token`, `ctk-…`).
    pub token: String,
}

/// Never prints the token, so a request can be logged safely.
impl fmt::Debug for AuthParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthParams")
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Result of `auth` and `snapshot`: everything the panel shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snapshot {
    /// Sessions and providers.
    pub status: GatewayStatus,
    /// Pending requests, then paired providers.
    pub pairings: Vec<PairingEntry>,
    /// Where the gateway keeps its token and state files.
    pub files: FileLocations,
    /// The seq of the last event this connection sent before the snapshot (0: none yet).
    /// Events with a higher seq are newer than the snapshot.
    pub seq: u64,
}

/// Where the gateway keeps its files. Paths are not secrets; the files' contents are
/// (each is mode 0600).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct FileLocations {
    /// `TAP_HOME`.
    pub data_dir: String,
    /// The gateway token providers authenticate with.
    pub provider_token: String,
    /// The same token where the spec's providers look (`COPILOT_HOME`), when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copilot_provider_token: Option<String>,
    /// The session-host token.
    pub host_token: String,
    /// The control-plane token; absent when the embedding app keeps it elsewhere (the
    /// desktop app: the OS keyring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_token: Option<String>,
    /// `gateway.json`: address, pid and start time.
    pub state: String,
    /// `settings.json`.
    pub settings: String,
    /// `paired-providers.json`: hashes of remembered pairings' tokens.
    pub paired_providers: String,
}

/// Result of `ui.login`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UiLoginResult {
    /// `http://127.0.0.1:PORT/#login=CODE`: open it in a browser. The code is in the
    /// fragment, which browsers never send to a server; it works once.
    pub url: String,
    /// RFC 3339 time after which the code no longer works.
    pub expires_at: String,
}

/// Never prints the URL (it carries a login code), so a result can be logged safely.
impl fmt::Debug for UiLoginResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UiLoginResult")
            .field("url", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

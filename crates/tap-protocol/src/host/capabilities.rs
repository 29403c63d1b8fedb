//! What a host reports about its session beyond busy/idle: the agent's mode and model, and
//! what the host can do for the user (its UI) — read by `tap_get_session_state` and by
//! whoever needs the host to ask the user something (the approvals prompt).

use serde::{Deserialize, Serialize};

/// `capabilities` in `session.register` / `session.state`: what the host can do. Every
/// field is optional on the wire; absent reads as "cannot".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// Dialogs the host can show its user itself.
    #[serde(default)]
    pub ui: UiCapabilities,
    /// Modes the host can switch the session to when asked (for example `interactive`,
    /// `plan`, `autopilot`); empty: the host cannot change its mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<String>,
    /// The agent runtime as it names itself (an MCP client's `clientInfo`, the Copilot
    /// CLI's version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<HostClient>,
}

/// `capabilities.ui`: dialogs the host can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UiCapabilities {
    /// A yes/no confirmation (the Copilot CLI's `session.ui.confirm`).
    #[serde(default)]
    pub confirm: bool,
    /// A form the user fills in (MCP elicitation, the Copilot CLI's `session.ui.elicitation`).
    #[serde(default)]
    pub elicitation: bool,
}

/// `capabilities.client`: the runtime's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct HostClient {
    /// `copilot-cli`, `claude-code`, ….
    pub name: String,
    /// Its version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

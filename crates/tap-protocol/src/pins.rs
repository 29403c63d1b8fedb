//! Pinned tool definitions (`docs/pins.md`): the first definition seen of each tool is
//! pinned; a later one that differs is held (not offered to sessions) until the user
//! accepts it. What `pins.*` on the control plane, `tap pins` and the panel say and send.

use serde::{Deserialize, Serialize};

/// The answer of every `pins.*` method: what is held, what is pinned, and for which
/// providers pinning is off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PinsList {
    /// Tools whose offered definition is not the pinned one, or that could not be pinned:
    /// none of them is offered to sessions until accepted. Sorted by provider and tool.
    pub held: Vec<HeldTool>,
    /// Every pinned definition, sorted by provider and tool.
    pub pins: Vec<PinInfo>,
    /// Providers (by name; an MCP server's is `mcp-<server>`) whose tools are not pinned.
    pub disabled: Vec<String>,
    /// Why `pins.json` could not be read, when it could not: then every provider tool is
    /// held (fail closed) until the file is fixed or moved aside and the gateway restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The file.
    pub path: String,
}

/// Why a tool is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum HeldReason {
    /// Its definition differs from the pinned one.
    Changed,
    /// It was never seen, and the pins are at their limit: it cannot be pinned.
    Full,
    /// `pins.json` could not be read.
    Unreadable,
}

/// One held tool: what was pinned, what is offered now, and the difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct HeldTool {
    /// The provider's name (`hello.name`; `mcp-<server>` for an MCP server).
    pub provider: String,
    /// The tool's name.
    pub tool: String,
    /// Why it is held.
    pub reason: HeldReason,
    /// SHA-256 (hex) of the pinned definition's canonical text, if one is pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_hash: Option<String>,
    /// The pinned definition's canonical text, when it was kept (a definition over the
    /// size limit is pinned by its hash alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    /// SHA-256 (hex) of the offered definition: `pins.accept` may name it so that only
    /// what was reviewed is accepted.
    pub offered_hash: String,
    /// The offered definition's canonical text, when within the size limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered: Option<String>,
    /// A unified diff, field by field (description, input schema, annotations), of the
    /// pinned and the offered definitions; empty when either text is missing.
    pub diff: String,
    /// RFC 3339: when this definition was first held.
    pub since: String,
}

/// One pinned definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PinInfo {
    /// The provider's name.
    pub provider: String,
    /// The tool's name.
    pub tool: String,
    /// SHA-256 (hex) of its canonical text.
    pub hash: String,
    /// RFC 3339: when it was pinned (first seen or accepted).
    pub pinned_at: String,
    /// Whether its text is kept (else its hash alone: it was over the size limit).
    pub text_kept: bool,
}

/// Params of `pins.accept` and `pins.forget`: one tool of a provider, or all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PinRef {
    /// The provider's name (an MCP server's name is taken as `mcp-<server>` when no
    /// provider has the name itself).
    pub provider: String,
    /// The tool; absent: every tool of the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `pins.accept` only: the `offeredHash` reviewed; refused if the held definition has
    /// changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// Params of `pins.setEnabled`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PinsEnabled {
    /// The provider's name.
    pub provider: String,
    /// `false`: its tools are offered whatever their definition, and not pinned.
    pub enabled: bool,
}

//! Pre-tool-use hook rules and the gates they ask (spec: "Hook rules — declarative API").

use super::Transform;
use crate::{Json, JsonObject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `hello.hooks`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hooks {
    /// Rules evaluated before each tool use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_pre_tool_use: Option<Vec<HookRule>>,
    /// Prompt-section transforms; `null` removes one (in `hooks.update`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transforms: Option<BTreeMap<String, Option<Transform>>>,
}

/// An `onPreToolUse` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRule {
    /// What the rule matches.
    #[serde(rename = "match", default)]
    pub matcher: HookMatch,
    /// `deny`, `context` or `gate`.
    pub action: HookAction,
    /// Why (for `deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Added context (for `context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Gate id echoed in `gate.check` (for `gate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// Allow instead of deny when the gate does not answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_open: bool,
}

/// `match` of a hook rule. Unknown keys (the spec's example shows `file`) are kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HookMatch {
    /// Tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Regex over `JSON.stringify(args)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
    /// Only this provider's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Only sessions opened with this profile (a gateway extension to the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Only sessions of this client: the MCP session name (`/mcp/<name>`, what `tap connect`
    /// gives), or the session host's `hostName` (a gateway extension to the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Matcher keys this gateway does not interpret.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The action of a hook rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookAction {
    /// Block the call with `reason`.
    Deny,
    /// Allow, adding `content` as context.
    Context,
    /// Ask the provider with `gate.check`.
    Gate,
}

/// `hooks.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HooksUpdate {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// New pre-tool-use rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_pre_tool_use: Option<Vec<HookRule>>,
    /// Transform changes; `null` removes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transforms: Option<BTreeMap<String, Option<Transform>>>,
}

/// `gate.check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateCheck {
    /// The rule's gate id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// Globally unique check id.
    pub call_id: String,
    /// The session about to use the tool.
    pub session_id: String,
    /// Tool name.
    pub tool: String,
    /// Tool arguments.
    pub args: Json,
}

/// `gate.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateResult {
    /// The rule's gate id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_id: Option<String>,
    /// The `gate.check` call id.
    pub call_id: String,
    /// The decision.
    pub decision: GateDecision,
    /// Why (denial reason or added context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateDecision {
    /// Proceed.
    Allow,
    /// Block.
    Deny,
    /// Proceed, adding `reason` as context.
    Context,
}

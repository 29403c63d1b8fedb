//! Tool-call approvals (`docs/approvals.md`): the rules of `$TAP_HOME/policy.json`, the
//! grants of `$TAP_HOME/grants.json`, and the calls waiting for the user. The files hold
//! these types as they are; `approvals.*` and `policy.*` on the control plane, `tap
//! approvals`, `tap policy` and the panel send and show them.

use crate::{Json, JsonObject};
use serde::{Deserialize, Serialize};

/// What a rule (or the default) makes of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum PolicyAction {
    /// The call goes ahead.
    Allow,
    /// The call waits for the user's answer.
    Ask,
    /// The call is refused (`DENIED`); it never reaches the provider.
    Deny,
}

impl PolicyAction {
    /// Its name in `policy.json` and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            PolicyAction::Allow => "allow",
            PolicyAction::Ask => "ask",
            PolicyAction::Deny => "deny",
        }
    }
}

/// One argument pattern: the value at a JSON pointer (RFC 6901) into the call's arguments,
/// as text (a string as it is, anything else as compact JSON), must match a regex. An
/// absent value never matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgPattern {
    /// E.g. `/path` or `/options/0/name`; `""` is the whole arguments object.
    pub pointer: String,
    /// A regex (Rust `regex` syntax, unanchored: write `^…$` to match the whole value).
    pub regex: String,
}

/// What a rule applies to. An absent key matches anything; every present key must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleMatch {
    /// A tool-name glob (`*` any run of characters, `?` one), as profiles write them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The provider (or MCP server) name offering the tool, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// A session id, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The session's client, exactly as hook rules' `match.client` (the session host's
    /// `hostName`, or the MCP session name, e.g. `claude-code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The profile the session was opened with, exactly (`match.profile` of hook rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Every pattern must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<ArgPattern>>", optional))]
    pub args: Vec<ArgPattern>,
}

/// One rule of `policy.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    /// Unique within the file: `policy.set` replaces the rule of this id, `policy.remove`
    /// removes it, and decisions name it.
    pub id: String,
    /// What it applies to.
    #[serde(rename = "match", default)]
    // Optional in TypeScript as on the wire: absent means every call.
    #[cfg_attr(feature = "ts", ts(as = "Option<RuleMatch>", optional))]
    pub matcher: RuleMatch,
    /// What it makes of a call it applies to.
    pub action: PolicyAction,
    /// Said to the agent when the rule denies, and to the user when it asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `$TAP_HOME/policy.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyFile {
    /// In order: the first rule that applies decides.
    #[serde(default)]
    pub rules: Vec<PolicyRule>,
    /// How long a call waits for the user before it is denied, in seconds (default: the
    /// gateway's `DEFAULT_APPROVAL_TIMEOUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_timeout_secs: Option<u64>,
}

/// What a grant makes of the calls it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum GrantDecision {
    /// Allowed without asking.
    Allow,
    /// Denied without asking (a remembered deny).
    Deny,
}

/// How long an answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum AnswerScope {
    /// This call only: nothing is remembered.
    Call,
    /// Every call of this tool in this session.
    Session,
    /// Every call of this tool for `minutes` minutes.
    Minutes,
    /// Every call of this tool, until revoked.
    Always,
}

/// One remembered answer (`$TAP_HOME/grants.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Grant {
    /// Its id (`tap approvals revoke ID`).
    pub id: String,
    /// Allow or deny.
    pub decision: GrantDecision,
    /// `session`, `minutes` or `always` (never `call`).
    pub scope: AnswerScope,
    /// The tool's name, exactly.
    pub tool: String,
    /// The provider (or MCP server) that offered it.
    pub provider: String,
    /// The session, for a `session` grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Only calls whose arguments match every pattern.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<ArgPattern>>", optional))]
    pub args: Vec<ArgPattern>,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When a `minutes` grant ends (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// `$TAP_HOME/grants.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GrantsFile {
    /// Every grant, oldest first.
    #[serde(default)]
    pub grants: Vec<Grant>,
}

/// A call waiting for the user: everything a prompt shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct WaitingCall {
    /// Its approval id (`tap approvals approve ID`).
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The provider (or MCP server) offering it.
    pub provider: String,
    /// The session.
    pub session_id: String,
    /// The session's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_label: Option<String>,
    /// The session's client (as `match.client` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The call's arguments, as the provider would get them.
    pub args: Json,
    /// The tool's MCP annotations (`destructiveHint`, …), as declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<JsonObject>,
    /// Why it is asked: `rule <id>`, `default: destructiveHint`, ….
    pub why: String,
    /// The asking rule's `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Since when it waits (RFC 3339).
    pub since: String,
    /// When it is denied unanswered (RFC 3339).
    pub deadline: String,
}

/// `approvals.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalsList {
    /// Oldest first.
    pub waiting: Vec<WaitingCall>,
}

/// `approvals.approve`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalApprove {
    /// The waiting call's id.
    pub id: String,
    /// How long the approval holds (default `call`).
    #[serde(rename = "for", default = "call_scope")]
    // Optional in TypeScript as on the wire: absent means `call`.
    #[cfg_attr(feature = "ts", ts(as = "Option<AnswerScope>", optional))]
    pub scope: AnswerScope,
    /// For `minutes`: how many (1 to a week's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minutes: Option<u64>,
    /// The grant covers only calls whose arguments match these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Optional in TypeScript as on the wire: absent means none.
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<ArgPattern>>", optional))]
    pub args_pattern: Vec<ArgPattern>,
}

fn call_scope() -> AnswerScope {
    AnswerScope::Call
}

/// `approvals.deny`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalDeny {
    /// The waiting call's id.
    pub id: String,
    /// Remember the deny: `session`, `minutes` (with `minutes`) or `always`; absent or
    /// `call`: this call only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<AnswerScope>,
    /// For `remember: minutes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minutes: Option<u64>,
}

/// What an answer did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalAnswered {
    /// The grant it made, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
}

/// `approvals.grants`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GrantsList {
    /// Live grants, oldest first (expired ones are gone).
    pub grants: Vec<Grant>,
}

/// `approvals.revoke`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantRef {
    /// The grant's id.
    pub grant: String,
}

/// `policy.list`: the rules in force, and what is wrong with the file if anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PolicyList {
    /// The file's path.
    pub path: String,
    /// The rules, in order.
    pub rules: Vec<PolicyRule>,
    /// How long a call waits for the user, in seconds.
    pub approval_timeout_secs: u64,
    /// Why the file could not be used (every call of a provider's tool is then asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `policy.set`'s params: a rule to add (at the end) or to replace (in place, by id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicySet {
    /// The rule.
    pub rule: PolicyRule,
}

/// `policy.remove`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRuleRef {
    /// The rule's id.
    pub id: String,
}

/// How a call's approval ended (`approval.resolved`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ApprovalOutcome {
    /// The user approved.
    Approved,
    /// The user denied.
    Denied,
    /// Nobody answered in time: denied.
    TimedOut,
    /// The caller went away (cancelled, disconnected, session ended): denied.
    Gone,
}

/// `approvals.history`'s params: a page of the decisions the ledger kept, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalsHistoryParams {
    /// Only decisions of calls that started before this time (paging back: the last page's
    /// `nextBeforeUs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub before_us: Option<u64>,
    /// At most this many (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// One decision, read from a tool call's trace (its root span's `approval.*` attributes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    /// The call's trace (`traces.get`).
    pub trace_id: String,
    /// When the call started, in microseconds since the epoch.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub start_us: u64,
    /// The tool.
    pub tool: String,
    /// The provider (or MCP server) offering it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `allow` or `deny`.
    pub decision: String,
    /// Who or what decided: `rule`, `grant`, `user`, `timeout`, `cancelled`,
    /// `session-ended`, `limit`, `policy-error`.
    pub by: String,
    /// What asked, for a call that waited: `rule` or `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<String>,
    /// The rule that decided or asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The grant that decided, or that the answer made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// The approval id, for a call that waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

/// `approvals.history`: decisions other than the defaults' silent allows, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalsHistory {
    /// Newest first.
    pub decisions: Vec<ApprovalDecision>,
    /// Pass as `beforeUs` for the next (older) page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub next_before_us: Option<u64>,
    /// Whether the ledger is writing (else these are only what this run kept in memory).
    pub ledger: crate::ledger::LedgerState,
}

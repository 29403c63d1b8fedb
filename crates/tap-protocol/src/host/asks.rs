//! What the gateway asks of a session host's user: approving a waiting tool call in the
//! host's own dialog (`approval.ask` / `approval.answer` / `approval.withdrawn`), and
//! switching the session's mode (`session.mode.set` / `session.mode.result`).

use serde::{Deserialize, Serialize};

/// `approval.ask`: a call of this session waits for the user's approval; the host shows
/// it in its own dialog and answers with `approval.answer`. The tray, panel and CLI can
/// answer the same call meanwhile: the first answer decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalAsk {
    /// The session whose call waits.
    pub session_id: String,
    /// The waiting call's id (`tap approvals approve ID`), echoed in `approval.answer`.
    pub approval_id: String,
    /// The tool called.
    pub tool: String,
    /// The provider (or MCP server) offering it.
    pub provider: String,
    /// One paragraph for the user: the tool, its provider, the arguments' summary, who
    /// else can answer and when the call is denied (cut at a limit).
    pub message: String,
    /// The arguments as compact JSON, secret-looking values masked, cut at a limit.
    pub args: String,
    /// What the user can answer, in the order to show.
    pub choices: Vec<ApprovalChoice>,
}

/// One answer the user can give to an `approval.ask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalChoice {
    /// What `approval.answer`'s `answer` says when chosen.
    pub value: HostApprovalAnswer,
    /// The label to show.
    pub title: String,
}

/// `approval.answer`: the user's answer to an `approval.ask`, at most once per approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalAnswer {
    /// The `approval.ask`'s `approvalId`.
    pub approval_id: String,
    /// What the user chose.
    pub answer: HostApprovalAnswer,
}

/// An answer to an `approval.ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostApprovalAnswer {
    /// Approve this call only.
    Once,
    /// Approve this tool for the rest of the session.
    Session,
    /// Approve this tool for an hour.
    Hour,
    /// Always approve this tool.
    Always,
    /// Deny the call.
    Deny,
    /// No answer (the dialog was closed, or could not be shown): the call keeps waiting
    /// for the tray, panel or CLI.
    Dismissed,
}

impl HostApprovalAnswer {
    /// The wire value (`once`, …, `dismissed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Session => "session",
            Self::Hour => "hour",
            Self::Always => "always",
            Self::Deny => "deny",
            Self::Dismissed => "dismissed",
        }
    }
}

/// `approval.withdrawn`: an asked approval was decided elsewhere (tray, panel, CLI) or
/// its wait ended; the host may close its dialog, and an answer sent now is ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalWithdrawn {
    /// The `approval.ask`'s `approvalId`.
    pub approval_id: String,
    /// How the wait ended.
    pub outcome: WithdrawnOutcome,
}

/// How an asked approval ended without the host's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithdrawnOutcome {
    /// Approved elsewhere.
    Approved,
    /// Denied elsewhere, or the call went away (cancelled, its session ended).
    Denied,
    /// Nobody answered within the approval timeout: denied.
    TimedOut,
}

/// `session.mode.set`: the user approved switching the session to `mode`
/// (`tap_set_session_mode`); the host switches and answers with `session.mode.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModeSet {
    /// Echoed in `session.mode.result`.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// One of the modes the host listed in `capabilities.modes`.
    pub mode: String,
}

/// `session.mode.result`: whether the host switched the mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionModeResult {
    /// The `session.mode.set`'s `requestId`.
    pub request_id: String,
    /// Switched.
    pub ok: bool,
    /// The mode now, when switched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Why not, when not switched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

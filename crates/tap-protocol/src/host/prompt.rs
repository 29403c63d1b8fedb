//! What the session's providers add to its prompt: transformed sections, ambient context,
//! and startup context.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `prompt.apply`: the host is about to submit a prompt (Copilot's
/// `onUserPromptSubmitted`) and asks for the session's transforms and context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptApply {
    /// Echoed in `prompt.applied`.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// The user's prompt text (returned unchanged; transforms act on sections).
    #[serde(default)]
    pub prompt: String,
    /// Prompt sections the host can place: name → current text. Transforms apply to
    /// these only; a transform for a section not listed here is skipped.
    #[serde(default)]
    pub sections: BTreeMap<String, String>,
}

/// `prompt.applied`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptApplied {
    /// The request's id.
    pub request_id: String,
    /// The session.
    pub session_id: String,
    /// The prompt, unchanged.
    pub prompt: String,
    /// Every section the host sent, transformed. `safety` and `identity` were
    /// transformed last and belong after the others in the assembled prompt.
    pub sections: BTreeMap<String, String>,
    /// The ambient `context` of every bound provider, in bind order (empty ones left out).
    pub context: Vec<String>,
}

/// `session.context`: one provider's `startup_context`, sent once per bind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The session.
    pub session_id: String,
    /// The provider's name.
    pub provider: String,
    /// The provider's `startup_context`, for the session's start context.
    pub startup_context: String,
}

//! What a provider adds to a session's prompt: section transforms (static or by callback)
//! and ambient context.

use serde::{Deserialize, Serialize};

/// A prompt-section transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    /// How the section changes.
    pub action: TransformAction,
    /// Static content for append / prepend / replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// How a transform changes a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransformAction {
    /// Add content after the section.
    Append,
    /// Add content before the section.
    Prepend,
    /// Replace the section.
    Replace,
    /// Ask the provider with `transform.request`.
    Callback,
}

/// `transform.request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransformRequest {
    /// Globally unique request id.
    pub call_id: String,
    /// The session whose prompt is being built.
    pub session_id: String,
    /// Section name.
    pub section: String,
    /// The section's content so far.
    pub current: String,
}

/// `transform.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransformResult {
    /// The `transform.request` call id.
    pub call_id: String,
    /// The new section content.
    pub content: String,
}

/// `context.update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUpdate {
    /// Correlates the `ack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Only this session (else every bound session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The new ambient context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

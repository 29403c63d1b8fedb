//! Hook rules, the gates they ask (`gate.check` answered by a handler) and prompt-section
//! transforms, static or answered by a handler (`transform.request`).

use futures_util::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;
use tap_protocol::provider::{
    GateCheck, GateDecision, HookAction, HookMatch, HookRule, Transform as WireTransform,
    TransformAction, TransformRequest,
};

/// A gate's answer to a `gate.check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The tool use goes ahead.
    Allow,
    /// The tool use is blocked; the agent reads the reason.
    Deny(String),
    /// The tool use goes ahead with this added to the conversation.
    Context(String),
}

impl Verdict {
    /// The wire decision and reason.
    pub(crate) fn into_wire(self) -> (GateDecision, Option<String>) {
        match self {
            Verdict::Allow => (GateDecision::Allow, None),
            Verdict::Deny(r) => (GateDecision::Deny, Some(r)),
            Verdict::Context(c) => (GateDecision::Context, Some(c)),
        }
    }
}

pub(crate) type GateHandler = Arc<dyn Fn(GateCheck) -> BoxFuture<'static, Verdict> + Send + Sync>;

pub(crate) fn gate_handler<F, Fut>(f: F) -> GateHandler
where
    F: Fn(GateCheck) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Verdict> + Send + 'static,
{
    Arc::new(move |check| Box::pin(f(check)))
}

pub(crate) type TransformHandler =
    Arc<dyn Fn(TransformRequest) -> BoxFuture<'static, String> + Send + Sync>;

/// A prompt-section transform: static content, or a handler asked each time the session
/// builds its prompt (the gateway waits 2 s for it, then keeps the section as it was).
#[derive(Clone)]
pub struct Transform {
    pub(crate) wire: WireTransform,
    pub(crate) handler: Option<TransformHandler>,
}

impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transform")
            .field("action", &self.wire.action)
            .field("content", &self.wire.content)
            .finish()
    }
}

impl Transform {
    fn fixed(action: TransformAction, content: impl Into<String>) -> Self {
        Self {
            wire: WireTransform {
                action,
                content: Some(content.into()),
            },
            handler: None,
        }
    }

    /// Adds `content` after the section.
    pub fn append(content: impl Into<String>) -> Self {
        Self::fixed(TransformAction::Append, content)
    }

    /// Adds `content` before the section.
    pub fn prepend(content: impl Into<String>) -> Self {
        Self::fixed(TransformAction::Prepend, content)
    }

    /// Replaces the section with `content`.
    pub fn replace(content: impl Into<String>) -> Self {
        Self::fixed(TransformAction::Replace, content)
    }

    /// The section becomes what `handler` returns for the request (its `current` content,
    /// its session).
    pub fn callback<F, Fut>(handler: F) -> Self
    where
        F: Fn(TransformRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = String> + Send + 'static,
    {
        Self {
            wire: WireTransform {
                action: TransformAction::Callback,
                content: None,
            },
            handler: Some(Arc::new(move |r| Box::pin(handler(r)))),
        }
    }

    /// A transform as the protocol spells it; a `callback` one has no handler here, so its
    /// requests go unanswered (the gateway keeps the section after 2 s).
    pub(crate) fn from_wire(wire: WireTransform) -> Self {
        Self {
            wire,
            handler: None,
        }
    }
}

fn rule(tool: &str, action: HookAction) -> HookRule {
    HookRule {
        matcher: HookMatch {
            tool: Some(tool.to_string()),
            ..Default::default()
        },
        action,
        reason: None,
        content: None,
        gate_id: None,
        fail_open: false,
    }
}

/// A rule denying uses of `tool` with `reason`.
pub fn deny_rule(tool: &str, reason: impl Into<String>) -> HookRule {
    HookRule {
        reason: Some(reason.into()),
        ..rule(tool, HookAction::Deny)
    }
}

/// A rule adding `content` to the conversation when `tool` is used.
pub fn context_rule(tool: &str, content: impl Into<String>) -> HookRule {
    HookRule {
        content: Some(content.into()),
        ..rule(tool, HookAction::Context)
    }
}

/// A rule asking the gate `gate_id` (see [`crate::Builder::gate`]) before `tool` is used;
/// silence past 5 s denies.
pub fn gate_rule(tool: &str, gate_id: impl Into<String>) -> HookRule {
    HookRule {
        gate_id: Some(gate_id.into()),
        ..rule(tool, HookAction::Gate)
    }
}

/// Narrows a rule from [`deny_rule`], [`context_rule`] or [`gate_rule`].
pub trait RuleExt {
    /// Only when the arguments, as JSON text, match this regex.
    fn args(self, regex: impl Into<String>) -> Self;
    /// For a gate: allow instead of deny when the gate does not answer in time.
    fn fail_open(self) -> Self;
}

impl RuleExt for HookRule {
    fn args(mut self, regex: impl Into<String>) -> Self {
        self.matcher.args = Some(regex.into());
        self
    }

    fn fail_open(mut self) -> Self {
        self.fail_open = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_are_spelled_as_the_spec_shows_them() {
        let r = gate_rule("shell", "ci").args("git push").fail_open();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"match": {"tool": "shell", "args": "git push"}, "action": "gate",
                   "gateId": "ci", "failOpen": true})
        );
        assert_eq!(
            serde_json::to_value(deny_rule("rm", "No.")).unwrap(),
            json!({"match": {"tool": "rm"}, "action": "deny", "reason": "No."})
        );
    }

    #[test]
    fn a_callback_transform_goes_on_the_wire_without_its_handler() {
        let t = Transform::callback(|r| async move { r.current });
        assert_eq!(
            serde_json::to_value(&t.wire).unwrap(),
            json!({"action": "callback"})
        );
        assert!(t.handler.is_some());
        assert_eq!(
            Verdict::Deny("red".into()).into_wire(),
            (GateDecision::Deny, Some("red".into()))
        );
    }
}

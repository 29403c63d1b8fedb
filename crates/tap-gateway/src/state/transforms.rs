//! Each provider's transforms and context per session, and pending `transform.request`s
//! (lives in `State`); see the module doc of `transforms`.

use crate::error::Error;
use crate::limits::MAX_SECTION_NAME_LEN;
use std::collections::{BTreeMap, HashMap};
use tap_protocol::provider::{Transform, TransformAction};
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// Sections no provider may replace, prepend to or rewrite by callback.
pub(crate) const PROTECTED_SECTIONS: [&str; 2] = ["safety", "identity"];

pub(crate) type Refusal = Error;

/// What one provider contributes to its session's prompts.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProviderPrompt {
    pub transforms: BTreeMap<String, Transform>,
    pub context: Option<String>,
}

pub(crate) struct Pending {
    pub provider: String,
    pub tx: oneshot::Sender<String>,
}

/// Transforms, contexts and pending `transform.request`s (lives in `State`).
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) providers: HashMap<(String, String), ProviderPrompt>,
    pub(crate) pending: HashMap<String, Pending>,
}

/// Checks a transform map from `hello.hooks.transforms` or `hooks.update.transforms`
/// (`null` entries are removals and always valid).
pub(crate) fn validate(transforms: &BTreeMap<String, Option<Transform>>) -> Result<(), Refusal> {
    for (section, t) in transforms {
        if section.is_empty()
            || section.len() > MAX_SECTION_NAME_LEN
            || section.chars().any(char::is_control)
        {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!("Transform section names must be 1..{MAX_SECTION_NAME_LEN} characters without control characters; got '{section}'"),
            ));
        }
        let Some(t) = t else { continue };
        if PROTECTED_SECTIONS.contains(&section.as_str()) && t.action != TransformAction::Append {
            return Err(Error::new(
                ErrorCode::Unauthorized,
                format!("Section '{section}' is protected: providers may only 'append' to it"),
            ));
        }
        if t.action != TransformAction::Callback && t.content.is_none() {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!("Transform for section '{section}' needs 'content'"),
            ));
        }
    }
    Ok(())
}

impl Registry {
    /// A (re)bind: the provider's transforms and context become exactly what `hello` says.
    pub fn set_from_hello(
        &mut self,
        provider: &str,
        session: &str,
        transforms: Option<&BTreeMap<String, Option<Transform>>>,
        context: Option<String>,
    ) {
        let transforms = transforms
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect();
        self.providers.insert(
            (provider.to_string(), session.to_string()),
            ProviderPrompt {
                transforms,
                context,
            },
        );
    }

    /// `hooks.update.transforms`: entries set or (with `null`) removed.
    pub fn update_transforms(
        &mut self,
        provider: &str,
        session: &str,
        changes: &BTreeMap<String, Option<Transform>>,
    ) {
        let p = self
            .providers
            .entry((provider.to_string(), session.to_string()))
            .or_default();
        for (section, t) in changes {
            match t {
                Some(t) => {
                    p.transforms.insert(section.clone(), t.clone());
                }
                None => {
                    p.transforms.remove(section);
                }
            }
        }
    }

    /// `context.update`.
    pub fn set_context(&mut self, provider: &str, session: &str, context: Option<String>) {
        self.providers
            .entry((provider.to_string(), session.to_string()))
            .or_default()
            .context = context;
    }

    /// The provider's transforms and context in `session` (kept for a reconnect).
    pub fn prompt_of(
        &self,
        provider: &str,
        session: &str,
    ) -> (BTreeMap<String, Transform>, Option<String>) {
        self.providers
            .get(&(provider.to_string(), session.to_string()))
            .map(|p| (p.transforms.clone(), p.context.clone()))
            .unwrap_or_default()
    }

    /// The connection ended: its transforms go, and its pending callbacks resolve
    /// (the sections stay unchanged).
    pub fn forget(&mut self, provider: &str) {
        self.providers.retain(|(p, _), _| p != provider);
        self.pending.retain(|_, p| p.provider != provider);
    }

    /// The provider rebound: its pending callbacks resolve now (sections unchanged) and a
    /// late `transform.result` finds nothing.
    pub fn cancel_pending(&mut self, provider: &str) {
        self.pending.retain(|_, p| p.provider != provider);
    }

    /// The provider left one session: its transforms and context there go.
    pub fn forget_session(&mut self, provider: &str, session: &str) {
        self.providers
            .remove(&(provider.to_string(), session.to_string()));
    }

    /// `transform.result`: completes the request if it is pending and was sent to this
    /// provider. Late or foreign answers are ignored.
    pub fn complete(&mut self, provider: &str, call_id: &str, content: String) -> bool {
        match self.pending.get(call_id) {
            Some(p) if p.provider == provider => {
                let p = self.pending.remove(call_id).expect("present");
                p.tx.send(content).is_ok()
            }
            _ => false,
        }
    }
}

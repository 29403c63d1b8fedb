//! Prompt transforms and ambient context (spec: "Transform rules", "Protected prompt
//! sections", `transform.request` / `transform.result`, `context`, `startup_context`).
//!
//! Each provider's transforms and context live here, keyed by (provider id, session) (a
//! provider bound to `"all"` has one entry per session it is registered in), and are
//! replaced by every `hello` (or `session.ready`), changed by `hooks.update` /
//! `context.update`, and forgotten when the binding or the connection ends. A session's registration order is its bind order
//! (`Session::bound`); a provider holds at most one transform per section, so declaration
//! order within one provider never matters for a section.
//!
//! Applying (`prompt.apply` from a session host): every section the host sent goes
//! through the bound providers' transforms for it, in bind order; `append` / `prepend`
//! join with a newline, `replace` sets the text, `callback` asks the provider with
//! `transform.request` and takes its `content` (unchanged after 2 s, on disconnect, or
//! when it unbinds). The protected sections `safety` and `identity` accept only `append`
//! and are transformed after every other section.

use crate::gateway::Gateway;
use crate::providers::{frame, ProviderLink};
use futures_util::future::join_all;
use std::collections::{BTreeMap, HashMap};
use tap_protocol::limits::TRANSFORM_TIMEOUT;
use tap_protocol::provider::{GatewayMessage, Transform, TransformAction, TransformRequest};
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// Sections no provider may replace, prepend to or rewrite by callback.
pub(crate) const PROTECTED_SECTIONS: [&str; 2] = ["safety", "identity"];

/// Longest section name a transform may name.
const MAX_SECTION_NAME_LEN: usize = 128;

type Refusal = (ErrorCode, String);

/// What one provider contributes to its session's prompts.
#[derive(Debug, Clone, Default)]
struct ProviderPrompt {
    transforms: BTreeMap<String, Transform>,
    context: Option<String>,
}

struct Pending {
    provider: String,
    tx: oneshot::Sender<String>,
}

/// Transforms, contexts and pending `transform.request`s (lives in `State`).
#[derive(Default)]
pub(crate) struct Registry {
    providers: HashMap<(String, String), ProviderPrompt>,
    pending: HashMap<String, Pending>,
}

/// Checks a transform map from `hello.hooks.transforms` or `hooks.update.transforms`
/// (`null` entries are removals and always valid).
pub(crate) fn validate(transforms: &BTreeMap<String, Option<Transform>>) -> Result<(), Refusal> {
    for (section, t) in transforms {
        if section.is_empty()
            || section.len() > MAX_SECTION_NAME_LEN
            || section.chars().any(char::is_control)
        {
            return Err((
                ErrorCode::InvalidJson,
                format!("Transform section names must be 1..{MAX_SECTION_NAME_LEN} characters without control characters; got '{section}'"),
            ));
        }
        let Some(t) = t else { continue };
        if PROTECTED_SECTIONS.contains(&section.as_str()) && t.action != TransformAction::Append {
            return Err((
                ErrorCode::Unauthorized,
                format!("Section '{section}' is protected: providers may only 'append' to it"),
            ));
        }
        if t.action != TransformAction::Callback && t.content.is_none() {
            return Err((
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

/// One bound provider's part in a prompt, snapshotted under the lock.
struct Step {
    provider: String,
    link: ProviderLink,
    transform: Transform,
}

/// The outcome of `prompt.apply`.
pub(crate) struct Applied {
    pub sections: BTreeMap<String, String>,
    pub context: Vec<String>,
}

impl Gateway {
    /// Applies the session's transforms to `sections` and collects its context.
    pub(crate) async fn apply_prompt(
        &self,
        session_id: &str,
        sections: BTreeMap<String, String>,
    ) -> Result<Applied, Refusal> {
        let (plan, context) = {
            let state = self.state();
            let session = state.live_session(session_id)?;
            let mut plan: BTreeMap<String, Vec<Step>> = BTreeMap::new();
            let mut context = Vec::new();
            for pid in &session.bound {
                let (Some(p), Some(entry)) = (
                    state
                        .transforms
                        .providers
                        .get(&(pid.clone(), session_id.to_string())),
                    state.providers.get(pid),
                ) else {
                    continue;
                };
                if let Some(c) = p.context.as_deref().filter(|c| !c.is_empty()) {
                    context.push(c.to_string());
                }
                for (section, t) in &p.transforms {
                    if sections.contains_key(section) {
                        plan.entry(section.clone()).or_default().push(Step {
                            provider: pid.clone(),
                            link: entry.link.clone(),
                            transform: t.clone(),
                        });
                    }
                }
            }
            (plan, context)
        };
        let mut out = sections;
        let (protected, ordinary): (Vec<_>, Vec<_>) = plan
            .into_iter()
            .partition(|(s, _)| PROTECTED_SECTIONS.contains(&s.as_str()));
        // Protected sections last, so safety content has the last word.
        for group in [ordinary, protected] {
            let runs = group.into_iter().map(|(section, steps)| {
                let current = out.get(&section).cloned().unwrap_or_default();
                async move {
                    let text = self.run_section(session_id, &section, current, steps).await;
                    (section, text)
                }
            });
            for (section, text) in join_all(runs).await {
                out.insert(section, text);
            }
        }
        Ok(Applied {
            sections: out,
            context,
        })
    }

    async fn run_section(
        &self,
        session_id: &str,
        section: &str,
        mut current: String,
        steps: Vec<Step>,
    ) -> String {
        for step in steps {
            let content = step.transform.content.unwrap_or_default();
            current = match step.transform.action {
                TransformAction::Append => join(&current, &content),
                TransformAction::Prepend => join(&content, &current),
                TransformAction::Replace => content,
                TransformAction::Callback => {
                    match self
                        .callback(&step.provider, &step.link, session_id, section, &current)
                        .await
                    {
                        Some(text) => text,
                        None => current,
                    }
                }
            };
        }
        current
    }

    /// One `transform.request` round trip; `None` on timeout or disconnect.
    async fn callback(
        &self,
        provider: &str,
        link: &ProviderLink,
        session_id: &str,
        section: &str,
        current: &str,
    ) -> Option<String> {
        let call_id = self.shared().ids.next("tx");
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.state();
            // Still bound to this session? A provider that left gets no request.
            let bound = state
                .providers
                .get(provider)
                .is_some_and(|p| p.is_bound_to(session_id));
            if !bound {
                return None;
            }
            state.transforms.pending.insert(
                call_id.clone(),
                Pending {
                    provider: provider.to_string(),
                    tx,
                },
            );
            let _ = link
                .out
                .send(frame(&GatewayMessage::TransformRequest(TransformRequest {
                    call_id: call_id.clone(),
                    session_id: session_id.to_string(),
                    section: section.to_string(),
                    current: current.to_string(),
                })));
        }
        let answer = tokio::time::timeout(TRANSFORM_TIMEOUT, rx).await;
        match answer {
            Ok(Ok(text)) => Some(text),
            Ok(Err(_)) => None, // the provider disconnected
            Err(_) => {
                self.state().transforms.pending.remove(&call_id);
                tracing::info!(
                    provider,
                    section,
                    "transform.request timed out; section unchanged"
                );
                None
            }
        }
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}\n{b}"),
    }
}

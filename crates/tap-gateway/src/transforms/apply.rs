//! `prompt.apply`: a session's sections through its bound providers' transforms, and
//! its ambient context (see the module doc of `transforms`).

use crate::state::link::ProviderLink;
use crate::state::transforms::{Pending, Refusal, PROTECTED_SECTIONS};
use crate::state::Core;
use crate::trace::SpanContext;
use futures_util::future::join_all;
use std::collections::BTreeMap;
use tap_protocol::limits::TRANSFORM_TIMEOUT;
use tap_protocol::provider::{GatewayMessage, Transform, TransformAction, TransformRequest};
use tokio::sync::oneshot;

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

/// Applies the session's transforms to `sections` and collects its context.
pub(crate) async fn apply_prompt(
    core: &Core,
    session_id: &str,
    sections: BTreeMap<String, String>,
) -> Result<Applied, Refusal> {
    let (plan, context) = {
        let state = core.state();
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
    let mut span = core.tracer.start("prompt.apply", None);
    span.session(session_id);
    span.set("sections", sections.len());
    let parent = span.context();
    let mut out = sections;
    let (protected, ordinary): (Vec<_>, Vec<_>) = plan
        .into_iter()
        .partition(|(s, _)| PROTECTED_SECTIONS.contains(&s.as_str()));
    // Protected sections last, so safety content has the last word.
    for group in [ordinary, protected] {
        let runs = group.into_iter().map(|(section, steps)| {
            let current = out.get(&section).cloned().unwrap_or_default();
            async move {
                let text = run_section(core, session_id, &section, current, steps, parent).await;
                (section, text)
            }
        });
        for (section, text) in join_all(runs).await {
            out.insert(section, text);
        }
    }
    span.ok();
    Ok(Applied {
        sections: out,
        context,
    })
}

async fn run_section(
    core: &Core,
    session_id: &str,
    section: &str,
    mut current: String,
    steps: Vec<Step>,
    parent: SpanContext,
) -> String {
    for step in steps {
        let content = step.transform.content.unwrap_or_default();
        current = match step.transform.action {
            TransformAction::Append => join(&current, &content),
            TransformAction::Prepend => join(&content, &current),
            TransformAction::Replace => content,
            TransformAction::Callback => {
                let mut span = core.tracer.start("transform.request", Some(parent));
                span.session(session_id);
                span.provider(&step.provider);
                span.set("section", section);
                let text = callback(
                    core,
                    &step.provider,
                    &step.link,
                    session_id,
                    section,
                    &current,
                )
                .await;
                match &text {
                    Some(_) => span.ok(),
                    None => span.fail(
                        "NO_ANSWER",
                        "no transform.result in time (or the provider left); section unchanged",
                    ),
                }
                match text {
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
    core: &Core,
    provider: &str,
    link: &ProviderLink,
    session_id: &str,
    section: &str,
    current: &str,
) -> Option<String> {
    let call_id = core.ids.next("tx");
    let (tx, rx) = oneshot::channel();
    {
        let mut state = core.state();
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
        link.send(&GatewayMessage::TransformRequest(TransformRequest {
            call_id: call_id.clone(),
            session_id: session_id.to_string(),
            section: section.to_string(),
            current: current.to_string(),
        }));
    }
    let answer = tokio::time::timeout(TRANSFORM_TIMEOUT, rx).await;
    match answer {
        Ok(Ok(text)) => Some(text),
        Ok(Err(_)) => None, // the provider disconnected
        Err(_) => {
            core.state().transforms.pending.remove(&call_id);
            tracing::info!(
                provider,
                section,
                "transform.request timed out; section unchanged"
            );
            None
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

//! The pre-tool-use decision: every matching rule of every provider bound to the session,
//! combined into one answer.

use crate::patterns::rules::{Asker, CompiledRule};
use crate::request::CallError;
use crate::socket::frame::frame;
use crate::state::link::ProviderLink;
use crate::state::Core;
use crate::trace::OpenSpan;
use std::sync::Arc;
use tap_protocol::limits::GATE_TIMEOUT;
use tap_protocol::provider::{GateCheck, GateDecision, GatewayMessage, HookAction};
use tap_protocol::Json;

/// The one answer to "may this session use this tool with these arguments?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No rule objects.
    Allow,
    /// Go ahead, and add this context (every matching `context` rule and `context` gate
    /// answer, in rule order, separated by blank lines).
    Context(String),
    /// Do not use the tool. The first deny in rule order gives the reason.
    Deny(String),
}

/// One matching rule, with what is needed to evaluate it outside the state lock.
struct Matched {
    rules: Arc<Vec<CompiledRule>>,
    index: usize,
    provider: String,
    link: ProviderLink,
}

impl Matched {
    fn rule(&self) -> &CompiledRule {
        &self.rules[self.index]
    }
}

enum Step {
    Allow,
    Context(String),
    Deny(String),
}

/// The pre-tool-use decision for `tool` with `args` in `session_id` (spec: hook rules,
/// `onPreToolUse`). Rules are walked per bound provider in bind order, each provider's
/// in registration order. A static `deny` decides at once (no gate is asked); otherwise
/// every matching gate is asked concurrently (`gate.check`, answered within 5 s or
/// denied unless the rule says `failOpen`; a provider that disconnects with a check
/// pending denies). Any deny wins; contexts are concatenated in rule order.
///
/// `tool` need not be a provider's tool: agent runtimes ask about their own tools
/// (`shell`, `edit`) too; `match.provider` then never matches. `call_tool` does not
/// call this: the session host asks first, as the spec's `onPreToolUse` hook does.
/// `tap_call_tool` is judged as the call it makes (see the first lines).
///
/// Fails with `INVALID_SESSION` when the session does not exist or is ending.
pub(crate) async fn pre_tool_use(
    core: &Core,
    session_id: &str,
    tool: &str,
    args: &Json,
    trace: &OpenSpan,
) -> Result<Decision, CallError> {
    // `tap_call_tool` (a search profile's session) is judged as the call it makes: the
    // tool it names, with the arguments it passes, so a rule about that tool applies
    // however it is reached, and a gate is asked about the real call.
    // Only a call of that name looks at the session (the state lock once more).
    let (tool, args) = match crate::state::search_defs::called(tool, args) {
        Some(called) if core.state().live_session(session_id)?.searches() => called,
        _ => (tool, args),
    };
    // JSON.stringify's text: compact, keys in the order the host sent them (serde_json's
    // `preserve_order`; spec-decisions H1 says where the two still differ).
    let args_json = serde_json::to_string(args).expect("JSON serializes");
    let matched = {
        let state = core.state();
        let session = state.live_session(session_id)?;
        let owner = session.tools.get(tool).map(|t| &*t.provider_name);
        let asker = Asker {
            profile: session.profile.as_ref().map(|p| p.name.as_str()),
            client: state.hosts.get(&session.host).map(|h| h.client()),
        };
        let mut matched = Vec::new();
        for pid in &session.bound {
            let Some(p) = state.providers.get(pid) else {
                continue;
            };
            let hooks = p.hooks_in(session_id);
            for rule in hooks.iter() {
                if rule.matches(tool, owner, &args_json, asker) {
                    matched.push(Matched {
                        rules: hooks.clone(),
                        index: rule.index,
                        provider: p.name.clone().unwrap_or_default(),
                        link: p.link.clone(),
                    });
                }
            }
        }
        matched
    };
    if let Some(m) = matched.iter().find(|m| m.rule().action == HookAction::Deny) {
        return Ok(Decision::Deny(m.rule().reason.clone().unwrap_or_else(
            || format!("Denied by a hook rule of provider '{}'.", m.provider),
        )));
    }
    let steps = futures_util::future::join_all(matched.iter().map(|m| async move {
        match m.rule().action {
            HookAction::Context => Step::Context(m.rule().content.clone().unwrap_or_default()),
            HookAction::Gate => {
                let mut span = trace.child("gate.check");
                span.session(session_id);
                span.provider(&m.provider);
                span.tool(tool);
                let step = gate(core, m, session_id, tool, args).await;
                match &step {
                    Step::Deny(reason) => span.fail("DENIED", reason.clone()),
                    Step::Context(_) => {
                        span.set("decision", "context");
                        span.ok()
                    }
                    Step::Allow => {
                        span.set("decision", "allow");
                        span.ok()
                    }
                }
                step
            }
            HookAction::Deny => unreachable!("static denies decided above"),
        }
    }))
    .await;
    let mut contexts = Vec::new();
    for step in steps {
        match step {
            Step::Deny(reason) => return Ok(Decision::Deny(reason)),
            Step::Context(c) if !c.is_empty() => contexts.push(c),
            Step::Context(_) | Step::Allow => {}
        }
    }
    Ok(if contexts.is_empty() {
        Decision::Allow
    } else {
        Decision::Context(contexts.join("\n\n"))
    })
}

/// One `gate.check` → `gate.result` round trip.
async fn gate(core: &Core, m: &Matched, session_id: &str, tool: &str, args: &Json) -> Step {
    let rule = m.rule();
    let gone = || {
        Step::Deny(format!(
            "Gate provider '{}' disconnected before answering.",
            m.provider
        ))
    };
    let call_id = core.ids.next("g");
    let Some(rx) = m.link.gates.insert(call_id.clone()) else {
        return gone();
    };
    let check = GatewayMessage::GateCheck(GateCheck {
        gate_id: rule.gate_id.clone(),
        call_id: call_id.clone(),
        session_id: session_id.to_string(),
        tool: tool.to_string(),
        args: args.clone(),
    });
    if m.link.out.send(frame(&check)).is_err() {
        m.link.gates.remove(&call_id);
        return gone();
    }
    match tokio::time::timeout(GATE_TIMEOUT, rx).await {
        Ok(Ok(r)) => match r.decision {
            GateDecision::Allow => Step::Allow,
            GateDecision::Deny => Step::Deny(
                r.reason
                    .unwrap_or_else(|| format!("Denied by gate provider '{}'.", m.provider)),
            ),
            GateDecision::Context => r.reason.map_or(Step::Allow, Step::Context),
        },
        // The provider disconnected with the check pending: fail closed, failOpen or not.
        Ok(Err(_)) => gone(),
        Err(_) => {
            m.link.gates.remove(&call_id);
            tracing::info!(provider = %m.provider, gate = ?rule.gate_id, fail_open = rule.fail_open, "gate did not answer in time");
            if rule.fail_open {
                Step::Allow
            } else {
                Step::Deny(format!(
                    "Gate provider '{}' did not respond in time.",
                    m.provider
                ))
            }
        }
    }
}

/// The decision as a caller that makes the call next uses it: the context to add to the
/// result, or the call's `DENIED` failure with the rule's reason.
pub(crate) async fn precheck_call(
    core: &Core,
    session_id: &str,
    tool: &str,
    args: &Json,
    root: &OpenSpan,
) -> Result<Option<String>, CallError> {
    let mut span = root.child("hook.precheck");
    span.session(session_id);
    span.tool(tool);
    let decision = pre_tool_use(core, session_id, tool, args, &span).await;
    match &decision {
        Ok(Decision::Deny(reason)) => span.fail("DENIED", reason.clone()),
        Ok(d) => {
            span.set(
                "decision",
                if matches!(d, Decision::Allow) {
                    "allow"
                } else {
                    "context"
                },
            );
            span.ok()
        }
        Err(e) => span.fail(e.code.clone(), e.message.clone()),
    }
    match decision? {
        Decision::Allow => Ok(None),
        Decision::Context(c) => Ok(Some(c)),
        Decision::Deny(reason) => Err(CallError::new(
            tap_protocol::ErrorCode::Denied,
            format!("A hook rule denied '{tool}': {reason}"),
        )),
    }
}

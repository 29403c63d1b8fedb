//! The approval on the call path (`crate::approvals`): after the arguments are checked and
//! before the call is dispatched, the call is allowed, denied, or waits for the user. The
//! decision is on the call's root span (`approval.decision`, `approval.by`, and
//! `approval.rule` or `approval.grant`), so it is in the trace and the ledger; a wait is an
//! `approval.wait` child span.
//!
//! A session whose profile says `approvalsInClient` is also asked in the MCP client that
//! made the call, when it declared elicitation (`approvals::in_client`): that client's
//! answer is given exactly as the panel gives one (`Approvals::approve`/`deny`), so
//! whoever answers first decides, and `approval.by` says `client`. Its session host is
//! asked too, when it declared a dialog (`state::approval_asks`: `approval.ask`), and
//! `approval.by` then says `host`.

use super::route::Route;
use crate::approvals::in_client::{self, ClientAnswer};
use crate::approvals::{Answer, Answered, By, CallFacts, Verdict};
use crate::limits::APPROVAL_PROGRESS_EVERY;
use crate::request::{CallError, CallRequest};
use crate::state::approval_asks as in_host;
use crate::state::mcp_binding::{ClientAsk, ClientAsker};
use crate::state::Core;
use crate::trace::OpenSpan;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::approvals::{ApprovalOutcome, PolicyAction, WaitingCall};
use tap_protocol::host::WithdrawnOutcome;
use tap_protocol::ErrorCode;

/// Who the session is: what rules match besides the tool and its arguments.
#[derive(Default)]
struct Who {
    client: Option<String>,
    profile: Option<String>,
    label: Option<String>,
    /// The profile says `approvalsInClient`.
    in_client: bool,
}

fn who(core: &Core, session_id: &str) -> Who {
    let state = core.state();
    match state.sessions.get(session_id) {
        Some(s) => Who {
            client: state.hosts.get(&s.host).map(|h| h.client().to_string()),
            profile: s.profile.as_ref().map(|p| p.name.clone()),
            label: s.info.label.clone(),
            in_client: s.profile.as_ref().is_some_and(|p| p.approvals_in_client),
        },
        None => Who::default(),
    }
}

/// Decides the call, waiting for the user when asked. `Ok(true)`: allowed after a wait
/// (the caller's timeouts start again: the wait is not the tool's time); `Ok(false)`:
/// allowed at once; `Err`: denied (`DENIED`), or cancelled while waiting.
pub(crate) async fn check(
    core: &Arc<Core>,
    req: &CallRequest,
    route: &Route,
    root: &mut OpenSpan,
) -> Result<bool, CallError> {
    // The session's client and profile only when a rule looks at them: an allowed call
    // then takes no state lock here.
    let who = match core.approvals.needs_who() {
        true => who(core, &req.session_id),
        false => Who::default(),
    };
    let destructive = route
        .def
        .annotations
        .as_ref()
        .and_then(|a| a.get("destructiveHint"))
        .and_then(|v| v.as_bool())
        == Some(true);
    let provider = &*route.by.provider_name;
    let facts = CallFacts {
        tool: &req.tool,
        provider,
        session: &req.session_id,
        client: who.client.as_deref(),
        profile: who.profile.as_deref(),
        args: &req.args,
        destructive,
    };
    let verdict = core.approvals.decide(&facts);
    record(root, &verdict);
    if verdict.action != PolicyAction::Ask {
        root.set("approval.decision", verdict.action.as_str());
        root.set("approval.by", verdict.by.kind());
    }
    match verdict.action {
        PolicyAction::Allow => Ok(false),
        PolicyAction::Deny => Err(denied_by(&req.tool, &verdict)),
        PolicyAction::Ask => {
            // What the prompt shows: looked up now if the decision did not need it.
            let who = match core.approvals.needs_who() {
                true => who,
                false => self::who(core, &req.session_id),
            };
            wait(core, req, route, root, who, &verdict)
                .await
                .map(|()| true)
        }
    }
}

/// Which rule or grant decided (or asked), on the root span.
fn record(root: &mut OpenSpan, v: &Verdict) {
    match &v.by {
        By::Grant(id) => root.set("approval.grant", id.as_str()),
        By::Rule(id) => root.set("approval.rule", id.as_str()),
        By::Default | By::BrokenPolicy => {}
    }
}

fn denied_by(tool: &str, v: &Verdict) -> CallError {
    let why = match &v.by {
        By::Grant(id) => format!("the user denied it before and remembered that (grant {id}; tap approvals revoke {id} forgets it)"),
        By::Rule(id) => match &v.reason {
            Some(r) => format!("rule '{id}' of policy.json: {r}"),
            None => format!("rule '{id}' of policy.json"),
        },
        By::Default | By::BrokenPolicy => "the policy".to_string(),
    };
    CallError::new(
        ErrorCode::Denied,
        format!("The call to '{tool}' is denied by {why}."),
    )
}

async fn wait(
    core: &Arc<Core>,
    req: &CallRequest,
    route: &Route,
    root: &mut OpenSpan,
    who: Who,
    verdict: &Verdict,
) -> Result<(), CallError> {
    let timeout = core.approvals.policy().timeout;
    let now = SystemTime::now();
    let why = match &verdict.by {
        By::Rule(id) => format!("rule {id}"),
        By::Default => "default: destructiveHint".to_string(),
        By::BrokenPolicy => "policy.json cannot be used".to_string(),
        By::Grant(id) => format!("grant {id}"),
    };
    let in_client = who.in_client;
    let call = WaitingCall {
        id: String::new(),
        tool: req.tool.clone(),
        provider: route.by.provider_name.to_string(),
        session_id: req.session_id.clone(),
        session_label: who.label,
        client: who.client,
        profile: who.profile,
        args: req.args.clone(),
        annotations: route.def.annotations.clone(),
        why,
        reason: verdict.reason.clone(),
        since: crate::time::rfc3339(now),
        deadline: crate::time::rfc3339(now + timeout),
    };
    // Who asked: the final `approval.by` is who answered.
    root.set("approval.asked", verdict.by.kind());
    let mut span = root.child("approval.wait");
    span.session(&req.session_id);
    span.tool(&req.tool);
    span.provider(&route.by.provider_name);
    // What the client's form and the host's dialog show, when they are asked.
    let mut shown = in_client.then(|| call.clone());
    let mut ticket = match core.approvals.waiting.add(call) {
        Ok(t) => t,
        Err(e) => {
            root.set("approval.decision", "deny");
            root.set("approval.by", "limit");
            span.fail(e.code.clone(), e.message.clone());
            return Err(e);
        }
    };
    let id = ticket.id.clone();
    span.set("approval.id", id.as_str());
    root.set("approval.id", id.as_str());
    if let Some(c) = shown.as_mut() {
        c.id = id.clone();
    }
    // Asked in the calling client too, beside the tray: its answer races the others'.
    let mut client_ask = match in_client {
        true => calling_client(core, &req.session_id, root.context().trace_id),
        false => None,
    }
    .zip(shown.as_ref())
    .map(|(asker, call)| asker.ask(ClientAsk::Elicitation, in_client::form(call, timeout)));
    if client_ask.is_some() {
        span.set("approval.client_asked", true);
    }
    // And in the session's host, whose answer comes on its own connection.
    let host_ask = shown.as_ref().and_then(|c| in_host::ask(core, c, timeout));
    if host_ask.is_some() {
        span.set("approval.host_asked", true);
    }
    let where_ = match (client_ask.is_some(), host_ask.is_some()) {
        (true, _) => "in this client's prompt, the Tap tray or panel",
        (false, true) => "in this session's own dialog, the Tap tray or panel",
        (false, false) => "in the Tap tray or panel",
    };
    let how = format!(
        "Waiting for the user to approve '{}' (approval {id}): answer {where_}, or run `tap approvals approve {id}` (or `tap approvals deny {id}`). Denied if nobody answers within {} s.",
        req.tool,
        timeout.as_secs()
    );
    let deadline = tokio::time::Instant::now() + timeout;

    let mut tick = tokio::time::interval(APPROVAL_PROGRESS_EVERY);
    let outcome = loop {
        tokio::select! {
            answer = &mut ticket.answer => break answer.ok(),
            _ = tokio::time::sleep_until(deadline) => {
                if ticket.give_up(ApprovalOutcome::TimedOut) {
                    if let Some(h) = host_ask {
                        h.ended(WithdrawnOutcome::TimedOut, false);
                    }
                    let message = format!(
                        "The user did not approve the call to '{}' within {} s (approval {id}): denied. To let it through next time, answer while it waits: `tap approvals approve ID` as its progress and `tap status` say, or the Tap tray or panel; or allow it without asking with a rule (`tap policy set`).",
                        req.tool, timeout.as_secs()
                    );
                    root.set("approval.by", "timeout");
                    root.set("approval.decision", "deny");
                    span.fail("TIMEOUT", message.clone());
                    return Err(CallError::new(ErrorCode::Denied, message));
                }
            }
            _ = req.cancel.cancelled() => {
                if ticket.give_up(ApprovalOutcome::Gone) {
                    root.set("approval.decision", "deny");
                    root.set("approval.by", "cancelled");
                    span.fail("CANCELLED", "the caller cancelled the call while it waited");
                    return Err(CallError::new(ErrorCode::Cancelled, format!("Call to '{}' was cancelled while it waited for approval", req.tool)));
                }
            }
            _ = tick.tick() => {
                if let Some(p) = &req.progress {
                    p.offer(how.clone());
                }
                continue;
            }
            asked = async { client_ask.as_mut().expect("guarded").await }, if client_ask.is_some() => {
                client_ask = None;
                match in_client::read(asked) {
                    ClientAnswer::Left(why) => {
                        span.set("approval.client_left", why.as_str());
                        if let Some(p) = &req.progress {
                            p.offer(format!("{why}: the call still waits. {how}"));
                        }
                    }
                    // Given as the panel gives one; the answer arrives on the ticket.
                    answer => {
                        core.approvals.client_answered(&id, &answer, "client");
                    }
                }
                continue;
            }
        }
        // An answer came first: it is on the channel now.
        break (&mut ticket.answer).await.ok();
    };
    if let Some(h) = host_ask {
        let (outcome, by) = match &outcome {
            Some(Answered {
                answer: Answer::Approved(_),
                by,
            }) => (WithdrawnOutcome::Approved, *by),
            Some(Answered { by, .. }) => (WithdrawnOutcome::Denied, *by),
            None => (WithdrawnOutcome::Denied, "session-ended"),
        };
        h.ended(outcome, by == "host");
    }
    match outcome {
        Some(Answered {
            answer: Answer::Approved(grant),
            by,
        }) => {
            root.set("approval.decision", "allow");
            root.set("approval.by", by);
            if let Some(g) = grant {
                root.set("approval.grant", g);
            }
            span.ok();
            Ok(())
        }
        Some(Answered {
            answer: Answer::Denied(grant),
            by,
        }) => {
            root.set("approval.decision", "deny");
            root.set("approval.by", by);
            if let Some(g) = &grant {
                root.set("approval.grant", g.as_str());
            }
            let message = format!(
                "The user denied the call to '{}' (approval {id}).",
                req.tool
            );
            span.fail("DENIED", message.clone());
            Err(CallError::new(ErrorCode::Denied, message))
        }
        None => {
            root.set("approval.decision", "deny");
            root.set("approval.by", "session-ended");
            let message = format!(
                "The call to '{}' was denied: its session ended while it waited for approval {id}.",
                req.tool
            );
            span.fail("DENIED", message.clone());
            Err(CallError::new(ErrorCode::Denied, message))
        }
    }
}

/// The MCP client that made the call of trace `trace` in session `session_id`, if it
/// declared elicitation (`mcp::asks` registers it for the call's duration).
fn calling_client(core: &Core, session_id: &str, trace: u128) -> Option<Arc<dyn ClientAsker>> {
    let state = core.state();
    state
        .mcp
        .values()
        .filter(|b| b.session_id == session_id)
        .find_map(|b| b.call_asker(trace, ClientAsk::Elicitation))
}

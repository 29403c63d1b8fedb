//! Asking for an approval in the session host's own dialog (`docs/approvals.md`,
//! "Answering in the host"): the host of a session whose profile says `approvalsInClient`,
//! when it declared `capabilities.ui.elicitation` or `.confirm`, gets `approval.ask` for
//! each of the session's waiting calls, beside the tray, panel and CLI. Its
//! `approval.answer` is given exactly as the calling MCP client's (`in_client.rs`: the same
//! text, masking and choices), so the first answer wins; when another decides, or the wait
//! ends, the host gets `approval.withdrawn` to close its dialog.
//!
//! Only the host that owns the session, and only for calls it was asked: a host that
//! answers by itself is what the per-profile opt-in guards against.

use crate::approvals::in_client::{self, ClientAnswer};
use crate::error::Error;
use crate::state::host::MCP_HOST_PREFIX;
use crate::state::Core;
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::approvals::WaitingCall;
use tap_protocol::host::{
    ApprovalAnswer, ApprovalAsk, ApprovalChoice, ApprovalWithdrawn, HostApprovalAnswer, HostEvent,
    WithdrawnOutcome,
};
use tap_protocol::ErrorCode;

/// An `approval.ask` sent: dropped, it tells the host the approval is withdrawn (as
/// `denied`, the call went away) unless [`HostAsked::ended`] said how it ended.
pub(crate) struct HostAsked {
    core: Arc<Core>,
    host: String,
    id: String,
    told: bool,
}

impl HostAsked {
    /// The wait ended with `outcome`; `by_host`: the host's own answer decided it, so
    /// there is nothing to withdraw.
    pub fn ended(mut self, outcome: WithdrawnOutcome, by_host: bool) {
        if !by_host {
            self.withdraw(outcome);
        }
        self.told = true;
    }

    fn withdraw(&self, outcome: WithdrawnOutcome) {
        if let Some(h) = self.core.state().hosts.get_mut(&self.host) {
            h.send(&HostEvent::ApprovalWithdrawn(ApprovalWithdrawn {
                approval_id: self.id.clone(),
                outcome,
            }));
        }
    }
}

impl Drop for HostAsked {
    fn drop(&mut self) {
        self.core.approvals.in_host.forget(&self.id);
        if !self.told {
            self.withdraw(WithdrawnOutcome::Denied);
        }
    }
}

/// Asks waiting call `call` (its `id` set) in its session's host, when the session's
/// profile says `approvalsInClient` and the host declared a dialog. An MCP client's
/// session is asked by `elicitation/create` instead (`in_client.rs`).
pub(crate) fn ask(core: &Arc<Core>, call: &WaitingCall, timeout: Duration) -> Option<HostAsked> {
    let mut state = core.state();
    let session = state.sessions.get(&call.session_id)?;
    if !session
        .profile
        .as_ref()
        .is_some_and(|p| p.approvals_in_client)
    {
        return None;
    }
    let ui = session.report.capabilities.as_ref()?.ui;
    if !(ui.elicitation || ui.confirm) {
        return None;
    }
    let host_id = session.host.clone();
    let host = state.hosts.get_mut(&host_id)?;
    if host.name.starts_with(MCP_HOST_PREFIX) {
        return None;
    }
    core.approvals.in_host.note(&call.id);
    host.send(&HostEvent::ApprovalAsk(ApprovalAsk {
        session_id: call.session_id.clone(),
        approval_id: call.id.clone(),
        tool: call.tool.clone(),
        provider: call.provider.clone(),
        message: in_client::prompt_text(call, timeout),
        args: in_client::summary(&call.args),
        choices: choices(),
    }));
    Some(HostAsked {
        core: core.clone(),
        host: host_id,
        id: call.id.clone(),
        told: false,
    })
}

/// The MCP form's choices, as the host's.
fn choices() -> Vec<ApprovalChoice> {
    in_client::CHOICES
        .iter()
        .filter_map(|(value, title)| {
            let value = serde_json::from_value(serde_json::json!(value)).ok()?;
            Some(ApprovalChoice {
                value,
                title: title.to_string(),
            })
        })
        .collect()
}

/// `approval.answer` from host `host_id`. An answer for a call no longer waiting, or one
/// this host was not asked, is ignored (a late answer is normal: someone else answered);
/// one for a call of a session another host owns is refused (`UNAUTHORIZED`).
pub(crate) fn answered(core: &Core, host_id: &str, a: ApprovalAnswer) -> Result<(), Error> {
    let Some(call) = core.approvals.waiting.get(&a.approval_id) else {
        tracing::debug!(host = %host_id, approval = %a.approval_id, "approval.answer for no waiting call: ignored");
        return Ok(());
    };
    let owner = core
        .state()
        .sessions
        .get(&call.session_id)
        .map(|s| s.host.clone());
    if owner.as_deref() != Some(host_id) {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!(
                "Approval '{}' is of a session another host owns: only that host may answer it",
                a.approval_id
            ),
        ));
    }
    if !core.approvals.in_host.was_asked(&a.approval_id) {
        tracing::debug!(host = %host_id, approval = %a.approval_id, "approval.answer for a call not asked in this host: ignored");
        return Ok(());
    }
    let answer = match a.answer {
        HostApprovalAnswer::Dismissed => {
            tracing::debug!(host = %host_id, approval = %a.approval_id, "the host's approval dialog was dismissed: the call still waits");
            return Ok(());
        }
        other => in_client::chosen(other.as_str()).unwrap_or(ClientAnswer::Deny),
    };
    core.approvals
        .client_answered(&a.approval_id, &answer, "host");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_choice_of_the_form_is_a_host_answer() {
        assert_eq!(super::choices().len(), super::in_client::CHOICES.len());
    }
}

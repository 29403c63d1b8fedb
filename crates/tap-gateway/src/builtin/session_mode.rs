//! `tap_set_session_mode`: the agent asks to switch its session's mode (contract
//! "changing the session's mode"). Refused at once when the session's host lists no modes
//! or not that one; otherwise always asked through the approvals (whatever the policy and
//! grants say, and whatever scope the answer names it acts as once), in the tray, panel,
//! CLI and, when it applies, the host's own dialog (`state::approval_asks`). Approved, the
//! host gets `session.mode.set` and its `session.mode.result` (waited for at most
//! [`SESSION_MODE_SET_TIMEOUT`]) is the tool's result.

use super::{Answer, Args};
use crate::approvals::{Answer as Decision, Answered};
use crate::error::Error;
use crate::limits::{MAX_MODE_RESULT_MESSAGE_CHARS, SESSION_MODE_SET_TIMEOUT};
use crate::state::approval_asks;
use crate::state::host::MCP_HOST_PREFIX;
use crate::state::mode_defs::SET_SESSION_MODE;
use crate::state::Core;
use serde_json::json;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::approvals::{ApprovalOutcome, WaitingCall};
use tap_protocol::host::{HostEvent, SessionModeResult, SessionModeSet, WithdrawnOutcome};
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;

/// The session's host, as the prompt and the refusals name it.
struct Host {
    id: String,
    client: String,
    label: Option<String>,
    profile: Option<String>,
}

/// Whether the session's host can switch to `mode`: its id and names, or the refusal.
fn host_for(core: &Core, session_id: &str, mode: &str) -> Result<Host, Error> {
    let state = core.state();
    let s = state.live_session(session_id)?;
    let h = state.hosts.get(&s.host);
    let client = h.map(|h| h.client().to_string()).unwrap_or_default();
    let in_process = h.is_some_and(|h| h.name.starts_with(MCP_HOST_PREFIX));
    let modes: &[String] = match (&s.report.capabilities, in_process) {
        (Some(c), false) => &c.modes,
        _ => &[],
    };
    if modes.is_empty() {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("This session's host ({client}) cannot change mode"),
        ));
    }
    if !modes.iter().any(|m| m == mode) {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!(
                "This session's host ({client}) has no mode '{mode}'; it can switch to: {}",
                modes.join(", ")
            ),
        ));
    }
    Ok(Host {
        id: s.host.clone(),
        client,
        label: s.info.label.clone(),
        profile: s.profile.as_ref().map(|p| p.name.clone()),
    })
}

pub(super) async fn set(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let mode = a.text(&["mode"]).unwrap_or_default();
    let host = host_for(core, session_id, &mode)?;
    asked(core, session_id, &host, a).await?;
    // Approved: the host switches.
    let request_id = crate::ids::short("m");
    let (tx, rx) = oneshot::channel();
    {
        let mut state = core.state();
        let Some(h) = state.hosts.get_mut(&host.id) else {
            return Err(Error::new(
                ErrorCode::Disconnected,
                "The session's host went away before the mode could be changed",
            ));
        };
        h.mode_requests.insert(request_id.clone(), tx);
        h.send(&HostEvent::SessionModeSet(SessionModeSet {
            request_id: request_id.clone(),
            session_id: session_id.to_string(),
            mode: mode.clone(),
        }));
    }
    let answered = tokio::time::timeout(SESSION_MODE_SET_TIMEOUT, rx).await;
    if let Some(h) = core.state().hosts.get_mut(&host.id) {
        h.mode_requests.remove(&request_id);
    }
    match answered {
        Ok(Ok(r)) if r.ok => Ok(json!({
            "mode": r.mode.unwrap_or(mode),
            "changed": true,
        })),
        Ok(Ok(r)) => Err(Error::new(
            ErrorCode::Other("MODE_NOT_CHANGED".into()),
            format!(
                "The user approved, but the host ({}) did not switch to '{mode}': {}",
                host.client,
                crate::text::cut(
                    r.message.as_deref().unwrap_or("it gave no reason"),
                    MAX_MODE_RESULT_MESSAGE_CHARS
                )
            ),
        )),
        Ok(Err(_)) => Err(Error::new(
            ErrorCode::Disconnected,
            "The session's host went away before it said whether the mode changed",
        )),
        Err(_) => Err(Error::new(
            ErrorCode::Timeout,
            format!(
                "The user approved, but the host ({}) did not say within {} s whether it switched to '{mode}' (tap_get_session_state shows the mode it reports)",
                host.client,
                SESSION_MODE_SET_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// Asks the user, every time: `Ok` once approved.
async fn asked(core: &Arc<Core>, session_id: &str, host: &Host, a: &Args<'_>) -> Result<(), Error> {
    let timeout = core.approvals.policy().timeout;
    let now = SystemTime::now();
    let mut call = WaitingCall {
        id: String::new(),
        tool: SET_SESSION_MODE.to_string(),
        provider: super::PROVIDER.to_string(),
        session_id: session_id.to_string(),
        session_label: host.label.clone(),
        client: Some(host.client.clone()),
        profile: host.profile.clone(),
        args: a.json.clone(),
        annotations: None,
        why: "always asked: it changes the session's mode".to_string(),
        reason: None,
        since: crate::time::rfc3339(now),
        deadline: crate::time::rfc3339(now + timeout),
    };
    let mut ticket = core.approvals.waiting.add_once(call.clone())?;
    call.id = ticket.id.clone();
    let id = call.id.clone();
    let host_ask = approval_asks::ask(core, &call, timeout);
    let outcome = match tokio::time::timeout(timeout, &mut ticket.answer).await {
        Ok(answer) => answer.ok(),
        Err(_) if ticket.give_up(ApprovalOutcome::TimedOut) => {
            if let Some(h) = host_ask {
                h.ended(WithdrawnOutcome::TimedOut, false);
            }
            return Err(Error::new(
                ErrorCode::Denied,
                format!("The user did not approve changing the mode within {} s (approval {id}): the mode is unchanged.", timeout.as_secs()),
            ));
        }
        // An answer came as the wait ended: it stands.
        Err(_) => (&mut ticket.answer).await.ok(),
    };
    let approved = matches!(
        outcome,
        Some(Answered {
            answer: Decision::Approved(_),
            ..
        })
    );
    if let Some(h) = host_ask {
        let by_host = outcome.as_ref().is_some_and(|o| o.by == "host");
        let withdrawn = match approved {
            true => WithdrawnOutcome::Approved,
            false => WithdrawnOutcome::Denied,
        };
        h.ended(withdrawn, by_host);
    }
    match approved {
        true => Ok(()),
        false => Err(Error::new(
            ErrorCode::Denied,
            format!("The user did not approve changing the mode (approval {id}): the mode is unchanged."),
        )),
    }
}

/// `session.mode.result` from host `host_id`: the answer to its `session.mode.set` of
/// that `requestId`; any other (late, unknown, another host's) is ignored.
pub(crate) fn result(core: &Core, host_id: &str, r: SessionModeResult) {
    let waiting = core
        .state()
        .hosts
        .get_mut(host_id)
        .and_then(|h| h.mode_requests.remove(&r.request_id));
    match waiting {
        Some(tx) => {
            let _ = tx.send(r);
        }
        None => {
            tracing::debug!(host = %host_id, request = %r.request_id, "session.mode.result for no waiting session.mode.set: ignored")
        }
    }
}

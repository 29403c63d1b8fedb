//! Registering and ending sessions, and what providers hear about it.

use crate::error::Error;
use crate::events::GatewayEvent;
use crate::ledger::record::Record;
use crate::socket::frame::frame;
use crate::state::host_report::HostReport;
use crate::state::provider_entry::Phase;
use crate::state::session::{Ending, Session};
use crate::state::{Core, State};
use std::collections::HashMap;
use std::sync::Arc;
use tap_protocol::host::{
    BusyState, HostEvent, SessionEnded, SessionRegister, SessionRegistered, SessionTools,
};
use tap_protocol::limits::MAX_SESSION_ID_LEN;
use tap_protocol::provider::{
    GatewayMessage, LifecycleState, SessionInfo, SessionLifecycle, Sessions,
};
use tap_protocol::ErrorCode;
use tokio::sync::Notify;

/// Registers a session owned by `host_id` and tells every provider.
pub(crate) fn register_session(
    core: &Arc<Core>,
    host_id: &str,
    request_id: &str,
    req: SessionRegister,
) -> Result<SessionInfo, Error> {
    let id = match req.session_id {
        Some(id) => {
            if id.is_empty() || id.len() > MAX_SESSION_ID_LEN || id == "all" {
                return Err(Error::new(
                    ErrorCode::InvalidSession,
                    format!(
                        "'sessionId' must be 1 to {MAX_SESSION_ID_LEN} characters and not 'all'"
                    ),
                ));
            }
            id
        }
        None => core.ids.next("s"),
    };
    let report = HostReport::checked(req.mode, req.model, req.capabilities)?;
    let profile = match req.profile.as_deref() {
        None => None,
        Some(name) => Some(Arc::new(
            crate::profiles::file::find(&core.config.data_dir, name)
                .map_err(|why| Error::new(ErrorCode::NotFound, why))?,
        )),
    };
    let info = SessionInfo {
        id: id.clone(),
        label: req.label,
        cwd: req.cwd,
        foreground: Some(req.foreground),
    };
    let notify = Arc::new(Notify::new());
    let cancel = core.stopping.child_token();
    {
        let mut state = core.state();
        if state.sessions.contains_key(&id) {
            return Err(Error::new(
                ErrorCode::InvalidSession,
                format!("Session '{id}' is already registered"),
            ));
        }
        if req.foreground {
            for s in state.sessions.values_mut() {
                s.info.foreground = Some(false);
            }
        }
        let mut session = Session {
            info: info.clone(),
            busy: BusyState::Idle,
            report,
            host: host_id.to_string(),
            bound: Vec::new(),
            tools: HashMap::new(),
            tool_revision: 0,
            toolset_changed: notify.clone(),
            watchers: tokio::sync::watch::Sender::new(()),
            cancel: cancel.clone(),
            idle: Arc::new(Notify::new()),
            ending: None,
            project_tokens: Vec::new(),
            project_config: None,
            delivery_queue: Default::default(),
            pending_acks: Vec::new(),
            profile,
            pins: core.pins.clone(),
            held: HashMap::new(),
        };
        // The gateway's built-in tools are there from the first tool set on.
        session.install_builtins();
        let first_tools = session.host_tools(core.config.default_tool_timeout);
        state.sessions.insert(id.clone(), session);
        state.session_order.push(id.clone());
        // Providers bound to "all" add their tools once they declare the session ready.
        let tools_pending = state.providers.values().any(|p| p.all.is_some());
        if let Some(host) = state.hosts.get_mut(host_id) {
            host.sessions.insert(id.clone());
            host.send(&HostEvent::SessionRegistered(SessionRegistered {
                request_id: request_id.to_string(),
                session: info.clone(),
                tools_pending,
            }));
            host.send(&HostEvent::SessionTools(SessionTools {
                session_id: id.clone(),
                revision: 0,
                tools: first_tools,
            }));
        }
        broadcast_sessions(&state);
    }
    super::toolset::spawn_debouncer(core, id.clone(), notify, cancel.clone());
    // After `session.registered`: problems with the project config reach the host as
    // `session.warning`s about a session it already knows.
    super::project_follow::start(core, id.clone(), info.cwd.clone(), cancel);
    tracing::info!(session = %id, host = %host_id, "session registered");
    core.ledger.write_detached(Record::SessionStarted {
        id: id.clone(),
        label: info.label.clone(),
        cwd: info.cwd.clone(),
        at: std::time::SystemTime::now(),
    });
    let mut span = core.tracer.start("session.start", None);
    span.session(&id);
    span.set("host", host_id);
    if let Some(label) = &info.label {
        span.set("session.label", label.as_str());
    }
    span.ok();
    core.events.emit(GatewayEvent::StatusChanged);
    Ok(info)
}

/// Ends a session: bound providers get `shutdown.pending` and until the deadline to
/// answer (`goodbye`, `shutdown.ready` or disconnecting); then their tools leave the
/// session, calls still running in it are cancelled, and the host is told.
pub(crate) async fn end_session(
    core: &Arc<Core>,
    id: String,
    request_id: Option<String>,
    reason: String,
) {
    let deadline = core.config.shutdown_deadline;
    let mut span = core.tracer.start("session.end", None);
    span.session(&id);
    span.set("reason", reason.as_str());
    let done = {
        let mut state = core.state();
        let Some(session) = state.sessions.get_mut(&id) else {
            return;
        };
        if let Some(ending) = session.ending.as_mut() {
            ending.late_requests.extend(request_id);
            return;
        }
        let done = Arc::new(Notify::new());
        let waiting = session.bound.iter().cloned().collect();
        session.ending = Some(Ending {
            waiting,
            done: done.clone(),
            late_requests: Vec::new(),
        });
        session.watchers.send_replace(());
        // Its calls waiting for the user's approval end denied now, not at the deadline.
        core.approvals.waiting.end_session(&id);
        let bound = session.bound.clone();
        let pending = GatewayMessage::SessionLifecycle(SessionLifecycle {
            session_id: id.clone(),
            state: LifecycleState::ShutdownPending,
            deadline: Some(deadline.as_millis() as u64),
        });
        let pending = frame(&pending);
        for pid in &bound {
            if let Some(p) = state.providers.get(pid) {
                let _ = p.link.out.send(pending.clone());
            }
        }
        state.session_order.retain(|s| s != &id);
        broadcast_sessions(&state);
        (!bound.is_empty()).then_some(done)
    };
    if let Some(done) = done {
        let mut wait = span.child("shutdown.pending");
        wait.session(&id);
        if tokio::time::timeout(deadline, done.notified())
            .await
            .is_err()
        {
            tracing::info!(session = %id, "shutdown deadline passed; tearing down");
            wait.fail(
                "TIMEOUT",
                "the shutdown deadline passed with providers still bound",
            );
        } else {
            wait.ok();
        }
    }
    teardown_session(core, &id, request_id, reason);
    span.ok();
}

fn teardown_session(core: &Core, id: &str, request_id: Option<String>, reason: String) {
    let mut state = core.state();
    let Some(session) = state.sessions.remove(id) else {
        return;
    };
    session.cancel.cancel();
    // Calls of the session still waiting for the user's approval end denied (`gone`).
    core.approvals.waiting.end_session(id);
    let mut leaving_all = Vec::new();
    for pid in &session.bound {
        let Some(p) = state.providers.get_mut(pid) else {
            continue;
        };
        if p.session.as_deref() == Some(id) {
            p.session = None;
            p.phase = Phase::Unbound;
            p.updates.clear();
        }
        if p.all.is_some() {
            // Bound to "all": it leaves this session and stays bound to the others.
            leaving_all.push(pid.clone());
        }
        p.link.cancel_calls_in(
            id,
            &format!("Session '{id}' ended ({reason})"),
            "session ended",
        );
    }
    // Updates that never reached the host: the session is gone before their ack.
    crate::providers::acks::abandon_acks(
        &state,
        id,
        session.pending_acks,
        &format!("Session '{id}' ended before the update reached it"),
    );
    for pid in &leaving_all {
        crate::providers::registry::leave_all_session(&mut state, pid, id);
        core.stream_controls.forget_session(pid, id);
    }
    if let Some(host) = state.hosts.get_mut(&session.host) {
        host.sessions.remove(id);
        let late = session.ending.map(|e| e.late_requests).unwrap_or_default();
        for request_id in std::iter::once(request_id).chain(late.into_iter().map(Some)) {
            host.send(&HostEvent::SessionEnded(SessionEnded {
                request_id,
                session_id: id.to_string(),
                reason: reason.clone(),
            }));
        }
    }
    drop(state);
    core.ledger.write_detached(Record::SessionEnded {
        id: id.to_string(),
        reason: reason.clone(),
        at: std::time::SystemTime::now(),
    });
    core.streams.drop_session(id);
    core.emitters.forget_session(id);
    tracing::info!(session = %id, %reason, "session ended");
    core.events.emit(GatewayEvent::StatusChanged);
}

/// Records busy/idle; a move to idle is announced to the bound providers.
pub(crate) fn set_busy(core: &Core, session_id: &str, busy: BusyState) -> Result<(), Error> {
    report_state(core, session_id, busy, HostReport::default())
}

/// Records a host's `session.state`: busy/idle, and what else it reports (`report`'s fields
/// that are set replace the session's).
pub(crate) fn report_state(
    core: &Core,
    session_id: &str,
    busy: BusyState,
    report: HostReport,
) -> Result<(), Error> {
    // Before providers hear `idle`, so an inject sent on hearing it is accepted.
    if busy == BusyState::Idle {
        core.stream_controls.idle(session_id);
    }
    let mut state = core.state();
    let State {
        sessions,
        providers,
        ..
    } = &mut *state;
    let session = sessions
        .get_mut(session_id)
        .ok_or_else(|| crate::state::unknown_session(session_id))?;
    session.report.update(report);
    let was = std::mem::replace(&mut session.busy, busy);
    if was == BusyState::Busy && busy == BusyState::Idle {
        session.idle.notify_waiters();
        let idle = frame(&GatewayMessage::SessionLifecycle(SessionLifecycle {
            session_id: session_id.to_string(),
            state: LifecycleState::Idle,
            deadline: None,
        }));
        for pid in &session.bound {
            if let Some(p) = providers.get(pid) {
                let _ = p.link.out.send(idle.clone());
            }
        }
    }
    drop(state);
    core.events.emit(GatewayEvent::StatusChanged);
    Ok(())
}

/// `sessions.updated` to every authenticated provider. Paired providers get their own
/// copy, with `cwd` only for the session they may bind to.
fn broadcast_sessions(state: &State) {
    let msg = frame(&GatewayMessage::SessionsUpdated(Sessions {
        token: None,
        active: crate::state::session::active_sessions(state),
    }));
    for p in state.providers.values() {
        let msg = match (&p.pairing, &p.scope) {
            (None, None) => msg.clone(),
            (pairing, scope) => frame(&GatewayMessage::SessionsUpdated(Sessions {
                token: None,
                active: crate::project::start::visible_sessions(
                    state,
                    pairing.as_deref(),
                    scope.as_deref(),
                ),
            })),
        };
        let _ = p.link.out.send(msg);
    }
}

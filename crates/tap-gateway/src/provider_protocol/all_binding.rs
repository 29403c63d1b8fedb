//! `"all"` binding (spec: "`"all"` binding and session churn", "`session.ready`").
//!
//! Only internal providers may bind to `"all"` (capability matrix: "Bind to any session /
//! all": internal only). At `hello` the provider's tools, hook rules, transforms and context
//! are registered in every session active at that moment (one `session.lifecycle started`
//! each). A session that starts later is announced by `sessions.updated` only: nothing is
//! registered in it until the provider sends `session.ready {sessionId}`, which registers
//! the `hello`'s declarations (as changed since by updates without `sessionId`) and is
//! answered by `session.lifecycle started` for that session. When a session ends the
//! provider gets `shutdown.pending` for it, answers `shutdown.ready`, and stays bound to
//! the others.
//!
//! Session-scoped messages name their session with `sessionId`: `push` and `stream.query`
//! need it (or, for `push`, `broadcast: true`); updates without it apply to every session
//! the provider is registered in and to the declarations future sessions get.

use super::hello::Checked;
use super::ProviderConn;
use crate::error::Error;
use crate::providers::validate::Invalid;
use crate::socket::conn::Step;
use crate::state::binding::{AllBinding, SessionBinding, Template, ALL};
use crate::state::provider_entry::{Phase, ProviderEntry};
use crate::state::tool_map::Claimant;
use crate::state::State;
use tap_protocol::host::{HostEvent, SessionContext};
use tap_protocol::provider::{
    GatewayMessage, HelloAck, LifecycleState, SessionLifecycle, SessionRef,
};
use tap_protocol::{ErrorCode, PROTOCOL_VERSION};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::all_binding";

/// What a session-scoped message without `sessionId` means.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Absent {
    /// Every session the provider is registered in (updates).
    Every,
    /// Refused for an `"all"` provider (`push` without `broadcast`, `stream.query`).
    Refuse,
}

/// The sessions a session-scoped message from provider `id` applies to. A single-session
/// provider: its session (a `sessionId`, if given, must be it). An `"all"` provider: the
/// given `sessionId`, which must be one it is registered in, or per `absent`.
pub(super) fn targets(
    state: &State,
    id: &str,
    session_id: Option<&str>,
    absent: Absent,
) -> Result<Vec<String>, Invalid> {
    let entry = &state.providers[id];
    match (&entry.all, session_id) {
        (None, sid) => {
            let bound = entry.session.clone().ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidSession,
                    "Not bound to a session",
                )
            })?;
            match sid {
                Some(s) if s != bound => Err(Error::new(
                    ErrorCode::InvalidSession,
                    format!("Bound to session '{bound}', not '{s}'"),
                )),
                _ => Ok(vec![bound]),
            }
        }
        (Some(all), Some(s)) if all.sessions.contains_key(s) => Ok(vec![s.to_string()]),
        (Some(_), Some(s)) => Err(Error::new(
            ErrorCode::InvalidSession,
            format!("Not registered in session '{s}': it does not exist, or 'session.ready' was not sent for it"),
        )),
        (Some(all), None) if absent == Absent::Every => Ok(all.sessions.keys().cloned().collect()),
        (Some(_), None) => Err(Error::new(
            ErrorCode::InvalidSession,
            "'sessionId' is required from a provider bound to \"all\"".to_string(),
        )),
    }
}

/// Whether an update without `sessionId` from this provider also changes its `"all"`
/// declarations (the template later `session.ready`s register).
pub(super) fn changes_template(entry: &ProviderEntry, session_id: Option<&str>) -> bool {
    entry.all.is_some() && session_id.is_none()
}

/// The sessions an update's `ack`s name: one per target session; an `"all"` provider's
/// update that reached no session (none ready yet) is acknowledged once as `"all"`.
pub(super) fn ack_sessions(targets: Vec<String>, template: bool) -> Vec<String> {
    if targets.is_empty() && template {
        vec![ALL.to_string()]
    } else {
        targets
    }
}

impl ProviderConn {
    /// `hello {session: "all"}` from an internal provider, after the checks every `hello`
    /// passes: registers in every live session, or in none if a tool conflicts in one.
    pub(super) fn bind_all(&mut self, c: Checked) -> Step {
        let Checked {
            h,
            tools,
            hooks,
            persist_dir,
            ..
        } = c;
        let mut rekeyed: Option<String> = None;
        let outcome = self.with_entry(|state, id| -> Result<Vec<String>, Invalid> {
            rekeyed = crate::providers::reconnect::claim(state, id, &h)?;
            let id = rekeyed.as_deref().unwrap_or(id).to_string();
            let live: Vec<String> = state
                .session_order
                .iter()
                .filter(|s| crate::pairing::scope::live(state, s))
                .cloned()
                .collect();
            for sid in &live {
                state.sessions[sid].check_conflicts(
                    &tools,
                    &Claimant::of_hello(&id, &h),
                    &state.providers,
                )?;
            }
            let template = Template {
                tools: tools.clone(),
                hooks: hooks.clone(),
                transforms: h.hooks.as_ref().and_then(|k| k.transforms.clone()),
                context: h.context.clone(),
                startup_context: h.startup_context.clone().filter(|t| !t.is_empty()),
            };
            let entry = state.providers.get_mut(&id).expect("checked by with_entry");
            entry.name = Some(h.name.clone());
            entry.instance = h.instance.clone();
            entry.metadata = h.metadata.clone();
            entry.phase = Phase::Bound;
            entry.session = None;
            entry.tools = tools.clone();
            entry.hooks = hooks.clone();
            entry.subscribe = h.subscribe.clone().unwrap_or_default();
            entry.updates.clear();
            entry.all = Some(AllBinding {
                template,
                ..Default::default()
            });
            self.send(&GatewayMessage::HelloAck(HelloAck {
                protocol_version: PROTOCOL_VERSION,
                provider_id: id.clone(),
                session_id: Some(ALL.to_string()),
                reconnect_token: Some(crate::providers::reconnect::issue(state, &id, &h, ALL)),
                persist_dir: persist_dir.clone(),
            }));
            state.limits.set(&id, &h.name, h.concurrency.clone());
            for sid in &live {
                register(state, &id, sid, self);
            }
            Ok(live)
        });
        self.took_over(rekeyed, &h.name);
        match outcome {
            Some(Ok(sessions)) => {
                if let Some(id) = &self.id {
                    self.core.stream_controls.forget(id);
                }
                self.core
                    .events
                    .emit(crate::events::GatewayEvent::StatusChanged);
                tracing::info!(target: LOG_TARGET, provider = ?self.id, name = %h.name, sessions = ?sessions, tools = tools.len(), "provider bound to all sessions");
                self.record_bound(&h.name, ALL);
            }
            Some(Err(Error { code, message, .. })) => self.refuse_for(ALL, code, message),
            None => {}
        }
        Step::Continue
    }

    /// `session.ready {sessionId}`: an `"all"` provider registers in a session that
    /// started after its `hello`. Repeating it for a session it is registered in changes
    /// nothing.
    pub(super) fn on_session_ready(&mut self, r: SessionRef) {
        let sid = r.session_id;
        let result = self.with_entry(|state, id| -> Result<bool, Invalid> {
            let entry = &state.providers[id];
            let Some(all) = &entry.all else {
                return Err(Error::new(
                    ErrorCode::Unauthorized,
                    "'session.ready' is only for providers bound to \"all\"".to_string(),
                ));
            };
            if all.sessions.contains_key(&sid) {
                return Ok(false);
            }
            let tools = all.template.tools.clone();
            state.live_session(&sid)?.check_conflicts(
                &tools,
                &Claimant::of_entry(entry),
                &state.providers,
            )?;
            let id = id.to_string();
            register(state, &id, &sid, self);
            Ok(true)
        });
        match result {
            Some(Ok(true)) => {
                let template_filters = self
                    .with_entry(|s, id| {
                        s.providers[id]
                            .all
                            .as_ref()
                            .map(|a| a.filters.clone())
                            .unwrap_or_default()
                    })
                    .unwrap_or_default();
                if let Some((id, name)) = self.id.clone().zip(self.name()) {
                    for f in template_filters.values() {
                        // Validated when they were set; only the per-session limit can refuse.
                        if let Err(Error { message: why, .. }) =
                            self.set_filter(&id, &name, std::slice::from_ref(&sid), f)
                        {
                            tracing::warn!(target: LOG_TARGET, provider = %id, session = %sid, "filter not carried into the session: {why}");
                        }
                    }
                }
                self.core
                    .events
                    .emit(crate::events::GatewayEvent::StatusChanged);
                tracing::info!(target: LOG_TARGET, provider = ?self.id, session = %sid, "provider ready in session");
            }
            Some(Ok(false)) | None => {}
            Some(Err(Error { code, message, .. })) => {
                self.error_about(&sid, code, message, "session.ready")
            }
        }
    }

    /// The provider's `hello` name.
    pub(super) fn name(&self) -> Option<String> {
        self.with_entry(|s, id| s.providers[id].name.clone())
            .flatten()
    }
}

/// Registers `"all"` provider `id` in live session `sid` with its template, under the lock:
/// tools, hook rules, transforms and context; `session.lifecycle started` to the provider
/// and its `startup_context` to the session's host.
fn register(state: &mut State, id: &str, sid: &str, conn: &ProviderConn) {
    let entry = state.providers.get_mut(id).expect("caller checked");
    let all = entry.all.as_mut().expect("caller checked");
    let template = all.template.clone();
    all.sessions.insert(
        sid.to_string(),
        SessionBinding {
            tools: template.tools.clone(),
            hooks: template.hooks.clone(),
        },
    );
    let name = entry.name.clone().unwrap_or_default();
    let State {
        sessions,
        providers,
        ..
    } = state;
    let session = sessions.get_mut(sid).expect("caller checked");
    session.bound.push(id.to_string());
    session.rebuild_tools(providers);
    let host = session.host.clone();
    state.transforms.set_from_hello(
        id,
        sid,
        template.transforms.as_ref(),
        template.context.clone(),
    );
    conn.send(&GatewayMessage::SessionLifecycle(SessionLifecycle {
        session_id: sid.to_string(),
        state: LifecycleState::Started,
        deadline: None,
    }));
    if let Some(text) = template.startup_context {
        if let Some(host) = state.hosts.get_mut(&host) {
            host.send(&HostEvent::SessionContext(SessionContext {
                session_id: sid.to_string(),
                provider: name,
                startup_context: text,
            }));
        }
    }
}

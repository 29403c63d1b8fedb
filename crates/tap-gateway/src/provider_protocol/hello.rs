//! `hello`: bind and rebind, in four steps: validate the declaration, claim the identity
//! (reconnect tokens), register in the session, announce (ack, lifecycle, startup context).

use super::ProviderConn;
use crate::diagnostics::Limit;
use crate::error::Error;
use crate::events::GatewayEvent;
use crate::patterns::rules::CompiledRule;
use crate::providers::registry::unbind_provider;
use crate::providers::validate::{self, Invalid};
use crate::socket::conn::Step;
use crate::state::binding::ALL;
use crate::state::provider_entry::{Phase, Trust};
use crate::state::tool_map::Claimant;
use crate::state::tool_schema::ToolList;
use crate::state::State;
use std::sync::Arc;
use tap_protocol::host::{HostEvent, SessionContext};
use tap_protocol::limits::{MAX_REBINDS_PER_MINUTE, REBIND_WINDOW};
use tap_protocol::pairing::PairingEntry;
use tap_protocol::provider::{GatewayMessage, Hello, HelloAck, LifecycleState, SessionLifecycle};
use tap_protocol::{ErrorCode, PROTOCOL_VERSION};
use tokio::time::Instant;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::hello";

/// A `hello` that passed every check, with what it binds.
pub(super) struct Checked {
    pub h: Hello,
    /// The session it binds to (`"all"` for an all-binding).
    pub session_id: String,
    /// The pairing whose token this connection holds (trust external).
    pub pairing: Option<String>,
    pub tools: Arc<ToolList>,
    pub hooks: Arc<Vec<CompiledRule>>,
    pub persist_dir: Option<String>,
}

impl ProviderConn {
    pub(super) fn on_hello(&mut self, h: Hello) -> Step {
        let checked = match self.validate_hello(h) {
            Ok(checked) => checked,
            Err(step) => return step,
        };
        if checked.session_id == ALL {
            return self.bind_all(checked);
        }
        self.bind(checked);
        Step::Continue
    }

    /// Step 1: the rebind rate, the version, the session it may bind to, the declaration
    /// itself and what its trust allows. A repeat `hello` first leaves the old binding
    /// (spec: "Rebinding"), so a failed rebind leaves the provider unbound rather than half
    /// in two sessions. `Err` carries what the connection does next (the error is sent).
    fn validate_hello(&mut self, mut h: Hello) -> Result<Checked, Step> {
        let now = Instant::now();
        while self
            .hellos
            .front()
            .is_some_and(|t| now.duration_since(*t) > REBIND_WINDOW)
        {
            self.hellos.pop_front();
        }
        // The first hello binds; the next ones are rebinds, at most 10 a minute.
        if self.hellos.len() > MAX_REBINDS_PER_MINUTE as usize {
            self.core.diagnostics.limit_hit(Limit::RebindRate);
            return Err(self.refuse(
                ErrorCode::RateLimited,
                format!("More than {MAX_REBINDS_PER_MINUTE} rebinds in a minute; retry later"),
            ));
        }
        self.hellos.push_back(now);

        if h.protocol_version != PROTOCOL_VERSION {
            return Err(self.fatal(
                ErrorCode::UnsupportedVersion,
                &format!(
                    "This gateway speaks protocolVersion {PROTOCOL_VERSION}; got {}",
                    h.protocol_version
                ),
                Some("hello"),
            ));
        }
        self.unbind("rebind");

        let scope = self
            .with_entry(|s, id| s.providers[id].scope.clone())
            .flatten();
        // A reconnect with a valid token gets back what its `hello` leaves out (decision
        // I3), before the checks, so a restored declaration is checked like a sent one.
        let kept = self
            .with_entry(|s, id| crate::providers::reconnect::restorable(s, id, &h))
            .flatten();
        if let Some(kept) = &kept {
            crate::providers::reconnect::fill(&mut h, kept);
        }
        if h.session.is_none() {
            // A reconnect may leave the session out: the remembered one is restored.
            h.session = self.core.state().identity.remembered_session(&h);
        }
        if h.session.is_none() {
            // A project provider's session is known: the gateway stamps it (spec: "Internal
            // (spawned by gateway from project config) … gateway stamps it").
            h.session = scope.clone();
        }
        let Some(session_id) = h.session.clone() else {
            return Err(self.refuse(
                ErrorCode::InvalidSession,
                "'session' is required: pick an id from the 'sessions' message",
            ));
        };
        // Capability matrix: "Bind to any session / all" is internal only.
        if session_id == ALL && self.trust() != Some(Trust::Internal) {
            return Err(self.refuse(
                ErrorCode::Unauthorized,
                "Binding to \"all\" needs internal trust; pick one session",
            ));
        }
        if let Some(scope) = scope.as_ref().filter(|s| **s != session_id) {
            self.refuse_for(
                &session_id,
                ErrorCode::InvalidSession,
                format!("This provider's token is for session '{scope}' (its tap.config.json); it may bind only there"),
            );
            return Err(Step::Continue);
        }
        if let Err(Error { code, message, .. }) = check_declaration(&h) {
            if code == ErrorCode::PayloadTooLarge {
                self.core.diagnostics.limit_hit(Limit::ToolCount);
            }
            return Err(self.refuse(code, message));
        }
        let pairing = self
            .with_entry(|s, id| s.providers[id].pairing.clone())
            .flatten();
        if pairing.is_some() {
            if let Err(Error { code, message, .. }) =
                crate::pairing::external_trust::external_capabilities(&h)
            {
                return Err(self.refuse(code, message));
            }
        }
        if let Some(t) = h.hooks.as_ref().and_then(|k| k.transforms.as_ref()) {
            if let Err(Error { code, message, .. }) = crate::state::transforms::validate(t) {
                return Err(self.refuse(code, message));
            }
        }
        // After the trust check, so a paired provider hears UNAUTHORIZED, not a regex error.
        let rules = h
            .hooks
            .as_ref()
            .and_then(|k| k.on_pre_tool_use.as_deref())
            .unwrap_or_default();
        let restored_rules = kept
            .as_ref()
            .filter(|_| h.hooks.as_ref().is_none_or(|k| k.on_pre_tool_use.is_none()))
            .filter(|_| pairing.is_none())
            .map(|k| k.hooks.clone());
        let hooks = match restored_rules
            .map(Ok)
            .unwrap_or_else(|| crate::patterns::rules::compile(rules))
        {
            Ok(rules) => rules,
            Err(Error { code, message, .. }) => {
                if code == ErrorCode::PayloadTooLarge {
                    self.core.diagnostics.limit_hit(Limit::RuleCount);
                }
                return Err(self.refuse(code, message));
            }
        };
        let tools = match (h.tools.take(), kept) {
            // Compiled once here, outside the lock (reusing what a reconnect kept).
            (Some(tools), kept) => {
                let kept = kept.as_ref().map(|k| &*k.tools);
                match ToolList::build(tools, kept.as_slice()) {
                    Ok(list) => Arc::new(list),
                    Err(Error { code, message, .. }) => return Err(self.refuse(code, message)),
                }
            }
            (None, Some(kept)) => kept.tools,
            (None, None) => Arc::default(),
        };
        let persist_dir = self.trust().and_then(|t| {
            crate::state::identity::persist_dir(&self.core.config.data_dir, t, &h.name)
        });
        Ok(Checked {
            h,
            session_id,
            pairing,
            tools,
            hooks,
            persist_dir,
        })
    }

    /// Steps 2 to 4 for one session, under one state lock so nothing the binding causes
    /// can overtake its `hello.ack`.
    fn bind(&mut self, c: Checked) {
        let mut rekeyed: Option<String> = None;
        let outcome = self.with_entry(|state, id| -> Result<Option<PairingEntry>, Invalid> {
            if let Some(pid) = &c.pairing {
                crate::pairing::external_trust::check_hello(state, pid, &c.session_id, &c.h.name)?;
            }
            // Step 2: claim the identity (a valid reconnect token takes it over).
            rekeyed = crate::providers::reconnect::claim(state, id, &c.h)?;
            let id = rekeyed.as_deref().unwrap_or(id).to_string();
            let session = state.live_session(&c.session_id)?;
            session.check_conflicts(&c.tools, &Claimant::of_hello(&id, &c.h), &state.providers)?;
            // Step 3: register; step 4: announce.
            let host = register(state, &id, &c);
            self.announce(state, &id, &c, &host);
            Ok(c.pairing.as_deref().and_then(|pid| {
                crate::pairing::external_trust::bound(state, pid, &c.session_id, &c.h.name)
            }))
        });
        self.took_over(rekeyed, &c.h.name);
        match outcome {
            Some(Ok(changed)) => {
                if let Some(id) = &self.id {
                    self.core.stream_controls.forget(id);
                }
                if let Some(entry) = changed {
                    crate::pairing::api::save(&self.core);
                    self.core
                        .events
                        .emit(GatewayEvent::PairingChanged(Box::new(entry)));
                }
                self.core.events.emit(GatewayEvent::StatusChanged);
                tracing::info!(target: LOG_TARGET, provider = ?self.id, name = %c.h.name, session = %c.session_id, tools = c.tools.len(), "provider bound");
                self.record_bound(&c.h.name, &c.session_id);
            }
            Some(Err(Error { code, message, .. })) => self.refuse_for(&c.session_id, code, message),
            None => {}
        }
    }

    /// Step 4, under the lock: `hello.ack` with a fresh reconnect token, the declared
    /// concurrency limit, `session.lifecycle started`, and the `startup_context` to the
    /// session's host once per bind.
    fn announce(&self, state: &mut State, id: &str, c: &Checked, host: &str) {
        self.send(&GatewayMessage::HelloAck(HelloAck {
            protocol_version: PROTOCOL_VERSION,
            provider_id: id.to_string(),
            session_id: Some(c.session_id.clone()),
            reconnect_token: Some(crate::providers::reconnect::issue(
                state,
                id,
                &c.h,
                &c.session_id,
            )),
            persist_dir: c.persist_dir.clone(),
        }));
        state.limits.set(id, &c.h.name, c.h.concurrency.clone());
        self.send(&GatewayMessage::SessionLifecycle(SessionLifecycle {
            session_id: c.session_id.clone(),
            state: LifecycleState::Started,
            deadline: None,
        }));
        if let Some(text) = c.h.startup_context.clone().filter(|t| !t.is_empty()) {
            if let Some(host) = state.hosts.get_mut(host) {
                host.send(&HostEvent::SessionContext(SessionContext {
                    session_id: c.session_id.clone(),
                    provider: c.h.name.clone(),
                    startup_context: text,
                }));
            }
        }
    }

    /// After a claim moved this connection's entry to the identity's old `providerId`.
    pub(super) fn took_over(&mut self, rekeyed: Option<String>, name: &str) {
        if let Some(new_id) = rekeyed {
            tracing::info!(target: LOG_TARGET, provider = %new_id, %name, "provider reconnected; identity taken over");
            self.id = Some(new_id);
        }
    }

    /// `error` in reply to `hello`; the connection stays (AwaitHello or Unbound).
    fn refuse(&self, code: ErrorCode, message: impl Into<String>) -> Step {
        let message = message.into();
        crate::project::hello_refused(&self.core, self.id.as_deref(), &code, &message);
        self.error(code, message, Some("hello"));
        Step::Continue
    }

    /// `error` in reply to a `hello` for `session`, naming that session.
    pub(super) fn refuse_for(&self, session: &str, code: ErrorCode, message: impl Into<String>) {
        let message = message.into();
        crate::project::hello_refused(&self.core, self.id.as_deref(), &code, &message);
        self.error_about(session, code, message, "hello");
    }

    /// Leaves the bound session, if any: tools removed, calls in it cancelled.
    pub(super) fn unbind(&self, reason: &str) {
        self.with_entry(|state, id| unbind_provider(state, id, reason));
    }
}

/// Step 3, under the lock: the entry takes the declaration and the session takes the
/// provider (its tool map is rebuilt, its transforms and context set). Returns the
/// session's host.
fn register(state: &mut State, id: &str, c: &Checked) -> String {
    let entry = state.providers.get_mut(id).expect("checked by with_entry");
    entry.name = Some(c.h.name.clone());
    entry.instance = c.h.instance.clone();
    entry.metadata = c.h.metadata.clone();
    entry.phase = Phase::Bound;
    entry.session = Some(c.session_id.clone());
    entry.tools = c.tools.clone();
    entry.hooks = c.hooks.clone();
    entry.subscribe = c.h.subscribe.clone().unwrap_or_default();
    // Revisions count per binding: a (re)bind starts again.
    entry.updates.clear();
    let State {
        sessions,
        providers,
        ..
    } = state;
    let session = sessions.get_mut(&c.session_id).expect("checked live");
    session.bound.push(id.to_string());
    session.rebuild_tools(providers);
    let host = session.host.clone();
    state.transforms.set_from_hello(
        id,
        &c.session_id,
        c.h.hooks.as_ref().and_then(|k| k.transforms.as_ref()),
        c.h.context.clone(),
    );
    host
}

/// The declaration's own rules: a name, valid tools and instance, a valid concurrency.
fn check_declaration(h: &Hello) -> Result<(), Invalid> {
    if h.name.trim().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "'name' must not be empty",
        ));
    }
    validate::tools(h.tools.as_deref().unwrap_or_default())?;
    validate::instance(h.instance.as_deref())?;
    validate::shared_tools(
        h.instance.as_deref(),
        h.tools.as_deref().unwrap_or_default(),
    )?;
    crate::state::tool_limits::validate(h.concurrency.as_ref())?;
    Ok(())
}

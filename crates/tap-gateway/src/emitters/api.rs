//! What the control plane (`emitters.*`) and the agent's tools do with emitters.

use super::{Emitters, MAX_EMITTERS_PER_SESSION};
use crate::error::Error;
use crate::state::emitters::emitter::Emitter;
use crate::state::emitters::spec::Spec;
use crate::state::Core;
use std::path::PathBuf;
use std::sync::Arc;
use tap_protocol::emitters::{
    EmitterInfo, EmitterRef, EmitterRuns, EmitterStart, EmitterStatus, EmittersList, FilterTest,
    FilterTestResult, Lifespan, Ownership,
};
use tap_protocol::ErrorCode;

type Refusal = Error;

/// Who starts or changes an emitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The session's agent (its `tap_*` tools).
    Agent,
    /// The user: the panel, the CLI.
    User,
    /// The session's `tap.config.json` (already persistent: nothing is written back).
    Config,
}

impl Origin {
    /// What the user owns is protected from the agent only.
    pub fn by(self) -> Ownership {
        match self {
            Origin::Agent => Ownership::ModelOwned,
            Origin::User | Origin::Config => Ownership::UserOwned,
        }
    }
}

/// Starts `p` in its (live) session, owned by `ownership`, for `origin`, replacing an
/// emitter of the same name; the agent replaces a user-owned one only with `force`. A
/// `persistent` one is written to the session's `tap.config.json` first: a definition that
/// is not valid, or a file that cannot be written, starts nothing.
pub(crate) fn start(
    core: &Arc<Core>,
    p: &EmitterStart,
    ownership: Ownership,
    origin: Origin,
) -> Result<EmitterInfo, Refusal> {
    let by = origin.by();
    let (workspace, session_cancel) = {
        let state = core.state();
        let s = state.live_session(&p.session_id)?;
        (s.info.cwd.as_ref().map(PathBuf::from), s.cancel.clone())
    };
    let spec = Spec::check(p, workspace.as_deref(), ownership)?;
    if spec.lifespan == Lifespan::Persistent && origin != Origin::Config {
        if let Some(old) = core.emitters.get(&p.session_id, &spec.name) {
            guard(&old, by, p.force, "replace it")?;
        }
        super::persist::put_emitter(core, p, ownership)?;
    }
    let em = {
        let mut map = core.emitters.map();
        let ems = map.entry(p.session_id.clone()).or_default();
        if let Some(old) = ems.get(&spec.name) {
            guard(old, by, p.force, "replace it")?;
            old.cancel.cancel();
        } else if ems.len() >= MAX_EMITTERS_PER_SESSION {
            core.diagnostics
                .limit_hit(crate::diagnostics::Limit::EmittersPerSession);
            return Err(Error::new(
                ErrorCode::RateLimited,
                format!(
                    "Session '{}' already has {MAX_EMITTERS_PER_SESSION} emitters; stop one first",
                    p.session_id
                ),
            ));
        }
        let em = Arc::new(Emitter::new(
            p.session_id.clone(),
            spec,
            p.clone(),
            session_cancel.child_token(),
        ));
        ems.insert(em.spec.name.clone(), em.clone());
        em
    };
    core.emitters.changed.changed();
    tracing::info!(session = %p.session_id, emitter = %em.spec.name, kind = ?em.spec.kind, schedule = ?em.spec.schedule, lifespan = ?em.spec.lifespan, "emitter started");
    core.tasks
        .spawn(super::runner::run(core.clone(), em.clone()));
    Ok(em.info())
}

/// The request a running emitter was started from (with any filter set since).
pub(crate) fn request_of(core: &Core, r: &EmitterRef) -> Result<EmitterStart, Refusal> {
    Ok(find(&core.emitters, &r.session_id, &r.name)?.request())
}

/// Stops an emitter for `by`; its process group gets SIGTERM, then SIGKILL. The agent stops
/// a user-owned one only with `force`. With `lifespan: persistent` its definition is also
/// removed from the session's `tap.config.json` (first: a file that cannot be written
/// stops nothing); a definition with nothing running is then `NOT_FOUND` saying so.
pub(crate) fn stop(core: &Core, r: &EmitterRef, by: Ownership) -> Result<EmitterInfo, Refusal> {
    let running = find(&core.emitters, &r.session_id, &r.name);
    if let Ok(em) = &running {
        guard(em, by, r.force, "stop it")?;
    }
    let forgot = match r.lifespan {
        Some(Lifespan::Persistent) => {
            super::persist::remove_emitter(core, &r.session_id, &r.name, by, r.force == Some(true))?
        }
        _ => false,
    };
    let em = match running {
        Ok(em) => em,
        Err(mut e) if forgot => {
            e.message = format!(
                "{}; its definition was removed from tap.config.json",
                e.message
            );
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    if !em.cancel.is_cancelled() {
        em.cancel.cancel();
        let mut live = em.live();
        if live.status == Some(EmitterStatus::Running) {
            live.status = Some(EmitterStatus::Stopping);
        } else {
            live.status = Some(EmitterStatus::Stopped);
        }
        drop(live);
        core.emitters.changed.changed();
    }
    tracing::info!(session = %r.session_id, emitter = %em.spec.name, forgot, "emitter stopped");
    Ok(em.info())
}

/// Replaces a running emitter's filter with `rules` for `by` (the agent changes a
/// user-owned one only with `force`); the next line it routes uses them.
pub(crate) fn set_filter(
    core: &Core,
    r: &EmitterRef,
    rules: Vec<tap_protocol::emitters::EmitterRule>,
    by: Ownership,
) -> Result<EmitterInfo, Refusal> {
    let em = find(&core.emitters, &r.session_id, &r.name)?;
    guard(&em, by, r.force, "change its filter")?;
    let filter = crate::state::emitters::event_filter::EventFilter::compile(&rules)?;
    em.set_filter(filter, rules);
    core.emitters.changed.changed();
    tracing::info!(session = %r.session_id, emitter = %em.spec.name, "emitter filter replaced");
    Ok(em.info())
}

/// Every emitter of `session_id` (all sessions' when `None`), by session then name.
pub(crate) fn list(core: &Core, session_id: Option<&str>) -> EmittersList {
    let map = core.emitters.map();
    let mut sessions: Vec<&String> = map
        .keys()
        .filter(|s| session_id.is_none_or(|id| id == *s))
        .collect();
    sessions.sort();
    let emitters = sessions
        .into_iter()
        .flat_map(|s| map[s].values().map(|e| e.info()))
        .collect();
    EmittersList {
        emitters,
        warnings: core.emitters.warnings(session_id),
    }
}

/// An emitter's newest runs.
pub(crate) fn runs(core: &Core, r: &EmitterRef) -> Result<EmitterRuns, Refusal> {
    let em = find(&core.emitters, &r.session_id, &r.name)?;
    let runs = em.live().runs.iter().cloned().collect();
    Ok(EmitterRuns {
        name: em.spec.name.clone(),
        session_id: em.session_id.clone(),
        runs,
    })
}

/// Which rule of `t.event_filter` matches `t.line`.
pub(crate) fn test_filter(t: &FilterTest) -> Result<FilterTestResult, Refusal> {
    let f = crate::state::emitters::event_filter::EventFilter::compile(&t.event_filter)?;
    let (rule, outcome) = f.decide(&t.line);
    Ok(FilterTestResult {
        rule: rule.map(|i| i as u32),
        outcome,
    })
}

/// The user's emitters are protected from the agent (unless it passes `force`), not from
/// the user.
fn guard(em: &Emitter, by: Ownership, force: Option<bool>, action: &str) -> Result<(), Refusal> {
    if em.spec.ownership == Ownership::UserOwned
        && by == Ownership::ModelOwned
        && force != Some(true)
    {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!(
                "Emitter '{}' is user-owned; pass force to {action}",
                em.spec.name
            ),
        ));
    }
    Ok(())
}

fn find(emitters: &Emitters, session_id: &str, name: &str) -> Result<Arc<Emitter>, Refusal> {
    let name = crate::state::emitters::spec::normalise(name);
    emitters
        .map()
        .get(session_id)
        .and_then(|m| m.get(&name))
        .cloned()
        .ok_or_else(|| {
            Error::new(
                ErrorCode::NotFound,
                format!("Session '{session_id}' has no emitter '{name}'"),
            )
        })
}

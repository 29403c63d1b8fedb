//! What the control plane (`emitters.*`) and the agent's tools do with emitters.

use super::emitter::Emitter;
use super::spec::Spec;
use super::{Emitters, MAX_EMITTERS_PER_SESSION};
use crate::state::Core;
use std::path::PathBuf;
use std::sync::Arc;
use tap_protocol::emitters::{
    EmitterInfo, EmitterRef, EmitterRuns, EmitterStart, EmitterStatus, EmittersList, FilterTest,
    FilterTestResult, Ownership,
};
use tap_protocol::ErrorCode;

type Refusal = (ErrorCode, String);

/// Starts `p` in its (live) session, replacing an emitter of the same name; a user-owned
/// one is replaced only with `force`.
pub(crate) fn start(
    core: &Arc<Core>,
    p: &EmitterStart,
    ownership: Ownership,
) -> Result<EmitterInfo, Refusal> {
    let (workspace, session_cancel) = {
        let state = core.state();
        let s = state.live_session(&p.session_id)?;
        (s.info.cwd.as_ref().map(PathBuf::from), s.cancel.clone())
    };
    let spec = Spec::check(p, workspace.as_deref(), ownership)?;
    let em = {
        let mut map = core.emitters.map();
        let ems = map.entry(p.session_id.clone()).or_default();
        if let Some(old) = ems.get(&spec.name) {
            if old.spec.ownership == Ownership::UserOwned && p.force != Some(true) {
                return Err((
                    ErrorCode::Unauthorized,
                    format!(
                        "Emitter '{}' is user-owned; pass force to replace it",
                        spec.name
                    ),
                ));
            }
            old.cancel.cancel();
        } else if ems.len() >= MAX_EMITTERS_PER_SESSION {
            core.diagnostics
                .limit_hit(crate::diagnostics::Limit::EmittersPerSession);
            return Err((
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
            session_cancel.child_token(),
        ));
        ems.insert(em.spec.name.clone(), em.clone());
        em
    };
    tracing::info!(session = %p.session_id, emitter = %em.spec.name, kind = ?em.spec.kind, schedule = ?em.spec.schedule, "emitter started");
    core.tasks
        .spawn(super::runner::run(core.clone(), em.clone()));
    Ok(em.info())
}

/// Stops an emitter; its process group gets SIGTERM, then SIGKILL.
pub(crate) fn stop(core: &Core, r: &EmitterRef) -> Result<EmitterInfo, Refusal> {
    let em = find(&core.emitters, &r.session_id, &r.name)?;
    if em.spec.ownership == Ownership::UserOwned && r.force != Some(true) {
        return Err((
            ErrorCode::Unauthorized,
            format!(
                "Emitter '{}' is user-owned; pass force to stop it",
                em.spec.name
            ),
        ));
    }
    if !em.cancel.is_cancelled() {
        em.cancel.cancel();
        let mut live = em.live();
        if live.status == Some(EmitterStatus::Running) {
            live.status = Some(EmitterStatus::Stopping);
        } else {
            live.status = Some(EmitterStatus::Stopped);
        }
    }
    tracing::info!(session = %r.session_id, emitter = %em.spec.name, "emitter stopped");
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
    let f = super::filter::EventFilter::compile(&t.event_filter)
        .map_err(|m| (ErrorCode::InvalidJson, m))?;
    let (rule, outcome) = f.decide(&t.line);
    Ok(FilterTestResult {
        rule: rule.map(|i| i as u32),
        outcome,
    })
}

fn find(emitters: &Emitters, session_id: &str, name: &str) -> Result<Arc<Emitter>, Refusal> {
    let name = super::spec::normalise(name);
    emitters
        .map()
        .get(session_id)
        .and_then(|m| m.get(&name))
        .cloned()
        .ok_or_else(|| {
            (
                ErrorCode::NotFound,
                format!("Session '{session_id}' has no emitter '{name}'"),
            )
        })
}

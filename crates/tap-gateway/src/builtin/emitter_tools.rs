//! `tap_list_emitters`, `tap_start_emitter`, `tap_set_event_filter`, `tap_stop_emitter`:
//! the agent's side of `emitters::api` (the same checks and limits as the panel's).

use super::{to_json, Answer, Args};
use crate::emitters::api;
use crate::error::Error;
use crate::state::emitters::injector::{DeliveryMode, Policy};
use crate::state::Core;
use serde_json::json;
use std::sync::Arc;
use tap_protocol::emitters::{EmitterRef, EmitterStart, Lifespan};

pub(super) fn list(core: &Core, session_id: &str) -> Answer {
    core.state().live_session(session_id)?;
    to_json(api::list(core, Some(session_id)))
}

fn rules(a: &Args<'_>) -> Result<Vec<tap_protocol::emitters::EmitterRule>, Error> {
    crate::state::emitters::event_filter::rules_of(a.object())
}

pub(super) async fn start(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let rules = rules(a)?;
    let lifespan = a.lifespan();
    let p = EmitterStart {
        session_id: session_id.to_string(),
        name: a.text(&["name"]).unwrap_or_default(),
        command: a.text(&["command"]),
        prompt: a.text(&["prompt"]),
        every: a.text(&["every", "runInterval"]),
        cwd: a.text(&["cwd"]),
        stream: a.stream(),
        include_stderr: a.flag("includeStderr"),
        max_runs: a
            .uint(&["maxRuns"])
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        restart: a.text(&["restart"]),
        event_filter: (!rules.is_empty()).then_some(rules),
        description: a.text(&["description"]),
        force: Some(a.force()),
        lifespan: Some(lifespan),
        auto_start: a.flag("autoStart"),
    };
    // The stream's injector, when asked: checked before anything starts.
    let delivery = a
        .text(&["delivery"])
        .map(|d| DeliveryMode::parse(&d))
        .transpose()?;
    let stream = crate::state::emitters::spec::normalise(p.stream.as_deref().unwrap_or(&p.name));
    let injector = core.emitters.injector(session_id, &stream);
    if delivery.is_some() {
        injector.check_change(&stream, a.by(), a.force())?;
    }
    let info = api::start(core, &p, a.ownership(), a.origin())?;
    if let Some(delivery) = delivery {
        let policy = Policy {
            delivery,
            ownership: a.ownership(),
            lifespan,
            ..injector.policy()
        };
        if lifespan == Lifespan::Persistent {
            crate::emitters::persist::put_stream(core, session_id, &info.stream, &policy)?;
        }
        injector.set(&info.stream, policy, a.by(), a.force())?;
    }
    to_json(json!({
        "emitter": info,
        "sessionInjector": injector.policy(),
    }))
}

pub(super) async fn set_filter(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let r = emitter_ref(session_id, a);
    let info = api::set_filter(core, &r, rules(a)?, a.by())?;
    if a.lifespan() == Lifespan::Persistent {
        // The running emitter's request, with its new filter, becomes its entry.
        let mut p = api::request_of(core, &r)?;
        p.lifespan = Some(Lifespan::Persistent);
        crate::emitters::persist::put_emitter(core, &p, info.ownership)?;
    }
    to_json(json!({ "emitter": info }))
}

pub(super) async fn stop(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let r = emitter_ref(session_id, a);
    let info = api::stop(core, &r, a.by())?;
    to_json(json!({ "emitter": info, "removedFromConfig": r.lifespan.is_some() }))
}

fn emitter_ref(session_id: &str, a: &Args<'_>) -> EmitterRef {
    EmitterRef {
        session_id: session_id.to_string(),
        name: a.text(&["name"]).unwrap_or_default(),
        force: Some(a.force()),
        lifespan: Some(a.lifespan()).filter(|l| *l == Lifespan::Persistent),
    }
}

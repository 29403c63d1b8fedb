//! Emitters declared in a session's `tap.config.json` (the file that declares its project
//! providers, found the same way): started when the session registers, user-owned. An
//! entry that is not valid is a `session.warning` naming the file, the entry and the
//! problem, and listed by `emitters.list`; the other entries start all the same.
//!
//! Fields: `name`, `command` | `prompt`, `every` (alias `runInterval`), `cwd`, `stream`
//! (alias `channel`), `autoStart` (default true), `includeStderr`, `maxRuns`, `restart`,
//! `description`, and the filter as `eventFilter` (a list, or `{"rules": [...]}`) or the
//! legacy `includePattern` / `excludePattern` / `notifyPattern`.

use crate::error::Error;
use crate::state::emitters::injector::{DeliveryMode, Policy};
use crate::state::Core;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tap_protocol::emitters::{EmitterStart, Lifespan, Ownership};
use tap_protocol::ErrorCode;

/// Makes the session's configured emitters and injectors what the file says: entries start
/// (or restart when their definition changed); a persistent emitter whose entry is gone (or
/// says `autoStart: false`) stops after an edit. Emitters started for this session only
/// (`temporary`) are left alone. `file` is `None` (and `json` null) when the session has
/// no config, or its file was removed. The project's follower (`sessions/project_follow.rs`) calls
/// this when the session registers and after each settled edit.
pub(crate) fn reconcile(
    core: &Arc<Core>,
    session_id: &str,
    file: Option<&Path>,
    json: &Value,
    edited: bool,
) {
    let file = file.map(|p| p.display().to_string()).unwrap_or_default();
    // Injectors first: an emitter's first lines already go as its stream says.
    apply_streams(core, session_id, &file, json);
    let entries = match json.get("emitters") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.clone(),
        Some(_) => {
            warn(core, session_id, &file, "'emitters' must be a list".into());
            return;
        }
    };
    let mut wanted = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let label = entry
            .get("name")
            .and_then(Value::as_str)
            .map_or(format!("emitters[{i}]"), |n| {
                format!("emitters[{i}] ('{n}')")
            });
        let start = match entry_of(session_id, entry) {
            Ok(Some(s)) => s,
            Ok(None) => continue, // autoStart: false
            Err(m) => {
                warn(core, session_id, &file, format!("{label}: {m}"));
                continue;
            }
        };
        let name = crate::state::emitters::spec::normalise(&start.name);
        wanted.push(name.clone());
        let running = core.emitters.get(session_id, &name);
        if running.is_some_and(|em| same(&em.request(), &start) && !em.cancel.is_cancelled()) {
            continue;
        }
        let origin = super::api::Origin::Config;
        if let Err(Error { message: m, .. }) =
            super::api::start(core, &start, ownership_of(entry), origin)
        {
            warn(core, session_id, &file, format!("{label}: {m}"));
        }
    }
    if !edited {
        return;
    }
    for em in core.emitters.of_session(session_id) {
        if em.spec.lifespan == Lifespan::Persistent
            && !wanted.contains(&em.spec.name)
            && !em.cancel.is_cancelled()
        {
            let r = tap_protocol::emitters::EmitterRef {
                session_id: session_id.to_string(),
                name: em.spec.name.clone(),
                ..Default::default()
            };
            tracing::info!(session = %session_id, emitter = %em.spec.name, "its entry left the project config; stopping it");
            let _ = super::api::stop(core, &r, Ownership::UserOwned);
        }
    }
}

/// Whether a running emitter's request and a config entry define the same emitter (names
/// as normalised; `force` and how it was asked for do not count).
fn same(running: &EmitterStart, entry: &EmitterStart) -> bool {
    let norm = |p: &EmitterStart| EmitterStart {
        session_id: String::new(),
        name: crate::state::emitters::spec::normalise(&p.name),
        stream: Some(crate::state::emitters::spec::normalise(
            p.stream.as_deref().unwrap_or(&p.name),
        )),
        force: None,
        lifespan: None,
        auto_start: None,
        include_stderr: p.include_stderr.filter(|i| *i),
        event_filter: p.event_filter.clone().filter(|f| !f.is_empty()),
        ..p.clone()
    };
    norm(running) == norm(entry)
}

fn warn(core: &Core, session_id: &str, file: &str, problem: String) {
    warn_that(
        core,
        session_id,
        file,
        problem,
        "that emitter was not started",
    );
}

pub(crate) fn warn_that(
    core: &Core,
    session_id: &str,
    file: &str,
    problem: String,
    consequence: &str,
) {
    let message = format!("{file}: {problem}; {consequence}");
    core.emitters.warn(session_id, message.clone());
    crate::project::warn::warn_session(core, session_id, message, Some(file.to_string()), None);
}

/// `streams`: `{"<stream>": {"description": …, "sessionInjector": {"enabled": true,
/// "delivery": "surface", "ownership": "userOwned"}}}`, or the reference's list of the same
/// entries each with its `name`, sets each stream's injector (user-owned unless it says
/// otherwise).
fn apply_streams(core: &Core, session_id: &str, file: &str, json: &Value) {
    let streams = match crate::project::config::streams_of(json) {
        Ok((streams, problems)) => {
            for problem in problems {
                warn_that(core, session_id, file, problem, "it was skipped");
            }
            streams
        }
        Err(problem) => {
            return warn_that(core, session_id, file, problem, "no injector was set");
        }
    };
    for (name, entry) in &streams {
        let Some(injector) = entry.get("sessionInjector") else {
            continue;
        };
        let stream = crate::state::emitters::spec::normalise(name);
        match policy_of(injector, entry.get("description")) {
            Ok(policy) if !stream.is_empty() => {
                let _ = core.emitters.injector(session_id, &stream).set(
                    &stream,
                    policy,
                    Ownership::UserOwned,
                    true,
                );
            }
            Ok(_) => warn_that(
                core,
                session_id,
                file,
                format!("streams['{name}']: the name has none of a-z, 0-9, '.', '_', '-'"),
                "its injector was not set",
            ),
            Err(m) => warn_that(
                core,
                session_id,
                file,
                format!("streams['{name}'].sessionInjector: {m}"),
                "its injector was not set",
            ),
        }
    }
}

fn policy_of(v: &Value, description: Option<&Value>) -> Result<Policy, Error> {
    let o = v
        .as_object()
        .ok_or_else(|| Error::invalid("it must be an object"))?;
    let enabled = match o.get("enabled") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'enabled' must be true or false",
            ))
        }
    };
    let delivery = match o.get("delivery") {
        None | Some(Value::Null) => DeliveryMode::Surface,
        Some(Value::String(d)) => DeliveryMode::parse(d)?,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'delivery' must be a string",
            ))
        }
    };
    Ok(Policy {
        enabled,
        delivery,
        lifespan: Lifespan::Persistent,
        ownership: ownership_of(v),
        description: description.and_then(Value::as_str).map(str::to_string),
    })
}

/// One entry as an `emitters.start`; `None` when it says `autoStart: false`.
fn entry_of(session_id: &str, entry: &Value) -> Result<Option<EmitterStart>, Error> {
    let o = entry
        .as_object()
        .ok_or_else(|| Error::invalid("each emitter must be an object"))?;
    if o.get("autoStart").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    let text = |k: &str| -> Result<Option<String>, Error> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::new(
                ErrorCode::InvalidJson,
                format!("'{k}' must be a string"),
            )),
        }
    };
    let name = text("name")?.ok_or_else(|| Error::invalid("'name' is missing"))?;
    let rules = crate::state::emitters::event_filter::rules_of(o)?;
    Ok(Some(EmitterStart {
        session_id: session_id.to_string(),
        name,
        command: text("command")?,
        prompt: text("prompt")?,
        every: text("every")?.or(text("runInterval")?),
        cwd: text("cwd")?,
        stream: text("stream")?.or(text("channel")?),
        include_stderr: o.get("includeStderr").and_then(Value::as_bool),
        max_runs: match o.get("maxRuns") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| Error::invalid("'maxRuns' must be a positive integer"))?,
            ),
        },
        restart: text("restart")?,
        event_filter: (!rules.is_empty()).then_some(rules),
        description: text("description")?,
        force: Some(true),
        lifespan: Some(Lifespan::Persistent),
        auto_start: None,
    }))
}

/// An entry's `ownership`: the user's unless it says `modelOwned` (the agent wrote it and
/// keeps managing it).
fn ownership_of(entry: &Value) -> Ownership {
    match entry.get("ownership").and_then(Value::as_str) {
        Some("modelOwned") => Ownership::ModelOwned,
        _ => Ownership::UserOwned,
    }
}

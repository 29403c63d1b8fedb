//! Emitters declared in a session's `tap.config.json` (the file that declares its project
//! providers, found the same way): started when the session registers, user-owned. An
//! entry that is not valid is a `session.warning` naming the file, the entry and the
//! problem, and listed by `emitters.list`; the other entries start all the same.
//!
//! Fields: `name`, `command` | `prompt`, `every` (alias `runInterval`), `cwd`, `stream`
//! (alias `channel`), `autoStart` (default true), `includeStderr`, `maxRuns`, `restart`,
//! `description`, and the filter as `eventFilter` (a list, or `{"rules": [...]}`) or the
//! legacy `includePattern` / `excludePattern` / `notifyPattern`.

use super::injector::{DeliveryMode, Policy};
use crate::state::Core;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tap_protocol::emitters::{EmitterStart, Lifespan, Ownership};

/// Reads the config for `session_id` (working in `cwd`) and starts its emitters.
pub(crate) fn start_configured(core: &Arc<Core>, session_id: String, cwd: Option<String>) {
    let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
        return;
    };
    let core = core.clone();
    core.clone().tasks.spawn(async move {
        let found = tokio::task::spawn_blocking(move || {
            let path = crate::providers::project::config::find(&cwd)?;
            let json = crate::providers::project::config::read_json(&path);
            Some((path, json))
        })
        .await
        .ok()
        .flatten();
        let Some((path, json)) = found else { return };
        let file = path.display().to_string();
        // The providers' side already warns about an unreadable file.
        let Ok(json) = json else { return };
        // Injectors first: an emitter's first lines already go as its stream says.
        apply_streams(&core, &session_id, &file, &json);
        let entries = match json.get("emitters") {
            None | Some(Value::Null) => return,
            Some(Value::Array(list)) => list.clone(),
            Some(_) => {
                warn(
                    &core,
                    &session_id,
                    &file,
                    "'emitters' must be a list".into(),
                );
                return;
            }
        };
        for (i, entry) in entries.iter().enumerate() {
            let label = entry
                .get("name")
                .and_then(Value::as_str)
                .map_or(format!("emitters[{i}]"), |n| {
                    format!("emitters[{i}] ('{n}')")
                });
            let start = match entry_of(&session_id, entry) {
                Ok(Some(s)) => s,
                Ok(None) => continue, // autoStart: false
                Err(m) => {
                    warn(&core, &session_id, &file, format!("{label}: {m}"));
                    continue;
                }
            };
            if let Err((_, m)) = super::api::start(
                &core,
                &start,
                ownership_of(entry),
                super::api::Origin::Config,
            ) {
                warn(&core, &session_id, &file, format!("{label}: {m}"));
            }
        }
    });
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

fn warn_that(core: &Core, session_id: &str, file: &str, problem: String, consequence: &str) {
    let message = format!("{file}: {problem}; {consequence}");
    core.emitters.warn(session_id, message.clone());
    crate::providers::project::warn::warn_session(
        core,
        session_id,
        message,
        Some(file.to_string()),
        None,
    );
}

/// `streams`: `{"<stream>": {"description": …, "sessionInjector": {"enabled": true,
/// "delivery": "surface", "ownership": "userOwned"}}}` sets each stream's injector
/// (user-owned unless it says otherwise).
fn apply_streams(core: &Core, session_id: &str, file: &str, json: &Value) {
    let streams = match json.get("streams") {
        None | Some(Value::Null) => return,
        Some(Value::Object(m)) => m,
        Some(_) => {
            let problem = "'streams' must be an object keyed by stream name".to_string();
            return warn_that(core, session_id, file, problem, "no injector was set");
        }
    };
    for (name, entry) in streams {
        let Some(injector) = entry.get("sessionInjector") else {
            continue;
        };
        let stream = super::spec::normalise(name);
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

fn policy_of(v: &Value, description: Option<&Value>) -> Result<Policy, String> {
    let o = v.as_object().ok_or("it must be an object")?;
    let enabled = match o.get("enabled") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("'enabled' must be true or false".into()),
    };
    let delivery = match o.get("delivery") {
        None | Some(Value::Null) => DeliveryMode::Surface,
        Some(Value::String(d)) => DeliveryMode::parse(d).map_err(|(_, m)| m)?,
        Some(_) => return Err("'delivery' must be a string".into()),
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
fn entry_of(session_id: &str, entry: &Value) -> Result<Option<EmitterStart>, String> {
    let o = entry.as_object().ok_or("each emitter must be an object")?;
    if o.get("autoStart").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    let text = |k: &str| -> Result<Option<String>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("'{k}' must be a string")),
        }
    };
    let name = text("name")?.ok_or("'name' is missing")?;
    let rules = super::filter::rules_of(o)?;
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
                    .ok_or("'maxRuns' must be a positive integer")?,
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

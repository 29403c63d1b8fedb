//! Persistent emitters and injectors: written to the session's `tap.config.json` (the one
//! its providers and emitters are read from; `<cwd>/tap.config.json` when there is none),
//! so the next session in that project starts them again.
//!
//! A write is read-modify-write of the whole file under one lock (two writes never lose
//! each other's change), then atomic: a temp file in the same directory, flushed, renamed
//! over the old one with its permissions. Emitters come out sorted by name and
//! pretty-printed; every key and field a write does not own is kept, in the user's order
//! (serde_json's `preserve_order`; the fields a write owns come after them). A file another
//! user owns, or anyone may write, is refused as it is for reading.

use crate::error::Error;
use crate::project::config::{self as project_config, FILE_NAME};
use crate::state::emitters::injector::Policy;
use crate::state::Core;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tap_protocol::emitters::{EmitterStart, Ownership};
use tap_protocol::ErrorCode;

type Refusal = Error;

/// The emitter fields a write owns (replaced or removed); any other field is kept.
const OWNED_FIELDS: &[&str] = &[
    "name",
    "command",
    "prompt",
    "every",
    "runInterval",
    "cwd",
    "stream",
    "channel",
    "autoStart",
    "includeStderr",
    "ownership",
    "maxRuns",
    "restart",
    "description",
    "eventFilter",
    "includePattern",
    "excludePattern",
    "notifyPattern",
];

/// One write at a time across sessions: they may share a file.
static WRITING: Mutex<()> = Mutex::new(());

/// Writes `p` as an entry of `emitters` (replacing the entry of the same name).
pub(crate) fn put_emitter(
    core: &Core,
    p: &EmitterStart,
    ownership: Ownership,
) -> Result<PathBuf, Refusal> {
    let mut entry = Map::new();
    entry.insert(
        "name".into(),
        crate::state::emitters::spec::normalise(&p.name).into(),
    );
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            entry.insert(k.into(), v);
        }
    };
    put("command", p.command.clone().map(Value::from));
    put("prompt", p.prompt.clone().map(Value::from));
    put("every", p.every.clone().map(Value::from));
    put("cwd", p.cwd.clone().map(Value::from));
    put("stream", p.stream.clone().map(Value::from));
    put("includeStderr", p.include_stderr.map(Value::from));
    put("maxRuns", p.max_runs.map(Value::from));
    put("restart", p.restart.clone().map(Value::from));
    put("description", p.description.clone().map(Value::from));
    put("autoStart", p.auto_start.map(Value::from));
    put(
        "eventFilter",
        p.event_filter
            .as_ref()
            .and_then(|r| serde_json::to_value(r).ok()),
    );
    put("ownership", serde_json::to_value(ownership).ok());
    let path = config_path(core, &p.session_id)?;
    let name = crate::state::emitters::spec::normalise(&p.name);
    edit(path, move |root| {
        let list = emitters_of(root)?;
        let existing = list.iter_mut().find(|e| {
            e.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| crate::state::emitters::spec::normalise(n) == name)
        });
        match existing.and_then(Value::as_object_mut) {
            Some(old) => {
                old.retain(|k, _| !OWNED_FIELDS.contains(&k.as_str()));
                old.extend(entry);
            }
            None => list.push(Value::Object(entry)),
        }
        list.sort_by_key(|e| e.get("name").and_then(Value::as_str).map(str::to_string));
        Ok(())
    })
}

/// Removes the `emitters` entry named `name`; whether there was one.
/// The agent removes a user-owned entry (its `ownership` absent or `userOwned`) only with
/// `force`.
pub(crate) fn remove_emitter(
    core: &Core,
    session_id: &str,
    name: &str,
    by: Ownership,
    force: bool,
) -> Result<bool, Refusal> {
    let path = config_path(core, session_id)?;
    if !path.exists() {
        return Ok(false);
    }
    let name = crate::state::emitters::spec::normalise(name);
    let named = |e: &Value| {
        e.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| crate::state::emitters::spec::normalise(n) == name)
    };
    let mut removed = false;
    let mut protected = false;
    let outcome = edit(path, |root| {
        let list = emitters_of(root)?;
        let user_owned = list
            .iter()
            .filter(|e| named(e))
            .any(|e| e.get("ownership").and_then(Value::as_str) != Some("modelOwned"));
        if user_owned && by == Ownership::ModelOwned && !force {
            protected = true;
            return Err(Error::internal("the entry is user-owned"));
        }
        let before = list.len();
        list.retain(|e| !named(e));
        removed = list.len() != before;
        Ok(())
    });
    if protected {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!("Emitter '{name}' is user-owned in tap.config.json; pass force to remove it"),
        ));
    }
    outcome?;
    Ok(removed)
}

/// Writes `policy` as `streams.<stream>.sessionInjector`.
pub(crate) fn put_stream(
    core: &Core,
    session_id: &str,
    stream: &str,
    policy: &Policy,
) -> Result<PathBuf, Refusal> {
    let path = config_path(core, session_id)?;
    let stream = stream.to_string();
    let mut injector = Map::new();
    injector.insert("enabled".into(), policy.enabled.into());
    injector.insert("delivery".into(), policy.delivery.as_str().into());
    injector.insert(
        "ownership".into(),
        serde_json::to_value(policy.ownership).unwrap_or_default(),
    );
    let description = policy.description.clone();
    edit(path, move |root| {
        let streams = root
            .entry("streams")
            .or_insert_with(|| Value::Object(Map::new()));
        // The file keeps its shape: the reference's list of named entries stays a list.
        let entry = match streams {
            Value::Object(streams) => streams
                .entry(stream)
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(list) => {
                let at = list.iter().position(|e| e["name"] == stream.as_str());
                let at = at.unwrap_or_else(|| {
                    list.push(serde_json::json!({ "name": stream }));
                    list.len() - 1
                });
                &mut list[at]
            }
            _ => {
                return Err(Error::internal(
                    "'streams' must be an object keyed by stream name or a list of entries with a 'name'",
                ))
            }
        };
        let Some(entry) = entry.as_object_mut() else {
            return Err(Error::internal(
                "each stream in 'streams' must be an object",
            ));
        };
        entry.insert("sessionInjector".into(), Value::Object(injector));
        if let Some(d) = description {
            entry.insert("description".into(), d.into());
        }
        Ok(())
    })
}

/// The file a session's persistent definitions go to.
pub(crate) fn config_path(core: &Core, session_id: &str) -> Result<PathBuf, Refusal> {
    let cwd = {
        let state = core.state();
        state.live_session(session_id)?.info.cwd.clone()
    };
    let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!("Session '{session_id}' has no working directory: 'persistent' needs a project to write tap.config.json in; use 'temporary'"),
        ));
    };
    Ok(project_config::find(&cwd).unwrap_or_else(|| cwd.join(FILE_NAME)))
}

fn emitters_of(root: &mut Map<String, Value>) -> Result<&mut Vec<Value>, Error> {
    root.entry("emitters")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| Error::internal("'emitters' must be a list"))
}

/// Reads the file (an empty object when it does not exist), applies `change`, writes it
/// back atomically. Blocking file work, done in place: these writes are rare (a tool call,
/// a panel action) and a few KiB.
fn edit<F>(path: PathBuf, change: F) -> Result<PathBuf, Refusal>
where
    F: FnOnce(&mut Map<String, Value>) -> Result<(), Error>,
{
    let written = (|| {
        let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
        let mut root = match path.exists() {
            true => match project_config::read_json(&path)? {
                Value::Object(o) => o,
                _ => return Err(Error::internal("it is not a JSON object")),
            },
            false => Map::new(),
        };
        change(&mut root)?;
        write_atomic(&path, &Value::Object(root))
            .map_err(|e| Error::internal(format!("cannot write it: {e}")))
    })();
    match written {
        Ok(()) => Ok(path),
        Err(m) => Err(Error::new(
            ErrorCode::Internal,
            format!("{}: {m}; nothing was changed", path.display()),
        )),
    }
}

fn write_atomic(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    // Beside the file (a rename never crosses file systems), hidden, unique to this
    // process; the lock above keeps this process's writes apart.
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(FILE_NAME);
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            f.set_permissions(meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_keeps_the_files_mode_and_ends_with_a_newline() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"a\": 1\n}\n"
        );
    }
}

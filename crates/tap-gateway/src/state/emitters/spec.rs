//! An emitter's definition, checked: from `emitters.start` (the panel, the CLI, the agent's
//! tools) or a `tap.config.json` entry. Nothing starts unless all of it is valid.

use super::event_filter::EventFilter;
use crate::error::Error;
use crate::limits::{MAX_EMITTER_NAME_LEN, MAX_EMITTER_TEXT_BYTES};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::emitters::{EmitterKind, EmitterStart, Lifespan, Ownership, Schedule};
use tap_protocol::ErrorCode;

/// A checked definition.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub name: String,
    pub kind: EmitterKind,
    /// The command line or the prompt.
    pub text: String,
    pub schedule: Schedule,
    pub every_text: Option<String>,
    pub every: Option<Duration>,
    /// Where a command runs (inside the session's workspace).
    pub cwd: PathBuf,
    pub stream: String,
    pub include_stderr: bool,
    pub max_runs: Option<u32>,
    pub restart_on_failure: bool,
    pub filter: Arc<EventFilter>,
    pub description: Option<String>,
    pub ownership: Ownership,
    pub lifespan: Lifespan,
}

type Invalid = Error;

fn invalid(m: impl Into<String>) -> Invalid {
    Error::new(ErrorCode::InvalidJson, m.into())
}

/// Stream and emitter names as the reference normalises them: lowercase, runs of anything
/// but `a-z0-9._-` become one `-`, dashes trimmed at both ends.
pub(crate) fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

impl Spec {
    /// Checks `p` for a session whose working directory is `workspace`.
    pub fn check(
        p: &EmitterStart,
        workspace: Option<&Path>,
        ownership: Ownership,
    ) -> Result<Self, Invalid> {
        let name = normalise(&p.name);
        if name.is_empty() || name.len() > MAX_EMITTER_NAME_LEN {
            return Err(invalid(format!(
                "'name' must have 1 to {MAX_EMITTER_NAME_LEN} of a-z, 0-9, '.', '_', '-'"
            )));
        }
        let (kind, text) = match (p.command.as_deref(), p.prompt.as_deref()) {
            (Some(c), None) if !c.trim().is_empty() => (EmitterKind::Command, c),
            (None, Some(t)) if !t.trim().is_empty() => (EmitterKind::Prompt, t),
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "Give exactly one of 'command' and 'prompt', not both",
                ))
            }
            _ => {
                return Err(invalid(
                    "Give exactly one of 'command' and 'prompt' (not empty)",
                ))
            }
        };
        if text.len() > MAX_EMITTER_TEXT_BYTES {
            return Err(invalid(format!(
                "The {} is {} bytes; at most {MAX_EMITTER_TEXT_BYTES}",
                if kind == EmitterKind::Command {
                    "command"
                } else {
                    "prompt"
                },
                text.len()
            )));
        }
        let (schedule, every) = super::schedule::parse(p.every.as_deref(), kind)?;
        let restart_on_failure = match p.restart.as_deref() {
            None | Some("never") | Some("no") => false,
            Some("on-failure") if schedule == Schedule::Continuous => true,
            Some("on-failure") => {
                return Err(invalid(
                    "'restart: on-failure' is for continuous commands (no 'every')",
                ))
            }
            Some(other) => {
                return Err(invalid(format!(
                    "'restart' must be 'on-failure' or 'never', not '{other}'"
                )))
            }
        };
        if p.max_runs == Some(0) {
            return Err(invalid("'maxRuns' must be at least 1"));
        }
        let stream = normalise(p.stream.as_deref().unwrap_or(&name));
        if stream.is_empty() || stream.len() > MAX_EMITTER_NAME_LEN {
            return Err(invalid(format!(
                "'stream' must have 1 to {MAX_EMITTER_NAME_LEN} of a-z, 0-9, '.', '_', '-'"
            )));
        }
        let filter = EventFilter::compile(p.event_filter.as_deref().unwrap_or_default())?;
        let cwd = if kind == EmitterKind::Command {
            resolve_cwd(workspace, p.cwd.as_deref())?
        } else {
            workspace.map(Path::to_path_buf).unwrap_or_default()
        };
        Ok(Self {
            name,
            kind,
            text: text.to_string(),
            schedule,
            every_text: p.every.clone().filter(|e| !e.trim().is_empty()),
            every,
            cwd,
            stream,
            include_stderr: p.include_stderr.unwrap_or(false),
            max_runs: p.max_runs,
            restart_on_failure,
            filter: Arc::new(filter),
            description: p.description.clone(),
            ownership,
            lifespan: p.lifespan.unwrap_or(Lifespan::Temporary),
        })
    }
}

/// `cwd` against the session's workspace, after `..` and symlinks; refused when it leaves
/// the workspace or does not exist. A session without a workspace runs commands in the
/// user's home directory and takes no `cwd`.
fn resolve_cwd(workspace: Option<&Path>, cwd: Option<&str>) -> Result<PathBuf, Invalid> {
    let Some(root) = workspace else {
        return match cwd {
            None => Ok(std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from)),
            Some(_) => Err(invalid("'cwd' needs a session with a working directory")),
        };
    };
    let root = root.canonicalize().map_err(|e| {
        invalid(format!(
            "The session's working directory {}: {e}",
            root.display()
        ))
    })?;
    let Some(cwd) = cwd.filter(|c| !c.is_empty()) else {
        return Ok(root);
    };
    let wanted = root.join(cwd);
    let real = wanted
        .canonicalize()
        .map_err(|e| invalid(format!("'cwd' {}: {e}", wanted.display())))?;
    if !real.starts_with(&root) {
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!(
                "'cwd' {} leaves the session's workspace {}",
                real.display(),
                root.display()
            ),
        ));
    }
    if !real.is_dir() {
        return Err(invalid(format!(
            "'cwd' {} is not a directory",
            real.display()
        )));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(name: &str) -> EmitterStart {
        EmitterStart {
            session_id: "s".into(),
            name: name.into(),
            command: Some("echo hi".into()),
            ..Default::default()
        }
    }

    #[test]
    fn names_are_normalised_as_the_reference_does() {
        assert_eq!(normalise("  Unit Tests (watch)!! "), "unit-tests-watch");
        assert_eq!(normalise("git.log_v2"), "git.log_v2");
        assert_eq!(normalise("***"), "");
    }

    #[test]
    fn exactly_one_of_command_and_prompt() {
        let mut p = start("x");
        p.prompt = Some("hello".into());
        assert!(Spec::check(&p, None, Ownership::ModelOwned)
            .unwrap_err()
            .message
            .contains("not both"));
        p.command = None;
        p.prompt = Some("  ".into());
        assert!(Spec::check(&p, None, Ownership::ModelOwned).is_err());
    }

    #[test]
    fn cwd_stays_inside_the_workspace_after_dots_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("escape")).unwrap();
        let check = |cwd: &str| {
            let mut p = start("x");
            p.cwd = Some(cwd.into());
            Spec::check(&p, Some(&ws), Ownership::ModelOwned)
        };
        assert!(check("sub").unwrap().cwd.ends_with("ws/sub"));
        assert_eq!(check("../").unwrap_err().code, ErrorCode::Unauthorized);
        assert_eq!(
            check("sub/../..").unwrap_err().code,
            ErrorCode::Unauthorized
        );
        assert_eq!(check("escape").unwrap_err().code, ErrorCode::Unauthorized);
        assert_eq!(check("/etc").unwrap_err().code, ErrorCode::Unauthorized);
        assert!(check("missing").is_err());
    }
}

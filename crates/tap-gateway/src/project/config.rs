//! `tap.config.json`: finding a session's project config (the nearest at or above its
//! `cwd`, `.github/tap.config.json` included) and reading its `providers` and `streams`.
//!
//! ```json
//! { "providers": [ { "name": "ci", "command": "node", "args": ["tools/ci.mjs"],
//!                    "cwd": "tools", "env": { "CI_URL": "https://ci.example" } } ] }
//! ```
//!
//! `providers` may also be an object keyed by name (`{"ci": {"command": …}}`), the shape MCP
//! client configs use. Each entry is checked on its own: a bad entry is reported and
//! skipped, the others still start. A file that cannot be read or parsed starts nothing.

use crate::error::Error;
use crate::processes::spawn::SpawnSpec;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use tap_protocol::limits::{
    MAX_PROJECT_CONFIG_BYTES, MAX_PROJECT_PROVIDERS, MAX_PROJECT_PROVIDER_NAME_LEN,
};
use tap_protocol::ErrorCode;

/// The file name looked for in the session's `cwd` and its ancestors.
pub(crate) const FILE_NAME: &str = "tap.config.json";

/// One provider to run for the session.
#[derive(Debug, Clone)]
pub(crate) struct ProjectProvider {
    pub name: String,
    pub spec: SpawnSpec,
}

/// Where a config may also sit in a directory: the reference extension reads
/// `.github/tap.config.json`, so a project set up for it works here unchanged.
pub(crate) const GITHUB_DIR: &str = ".github";

/// The config governing a directory, and a second one there that is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub path: PathBuf,
    /// `.github/tap.config.json` beside a `tap.config.json` in the same directory: the
    /// latter wins and this one is named in a warning, never merged.
    pub ignored: Option<PathBuf>,
}

/// The nearest `tap.config.json` at or above `cwd` (which must be absolute), if any.
pub(crate) fn find(cwd: &Path) -> Option<PathBuf> {
    locate(cwd).map(|l| l.path)
}

/// The nearest directory at or above `cwd` holding `tap.config.json` or
/// `.github/tap.config.json`; when it holds both, the first. Nearest wins as for
/// `package.json`: a subproject's file governs its sessions.
pub(crate) fn locate(cwd: &Path) -> Option<Located> {
    if !cwd.is_absolute() {
        return None;
    }
    cwd.ancestors().find_map(|dir| {
        let root = dir.join(FILE_NAME);
        let github = dir.join(GITHUB_DIR).join(FILE_NAME);
        match (root.is_file(), github.is_file()) {
            (true, true) => Some(Located {
                path: root,
                ignored: Some(github),
            }),
            (true, false) => Some(Located {
                path: root,
                ignored: None,
            }),
            (false, true) => Some(Located {
                path: github,
                ignored: None,
            }),
            (false, false) => None,
        }
    })
}

/// The directory a config's relative paths are taken from: the project's, which for
/// `.github/tap.config.json` is the one above `.github` (its commands name the
/// project's scripts as a root file's would).
pub(crate) fn base_dir(path: &Path) -> &Path {
    let dir = path.parent().unwrap_or(Path::new("/"));
    match dir.file_name() {
        Some(n) if n == GITHUB_DIR => dir.parent().unwrap_or(dir),
        _ => dir,
    }
}

/// The config at `path` as JSON, with the same checks as for its providers (owner, size):
/// for the parts of it other rooms read (`emitters`).
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value, Error> {
    let bytes = read_bytes(path)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("it is not valid JSON: {e}")))
}

/// The file's bytes, once it is known to be the user's own and not too large to read.
fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    check_owner(path)?;
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("cannot read it: {e}")))?;
    if meta.len() > MAX_PROJECT_CONFIG_BYTES {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
                "it is {} bytes; at most {MAX_PROJECT_CONFIG_BYTES} are read",
                meta.len()
            ),
        ));
    }
    std::fs::read(path)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("cannot read it: {e}")))
}

/// A config runs commands as the gateway's user, so it must be that user's own file: one
/// found in a shared ancestor (`/tmp/tap.config.json`) and planted by someone else, or one
/// anyone may rewrite, is refused.
fn check_owner(path: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)
            .map_err(|e| Error::new(ErrorCode::Internal, format!("cannot read it: {e}")))?;
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(Error::new(
                ErrorCode::Internal,
                format!(
                "it belongs to another user (uid {}); only your own config files start providers",
                meta.uid()
            ),
            ));
        }
        if meta.mode() & 0o002 != 0 {
            return Err(Error::internal("any user may write it; remove the write permission for others (chmod o-w) to use it"));
        }
    }
    Ok(())
}

/// Parses a config's bytes; relative paths are taken from `dir`, the config's directory.
/// (The gateway reads the JSON once for every part, [`parse_value`]; the fuzz target and
/// the tests start from bytes.)
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse(
    bytes: &[u8],
    dir: &Path,
) -> Result<(Vec<ProjectProvider>, Vec<String>), Error> {
    let root: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidJson, format!("it is not valid JSON: {e}")))?;
    parse_value(&root, dir)
}

/// [`parse`] of a document already read.
pub(crate) fn parse_value(
    root: &Value,
    dir: &Path,
) -> Result<(Vec<ProjectProvider>, Vec<String>), Error> {
    let Value::Object(root) = root else {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "it must be a JSON object",
        ));
    };
    let entries: Vec<(String, Value)> = match root.get("providers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("providers[{i}]"), v.clone()))
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, v)| {
                let mut v = v.clone();
                if let Value::Object(o) = &mut v {
                    o.entry("name")
                        .or_insert_with(|| Value::String(name.clone()));
                }
                (format!("providers.{name}"), v)
            })
            .collect(),
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'providers' must be an array (or an object keyed by name)",
            ))
        }
    };
    let mut providers: Vec<ProjectProvider> = Vec::new();
    let mut problems = Vec::new();
    for (at, v) in entries {
        match entry(&v, dir) {
            Err(why) => problems.push(format!("{at}: {why}; skipped")),
            Ok(p) if providers.iter().any(|q| q.name == p.name) => problems.push(format!(
                "{at}: another provider is already named '{}'; skipped",
                p.name
            )),
            Ok(_) if providers.len() == MAX_PROJECT_PROVIDERS => problems.push(format!(
                "{at}: at most {MAX_PROJECT_PROVIDERS} providers are started per session; skipped"
            )),
            Ok(p) => providers.push(p),
        }
    }
    Ok((providers, problems))
}

/// A config's streams as `(name, entry)` pairs, and the problems found reading them.
pub(crate) type StreamEntries = (Vec<(String, Value)>, Vec<String>);

/// `streams` in either shape, as `(name, entry)` pairs: the object keyed by stream name
/// this gateway wrote (`{"ci": {"sessionInjector": …}}`) or the reference's array of
/// entries naming themselves (`[{"name": "ci", "sessionInjector": …}]`). An array entry
/// without a string `name` is a problem naming its index; the others are kept.
pub(crate) fn streams_of(root: &Value) -> Result<StreamEntries, String> {
    match root.get("streams") {
        None | Some(Value::Null) => Ok((Vec::new(), Vec::new())),
        Some(Value::Object(m)) => Ok((
            m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Vec::new(),
        )),
        Some(Value::Array(list)) => {
            let mut out: Vec<(String, Value)> = Vec::new();
            let mut problems = Vec::new();
            for (i, v) in list.iter().enumerate() {
                match v.get("name").and_then(Value::as_str) {
                    Some(n) if out.iter().any(|(m, _)| m == n) => {
                        problems.push(format!("streams[{i}]: another entry is named '{n}'"))
                    }
                    Some(n) => out.push((n.to_string(), v.clone())),
                    None => problems.push(format!(
                        "streams[{i}]: each entry must be an object with a string 'name'"
                    )),
                }
            }
            Ok((out, problems))
        }
        Some(_) => Err(
            "'streams' must be an object keyed by stream name or a list of entries with a 'name'"
                .into(),
        ),
    }
}

fn entry(v: &Value, dir: &Path) -> Result<ProjectProvider, Error> {
    let Value::Object(o) = v else {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "must be an object with 'name' and 'command'",
        ));
    };
    let name = string(o, "name")?.ok_or_else(|| Error::invalid("'name' is missing"))?;
    if name.is_empty()
        || name.len() > MAX_PROJECT_PROVIDER_NAME_LEN
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            format!(
            "'name' must be 1 to {MAX_PROJECT_PROVIDER_NAME_LEN} characters of A-Z a-z 0-9 . _ -"
        ),
        ));
    }
    let command = string(o, "command")?.ok_or_else(|| Error::invalid("'command' is missing"))?;
    if command.trim().is_empty() || command.contains('\0') {
        return Err(Error::new(
            ErrorCode::InvalidJson,
            "'command' must be a non-empty program name or path",
        ));
    }
    let args = match o.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Error::invalid("'args' must be an array of strings"))?,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'args' must be an array of strings",
            ))
        }
    };
    let cwd = match string(o, "cwd")? {
        Some(c) => dir.join(c),
        None => dir.to_path_buf(),
    };
    let env = match o.get("env") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) if !k.is_empty() && !k.contains(['=', '\0']) && !s.contains('\0') => {
                    Ok((k.clone(), s.to_string()))
                }
                _ => Err(Error::new(ErrorCode::InvalidJson, format!(
                    "'env.{k}': variable names must be non-empty without '='; values must be strings"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(Error::new(ErrorCode::InvalidJson, "'env' must be an object of strings")),
    };
    // A relative path with a directory part is the project's own script: resolve it from
    // the config's directory (which of the two working directories `Command` would use is
    // unspecified). A bare name is looked up in PATH.
    let program = if Path::new(&command).is_relative() && command.contains('/') {
        dir.join(&command).to_string_lossy().into_owned()
    } else {
        command
    };
    Ok(ProjectProvider {
        name,
        spec: SpawnSpec {
            program,
            args,
            cwd: Some(cwd),
            env,
        },
    })
}

fn string(o: &Map<String, Value>, key: &str) -> Result<Option<String>, Error> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::new(
            ErrorCode::InvalidJson,
            format!("'{key}' must be a string"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(json: &str) -> (Vec<ProjectProvider>, Vec<String>) {
        parse(json.as_bytes(), Path::new("/code/foo")).unwrap()
    }

    #[test]
    fn reads_the_array_form_with_every_field() {
        let (p, problems) = ok(r#"{"providers": [{"name": "ci", "command": "node",
            "args": ["ci.mjs", "--x"], "cwd": "tools", "env": {"A": "1"}}], "other": 1}"#);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(p[0].name, "ci");
        assert_eq!(p[0].spec.program, "node");
        assert_eq!(p[0].spec.args, ["ci.mjs", "--x"]);
        assert_eq!(p[0].spec.cwd.as_deref(), Some(Path::new("/code/foo/tools")));
        assert_eq!(p[0].spec.env, [("A".to_string(), "1".to_string())]);
    }

    #[test]
    fn reads_the_object_form_and_resolves_relative_commands() {
        let (p, problems) = ok(r#"{"providers": {"ci": {"command": "./bin/ci"}}}"#);
        assert!(problems.is_empty());
        assert_eq!(p[0].name, "ci");
        assert_eq!(p[0].spec.program, "/code/foo/./bin/ci");
        assert_eq!(p[0].spec.cwd.as_deref(), Some(Path::new("/code/foo")));
    }

    #[test]
    fn no_providers_is_nothing_to_do() {
        assert!(ok("{}").0.is_empty());
        assert!(ok(r#"{"providers": []}"#).0.is_empty());
    }

    #[test]
    fn bad_entries_are_skipped_with_a_reason_and_the_rest_kept() {
        let (p, problems) = ok(r#"{"providers": [
            {"name": "a", "command": "x"}, {"command": "x"}, {"name": "b"},
            {"name": "bad name", "command": "x"}, {"name": "c", "command": "x", "args": "y"},
            {"name": "a", "command": "y"}, {"name": "d", "command": "x", "env": {"K": 1}}, 3]}"#);
        assert_eq!(p.len(), 1);
        assert_eq!(problems.len(), 7, "{problems:#?}");
        assert!(problems[0].starts_with("providers[1]: 'name' is missing"));
        assert!(problems[1].contains("'command' is missing"));
        assert!(problems[4].contains("already named 'a'"));
    }

    #[test]
    fn unusable_files_say_why() {
        let dir = Path::new("/x");
        assert!(parse(b"{", dir)
            .unwrap_err()
            .message
            .contains("not valid JSON"));
        assert!(parse(b"[]", dir)
            .unwrap_err()
            .message
            .contains("JSON object"));
        assert!(parse(br#"{"providers": 1}"#, dir)
            .unwrap_err()
            .message
            .contains("'providers' must be"));
    }

    #[test]
    fn streams_come_as_a_map_or_as_the_reference_s_list() {
        let map = serde_json::json!({"streams": {"ci": {"description": "d"}}});
        let list = serde_json::json!({"streams": [{"name": "ci", "description": "d"},
            {"description": "no name"}, {"name": "ci"}, 3]});
        let (m, none) = streams_of(&map).unwrap();
        assert_eq!(m[0].0, "ci");
        assert!(none.is_empty());
        let (l, problems) = streams_of(&list).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].1["description"], "d");
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[1].contains("another entry is named 'ci'"));
        assert!(streams_of(&serde_json::json!({"streams": "ci"})).is_err());
    }

    #[test]
    fn a_github_config_resolves_paths_from_the_project() {
        assert_eq!(
            base_dir(Path::new("/code/foo/.github/tap.config.json")),
            Path::new("/code/foo")
        );
        assert_eq!(
            base_dir(Path::new("/code/foo/tap.config.json")),
            Path::new("/code/foo")
        );
    }

    #[test]
    fn the_root_file_wins_over_github_in_one_directory_and_the_nearest_over_both() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let sub = top.join("sub");
        std::fs::create_dir_all(top.join(GITHUB_DIR)).unwrap();
        std::fs::create_dir_all(sub.join(GITHUB_DIR)).unwrap();
        std::fs::write(top.join(GITHUB_DIR).join(FILE_NAME), "{}").unwrap();
        assert_eq!(
            locate(&sub).unwrap().path,
            top.join(".github/tap.config.json")
        );
        std::fs::write(top.join(FILE_NAME), "{}").unwrap();
        let both = locate(&sub).unwrap();
        assert_eq!(both.path, top.join(FILE_NAME));
        assert_eq!(both.ignored, Some(top.join(".github/tap.config.json")));
        std::fs::write(sub.join(GITHUB_DIR).join(FILE_NAME), "{}").unwrap();
        assert_eq!(
            locate(&sub).unwrap(),
            Located {
                path: sub.join(".github/tap.config.json"),
                ignored: None
            }
        );
    }

    #[test]
    fn at_most_the_limit_start() {
        let list: Vec<String> = (0..=MAX_PROJECT_PROVIDERS)
            .map(|i| format!(r#"{{"name": "p{i}", "command": "x"}}"#))
            .collect();
        let (p, problems) = ok(&format!(r#"{{"providers": [{}]}}"#, list.join(",")));
        assert_eq!(p.len(), MAX_PROJECT_PROVIDERS);
        assert_eq!(problems.len(), 1);
    }
}

//! The files `tap mcp add|remove|enable|disable|tools` edit (docs/mcp-servers.md): the
//! user's `$TAP_HOME/mcp.json` and a workspace's `tap.config.json`, both holding
//! `{"mcpServers": {NAME: ENTRY}}`.
//!
//! An edit changes one entry and nothing else: every other key of the file and of the
//! entry stays, in its order (serde_json keeps insertion order here), and the file is
//! replaced atomically (a temporary file renamed over it). A file that is not a JSON
//! object is never written.

use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use tap_gateway::mcp_servers::config::{self, KEY};

/// The project file: looked for in the current directory and its parents, like the
/// gateway looks for a session's.
pub const PROJECT_FILE_NAME: &str = "tap.config.json";

/// Shown in place of an `env` or header value.
pub const HIDDEN: &str = "(hidden)";

/// Where a server is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// `$TAP_HOME/mcp.json`: one instance shared by every session.
    User,
    /// `tap.config.json` of this workspace: one instance per session opened there.
    Project,
}

impl Scope {
    pub fn word(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Why a file cannot be read or written; `code` is the contract's error code.
#[derive(Debug)]
pub struct FileError {
    pub code: &'static str,
    pub message: String,
}

impl FileError {
    fn new(code: &'static str, message: String) -> Self {
        Self { code, message }
    }
}

/// The file a scope's servers are in (it may not exist yet).
pub fn path_of(scope: Scope, home: &Path) -> PathBuf {
    match scope {
        Scope::User => config::user_file(home),
        Scope::Project => project_path(&current_dir()),
    }
}

fn current_dir() -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|d| std::path::absolute(d).ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The nearest `tap.config.json` at or above `cwd`, else `cwd/tap.config.json`.
pub fn project_path(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .map(|dir| dir.join(PROJECT_FILE_NAME))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| cwd.join(PROJECT_FILE_NAME))
}

/// One configuration file, read.
pub struct ConfigFile {
    pub scope: Scope,
    pub path: PathBuf,
    /// The whole document; empty when the file does not exist.
    root: Map<String, Value>,
    /// The indentation its lines use (kept when it is written back).
    indent: Vec<u8>,
}

impl ConfigFile {
    /// Reads the file of `scope`. A missing (or empty) file is an empty document; one that
    /// is not a JSON object is an error naming it.
    pub fn open(scope: Scope, home: &Path) -> Result<Self, FileError> {
        Self::open_at(scope, path_of(scope, home))
    }

    pub fn open_at(scope: Scope, path: PathBuf) -> Result<Self, FileError> {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(FileError::new(
                    "INTERNAL",
                    format!("cannot read {}: {e}", path.display()),
                ))
            }
        };
        let text = text.unwrap_or_default();
        let root = if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(root)) => root,
                Ok(_) => {
                    return Err(FileError::new(
                        "INVALID_JSON",
                        format!(
                            "{} is not a JSON object; it was left unchanged",
                            path.display()
                        ),
                    ))
                }
                Err(e) => {
                    return Err(FileError::new(
                        "INVALID_JSON",
                        format!(
                            "{} is not valid JSON ({e}); it was left unchanged: fix it by hand",
                            path.display()
                        ),
                    ))
                }
            }
        };
        Ok(Self {
            scope,
            indent: indent_of(&text),
            path,
            root,
        })
    }

    /// `mcpServers`, when the file has it.
    pub fn servers(&self) -> Result<Option<&Map<String, Value>>, FileError> {
        match self.root.get(KEY) {
            None => Ok(None),
            Some(Value::Object(servers)) => Ok(Some(servers)),
            Some(_) => Err(self.not_an_object()),
        }
    }

    /// One server's entry.
    pub fn entry(&self, name: &str) -> Result<Option<&Value>, FileError> {
        Ok(self.servers()?.and_then(|s| s.get(name)))
    }

    /// `mcpServers`, added (at the end) when the file has none.
    pub fn servers_mut(&mut self) -> Result<&mut Map<String, Value>, FileError> {
        if self.root.get(KEY).is_some_and(|v| !v.is_object()) {
            return Err(self.not_an_object());
        }
        let servers = self
            .root
            .entry(KEY)
            .or_insert_with(|| Value::Object(Map::new()));
        Ok(servers.as_object_mut().expect("checked above"))
    }

    fn not_an_object(&self) -> FileError {
        FileError::new(
            "INVALID_JSON",
            format!(
                "'{KEY}' in {} is not an object keyed by server name; the file was left unchanged",
                self.path.display()
            ),
        )
    }

    /// Writes the document back: a temporary file beside it, renamed over it. The user
    /// file is made 0600 (env values and headers may be secrets); a project file keeps
    /// its permissions.
    pub fn save(&self) -> Result<(), FileError> {
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&self.indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        serde::Serialize::serialize(&self.root, &mut ser).expect("a JSON value serializes");
        bytes.push(b'\n');
        let private = self.scope == Scope::User;
        write_atomic(&self.path, &bytes, private).map_err(|e| {
            FileError::new(
                "INTERNAL",
                format!("cannot write {}: {e}", self.path.display()),
            )
        })
    }
}

/// The indentation of the first indented line (two spaces when there is none).
fn indent_of(text: &str) -> Vec<u8> {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .as_bytes()
        .to_vec()
}

/// Replaces `path` with `bytes` so a reader sees the old file or the new one, never half.
/// A symbolic link is followed: its target is replaced, the link stays.
fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        create_dir(&dir, private)?;
    }
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let previous = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        if private {
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        if private {
            set_private(&tmp)?;
        } else if let Some(permissions) = previous {
            std::fs::set_permissions(&tmp, permissions)?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn set_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn set_private(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// `TAP_HOME` when it does not exist yet: private, as the gateway makes it.
fn create_dir(dir: &Path, private: bool) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if private {
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    }
    #[cfg(not(unix))]
    let _ = private;
    builder.create(dir)
}

/// `entry` with its `env` and `headers` values replaced by [`HIDDEN`]: what `get` shows. A
/// value that is only a `${secret:NAME}` reference holds no secret and is shown.
pub fn redacted(entry: &Value) -> Value {
    use tap_gateway::mcp_servers::secrets::{reference, references};
    let mut entry = entry.clone();
    if let Some(obj) = entry.as_object_mut() {
        for key in ["env", "headers"] {
            if let Some(Value::Object(pairs)) = obj.get_mut(key) {
                for value in pairs.values_mut() {
                    let only_a_reference = value.as_str().is_some_and(
                        |v| matches!(references(v)[..], [name] if v == reference(name)),
                    );
                    if !only_a_reference {
                        *value = Value::from(HIDDEN);
                    }
                }
            }
        }
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_of_env_and_headers_are_hidden_and_the_rest_is_shown() {
        let entry =
            json!({"command": "x", "env": {"TOKEN": "s3cret"}, "headers": {"A": "b"}, "other": 1});
        let shown = redacted(&entry).to_string();
        assert!(
            !shown.contains("s3cret") && !shown.contains("\"b\""),
            "{shown}"
        );
        assert!(
            shown.contains("TOKEN") && shown.contains("\"other\":1"),
            "{shown}"
        );
        let entry = json!({"env": {"A": "${secret:x.A}", "B": "pre ${secret:x.B}"}});
        assert_eq!(
            redacted(&entry),
            json!({"env": {"A": "${secret:x.A}", "B": HIDDEN}})
        );
    }

    #[test]
    fn the_indentation_of_the_file_is_kept() {
        assert_eq!(indent_of("{\n    \"a\": 1\n}"), b"    ");
        assert_eq!(indent_of("{\n\t\"a\": 1\n}"), b"\t");
        assert_eq!(indent_of("{\"a\": 1}"), b"  ");
    }
}

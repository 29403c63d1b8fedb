//! Support for the `tap connect` tests: a throwaway HOME (with XDG_CONFIG_HOME, CODEX_HOME,
//! COPILOT_HOME and TAP_HOME under it, and an empty PATH so no client on this machine counts
//! as installed), and each client's file read in that client's own format.

use crate::common::{run, tap_bin, CliOut};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::Command;

pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        Self { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `path` (relative to HOME) of a client's file.
    pub fn file(&self, rel: &str) -> PathBuf {
        self.home().join(rel)
    }

    /// Writes `text` at `rel` under HOME, creating its directory.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.file(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `tap ARGS` run from `bin` (the tap under test by default) in this HOME.
    pub async fn tap_at(&self, bin: &Path, args: &[&str]) -> CliOut {
        let home = self.home();
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("CODEX_HOME", home.join(".codex"))
            .env("COPILOT_HOME", home.join(".copilot"))
            .env("TAP_HOME", self.dir.path().join("tap-home"))
            .env("PATH", self.dir.path().join("bin"))
            .current_dir(self.dir.path())
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        run(cmd).await
    }

    pub async fn tap(&self, args: &[&str]) -> CliOut {
        self.tap_at(Path::new(tap_bin()), args).await
    }

    /// The backups of `file` beside it.
    pub fn backups(&self, file: &Path) -> Vec<PathBuf> {
        let name = file.file_name().unwrap().to_str().unwrap();
        let prefix = format!("{name}.tap-backup-");
        let mut found: Vec<PathBuf> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .collect();
        found.sort();
        found
    }

    /// `tap connect --json`'s line for `client`.
    pub async fn state_of(&self, client: &str) -> Value {
        let out = self.tap(&["connect", "--json"]).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        out.json()
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["client"] == client)
            .cloned()
            .unwrap_or_else(|| panic!("{client} not listed: {}", out.stdout))
    }
}

/// How a client's file is read by that client.
#[derive(Clone, Copy)]
pub enum Syntax {
    /// Strict JSON (serde_json refuses comments and trailing commas).
    Json,
    /// JSON with comments and trailing commas (VS Code, Zed).
    Jsonc,
    Toml,
}

/// The file's content as data, parsed the way its client parses it.
pub fn parse(syntax: Syntax, text: &str) -> Value {
    match syntax {
        Syntax::Json => {
            serde_json::from_str(text).unwrap_or_else(|e| panic!("not strict JSON ({e}):\n{text}"))
        }
        Syntax::Jsonc => {
            let options = jsonc_parser::ParseOptions {
                allow_comments: true,
                allow_trailing_commas: true,
                allow_loose_object_property_names: false,
                allow_missing_commas: false,
                ..Default::default()
            };
            jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &options)
                .unwrap_or_else(|e| panic!("not JSONC ({e}):\n{text}"))
                .expect("a value")
        }
        Syntax::Toml => {
            let t: toml::Table =
                toml::from_str(text).unwrap_or_else(|e| panic!("not TOML ({e}):\n{text}"));
            serde_json::to_value(t).unwrap()
        }
    }
}

/// The tap under test, as `tap connect` writes its path.
pub fn tap_path() -> String {
    std::fs::canonicalize(tap_bin())
        .unwrap()
        .display()
        .to_string()
}

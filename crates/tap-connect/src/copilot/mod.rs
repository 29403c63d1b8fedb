//! The GitHub Copilot CLI, connected by tap's extension rather than an MCP entry: every
//! Copilot session becomes a gateway session (docs/copilot.md). `tap install copilot` /
//! `tap connect copilot` and the gateway's `clients.*` both go through here, and say what
//! happened in their own words.
//!
//! Files, all under `<COPILOT_HOME>/extensions/tap/` (the directory whose `.provider-token` the
//! spec's providers read, so that path keeps working):
//! - `extension.mjs`: the extension, its first line [`MARKER`] + the tap version. A file without
//!   the marker is someone else's and is never overwritten (`force` keeps a backup). The
//!   profile is written into it ([`PROFILE_LINE`]): one file, replaced atomically, so the
//!   profile and the code that sends it never disagree, and uninstall leaves nothing of it
//!   behind.
//! - `.tap-install.json`: what install changed that uninstall must undo (the feature flag),
//!   and the `tap` the extension starts a gateway with when none runs and none is on `PATH`.
//! - `.state/`: the extension's hand-over files across its own reloads.
//!
//! And `<COPILOT_HOME>/settings.json`, whose extensions feature flag ([`settings`]) must be on;
//! and the agent skills with the session-start instructions, as the CLI's own ([`skills`]).

mod install;
pub mod settings;
pub mod skills;

pub use install::{
    disable_flag, enable_flag, plan, remove_extension, running_tap, tap_beside, write_extension,
    Error, ExtensionWrite, FileChange, FlagOff, FlagOn, Plan, Removed,
};

use crate::clients::Dirs;
use crate::status::{Report, State};
use serde_json::json;
use std::path::{Path, PathBuf};

/// `(name, text)` of one module of the extension.
macro_rules! module {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!("../../../../extensions/copilot/", $name, ".mjs")),
        )
    };
}

/// The extension's modules (`extensions/copilot/`), embedded so the installed file matches
/// this tap: each after the modules it imports, the entry (`extension.mjs`, whose first line
/// is [`MARKER`]) last. [`source`] joins them into the one installed file.
const MODULES: [(&str, &str); 14] = [
    module!("limits"),
    module!("environment"),
    module!("gateway_discovery"),
    module!("gateway_start"),
    module!("reload_state"),
    module!("tool_sets"),
    module!("tool_results"),
    module!("asks"),
    module!("agent_report"),
    module!("deliveries"),
    module!("hooks"),
    module!("host"),
    module!("session_events"),
    module!("extension"),
];
/// The first line of every extension file tap writes starts with this.
pub const MARKER: &str = "// tap-gateway copilot extension";
/// The directory name under `extensions/`: the gateway's token file lives there too.
pub const EXTENSION_DIR: &str = "tap";
/// As `tap connect` spells the client; also the `hostName` its sessions come from.
pub const WORD: &str = "copilot";
/// For people.
pub const TITLE: &str = "GitHub Copilot CLI";
/// The tap version written into the marker line (tap's crates share the workspace version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
const RECORD: &str = ".tap-install.json";
const STATE_DIR: &str = ".state";

/// The source's line that holds the installed profile; install writes the name (a JSON
/// string) in place of `null`.
const PROFILE_LINE: &str = "const INSTALLED_PROFILE = null;";

/// The modules joined into one ES module: the entry's leading comment (the marker line
/// first), every other module's `import` of a package or `node:` builtin once, then each
/// module's code without its imports of sibling modules (`from "./…"`) and with `export `
/// dropped from the start of its lines. One file, replaced atomically: a CLI starting during
/// an upgrade never loads one version's modules with another's. The modules keep to what this
/// needs: single-line imports, top-level names unique across modules (a unit test checks).
fn source() -> String {
    let (entry, rest) = MODULES.split_last().expect("modules");
    let header: Vec<&str> = entry
        .1
        .lines()
        .take_while(|l| l.starts_with("//"))
        .collect();
    let mut imports: Vec<&str> = Vec::new();
    let mut code = String::new();
    for (i, (_, text)) in rest.iter().chain([entry]).enumerate() {
        let skip = if i == rest.len() { header.len() } else { 0 };
        for line in text.lines().skip(skip) {
            if line.starts_with("import ") {
                if !line.contains(" from \"./") && !imports.contains(&line) {
                    imports.push(line);
                }
                continue;
            }
            code.push_str(line.strip_prefix("export ").unwrap_or(line));
            code.push('\n');
        }
        code.push('\n');
    }
    format!(
        "{}\n\n{}\n\n{}",
        header.join("\n"),
        imports.join("\n"),
        code.trim_end()
    ) + "\n"
}

/// The installed text: the source with this tap's version in its marker line and `profile`
/// in [`PROFILE_LINE`].
pub fn extension_text(profile: Option<&str>) -> String {
    let text = source().replacen("__TAP_VERSION__", VERSION, 1);
    match profile {
        None => text,
        Some(p) => {
            let line = format!("const INSTALLED_PROFILE = {};", json!(p));
            text.replacen(PROFILE_LINE, &line, 1)
        }
    }
}

/// The profile an installed extension's text holds (`None`: none, or not tap's line).
fn profile_in(text: &str) -> Option<String> {
    let head = PROFILE_LINE.trim_end_matches("null;");
    let line = text.lines().find(|l| l.starts_with(head))?;
    let value = line[head.len()..].trim_end().strip_suffix(';')?;
    serde_json::from_str::<Option<String>>(value).ok()?
}

/// The profile of the tap extension installed at `path`: what `tap connect` shows.
pub fn installed_profile(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .filter(|t| t.starts_with(MARKER))
        .and_then(|t| profile_in(&t))
}

/// Paths of an installation under one `COPILOT_HOME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub home: PathBuf,
    pub dir: PathBuf,
    pub file: PathBuf,
    pub settings: PathBuf,
    pub record: PathBuf,
    pub state: PathBuf,
    /// The CLI's personal skills directory, where [`skills`] go.
    pub skills: PathBuf,
    /// tap's personal instructions file ([`skills`]).
    pub instructions: PathBuf,
}

impl Layout {
    pub fn new(copilot_home: PathBuf) -> Self {
        let dir = copilot_home.join("extensions").join(EXTENSION_DIR);
        Self {
            file: dir.join("extension.mjs"),
            record: dir.join(RECORD),
            state: dir.join(STATE_DIR),
            settings: copilot_home.join("settings.json"),
            skills: copilot_home.join("skills"),
            instructions: copilot_home
                .join("instructions")
                .join("tap.instructions.md"),
            dir,
            home: copilot_home,
        }
    }
}

/// Whose file is at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// tap's: `current` when it is what this tap installs (whatever profile it holds: that
    /// is the user's choice, not drift).
    Tap { version: String, current: bool },
    /// Someone else's (an earlier Copilot extension?): never overwritten without `force`.
    Other,
}

/// Whose the text of an extension file is.
fn owner_of(text: &str) -> Owner {
    let first = text.lines().next().unwrap_or("");
    match first.strip_prefix(MARKER) {
        Some(rest) => Owner::Tap {
            version: rest.trim().to_string(),
            current: text == extension_text(profile_in(text).as_deref()),
        },
        None => Owner::Other,
    }
}

/// Whose file is at `path`: `None` when there is none.
pub fn owner(path: &Path) -> Option<Owner> {
    std::fs::read_to_string(path).ok().map(|t| owner_of(&t))
}

/// Its extension or home directory exists, or `copilot` is on `PATH`.
pub fn installed(d: &Dirs) -> bool {
    let l = Layout::new(d.copilot.clone());
    l.file.exists() || l.home.is_dir() || crate::on_path("copilot").is_some()
}

/// Copilot's extensions feature is on in its settings text (`experimental` turns on every
/// experimental feature, extensions included).
fn extensions_on(text: &str) -> bool {
    matches!(
        settings::flag(text),
        Ok(settings::Flag::On | settings::Flag::OnByExperimental)
    )
}

/// Where the Copilot CLI stands: connected when this tap's extension is installed and
/// Copilot's extensions feature is on; drifted when the extension is an older tap's or the
/// feature is off (connecting repairs both); "another's file" is installed with a detail.
pub fn report(d: &Dirs) -> Report {
    let l = Layout::new(d.copilot.clone());
    let mut r = Report {
        client: WORD,
        name: TITLE,
        state: State::Installed,
        file: l.file.clone(),
        profile: None,
        detail: None,
    };
    match owner(&l.file) {
        None => {
            if !installed(d) {
                r.state = State::NotInstalled;
            }
        }
        Some(Owner::Other) => {
            r.detail = Some("an extension tap did not write is in the way".into());
        }
        Some(Owner::Tap { version, current }) => {
            r.profile = installed_profile(&l.file);
            let text = std::fs::read_to_string(&l.settings).unwrap_or_default();
            if !current {
                r.state = State::Drifted;
                r.detail = Some(format!("its extension is tap {version}'s"));
            } else if !extensions_on(&text) {
                r.state = State::Drifted;
                r.detail = Some(format!(
                    "Copilot's extensions feature is off in {}",
                    l.settings.display()
                ));
            } else if let Some(item) = skills::items(&l).into_iter().find(|i| {
                matches!(
                    skills::state(i),
                    Ok(skills::State::Missing | skills::State::Stale)
                )
            }) {
                // A user's own file at a skill's path is their choice, not drift.
                r.state = State::Drifted;
                r.detail = Some(format!(
                    "{} is missing or from another tap (connecting installs it)",
                    item.path.display()
                ));
            } else {
                r.state = State::Connected;
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_line_is_written_and_read_back() {
        assert_eq!(
            source().matches(PROFILE_LINE).count(),
            1,
            "one line to fill"
        );
        let plain = extension_text(None);
        assert_eq!(profile_in(&plain), None);
        let web = extension_text(Some("web-1.x"));
        assert!(web.contains("const INSTALLED_PROFILE = \"web-1.x\";"));
        assert_eq!(profile_in(&web).as_deref(), Some("web-1.x"));
        assert_eq!(
            web.replace("\"web-1.x\"", "null"),
            plain,
            "nothing else differs"
        );
        assert_eq!(
            owner_of(&web),
            Owner::Tap {
                version: VERSION.into(),
                current: true
            }
        );
        assert_eq!(owner_of("export default {}\n"), Owner::Other);
    }

    #[test]
    fn the_modules_join_into_one_module() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../extensions/copilot");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".mjs").map(String::from))
            .collect();
        files.sort();
        let mut listed: Vec<String> = MODULES.iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(
            files, listed,
            "every module of extensions/copilot/ is joined"
        );
        let text = source();
        assert!(text.starts_with(MARKER), "the marker line first");
        let mut names = std::collections::HashSet::new();
        for line in text.lines() {
            assert!(!line.starts_with("export "), "{line}");
            assert!(!line.contains("from \"./"), "{line}");
            let decl = ["const ", "let ", "function ", "async function ", "class "]
                .iter()
                .find_map(|k| line.strip_prefix(k));
            if let Some(rest) = decl {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                assert!(names.insert(name.clone()), "{name} declared twice");
            }
        }
    }
}

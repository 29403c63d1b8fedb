//! `tap install copilot` / `tap uninstall copilot`: the GitHub Copilot CLI extension that makes
//! each Copilot session a gateway session (see `docs/copilot.md`).
//!
//! Files, all under `<COPILOT_HOME>/extensions/tap/` (the directory whose `.provider-token` the
//! spec's providers read, so that path keeps working):
//! - `extension.mjs`: the extension, its first line [`MARKER`] + the tap version. A file without
//!   the marker is someone else's and is never overwritten (`--force` keeps a backup). The
//!   profile `--profile` names is written into it ([`PROFILE_LINE`]): one file, replaced
//!   atomically, so the profile and the code that sends it never disagree, and uninstall
//!   leaves nothing of it behind.
//! - `.tap-install.json`: what install changed that uninstall must undo (the feature flag).
//! - `.state/`: the extension's hand-over files across its own reloads.

mod check;
mod settings;

use crate::output::fail;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The extension, embedded so the installed file matches this `tap`.
const SOURCE: &str = include_str!("../../../../extensions/copilot/extension.mjs");
/// The first line of every extension file Tap writes starts with this.
pub const MARKER: &str = "// tap-gateway copilot extension";
/// The directory name under `extensions/`: the gateway's token file lives there too.
pub const EXTENSION_DIR: &str = "tap";
const RECORD: &str = ".tap-install.json";
const STATE_DIR: &str = ".state";

/// The source's line that holds the installed profile; install writes the name (a JSON
/// string) in place of `null`.
const PROFILE_LINE: &str = "const INSTALLED_PROFILE = null;";

/// The installed text: the source with this tap's version in its marker line and `profile`
/// in [`PROFILE_LINE`].
fn extension_text(profile: Option<&str>) -> String {
    let text = SOURCE.replacen("__TAP_VERSION__", env!("CARGO_PKG_VERSION"), 1);
    match profile {
        None => text,
        Some(p) => {
            let line = format!("const INSTALLED_PROFILE = {};", json!(p));
            text.replacen(PROFILE_LINE, &line, 1)
        }
    }
}

/// The profile an installed extension's text holds (`None`: none, or not Tap's line).
fn profile_in(text: &str) -> Option<String> {
    let head = PROFILE_LINE.trim_end_matches("null;");
    let line = text.lines().find(|l| l.starts_with(head))?;
    let value = line[head.len()..].trim_end().strip_suffix(';')?;
    serde_json::from_str::<Option<String>>(value).ok()?
}

/// The profile of the Tap extension installed at `path`: what `tap connect` shows.
pub fn installed_profile(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .filter(|t| t.starts_with(MARKER))
        .and_then(|t| profile_in(&t))
}

/// Paths of an installation.
pub struct Layout {
    pub home: PathBuf,
    pub dir: PathBuf,
    pub file: PathBuf,
    pub settings: PathBuf,
    record: PathBuf,
}

impl Layout {
    pub fn new(copilot_home: Option<PathBuf>) -> Result<Self, ExitCode> {
        let home = copilot_home
            .or_else(tap_client::default_copilot_home)
            .ok_or_else(|| fail("INVALID_ARGS", "no home directory; pass --copilot-home DIR"))?;
        let dir = home.join("extensions").join(EXTENSION_DIR);
        Ok(Self {
            file: dir.join("extension.mjs"),
            record: dir.join(RECORD),
            settings: home.join("settings.json"),
            dir,
            home,
        })
    }
}

/// Whose file is at `path`: `None` when there is none.
pub enum Owner {
    Tap { version: String, current: bool },
    Other,
}

pub fn owner(path: &Path) -> Option<Owner> {
    let text = std::fs::read_to_string(path).ok()?;
    let first = text.lines().next().unwrap_or("");
    Some(match first.strip_prefix(MARKER) {
        Some(rest) => Owner::Tap {
            version: rest.trim().to_string(),
            // Current whatever profile it holds: that is the user's choice, not drift.
            current: text == extension_text(profile_in(&text).as_deref()),
        },
        None => Owner::Other,
    })
}

fn io_fail(what: &str, path: &Path, e: std::io::Error) -> ExitCode {
    fail("INTERNAL", format!("cannot {what} {}: {e}", path.display()))
}

/// `tap install copilot [--copilot-home DIR] [--force] [--profile NAME]`: without a profile,
/// one an earlier install wrote is removed (as `tap connect CLIENT` without `--profile`).
pub fn install(copilot_home: Option<PathBuf>, force: bool, profile: Option<&str>) -> ExitCode {
    let l = match Layout::new(copilot_home) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let wanted = extension_text(profile);
    let installed = std::fs::read_to_string(&l.file).ok();
    match owner(&l.file) {
        Some(Owner::Tap { .. }) if installed.as_deref() == Some(wanted.as_str()) => {
            println!(
                "The Tap extension is already installed at {}{}.",
                l.file.display(),
                profile_words(profile)
            );
        }
        Some(Owner::Other) if !force => {
            return fail(
                "CONFLICT",
                format!(
                    "{} exists and was not written by tap (an earlier Copilot extension?); it was left alone. Remove it, or run `tap install copilot --force` to replace it (a backup is kept)",
                    l.file.display()
                ),
            );
        }
        found => {
            if let Err(e) = std::fs::create_dir_all(&l.dir) {
                return io_fail("create", &l.dir, e);
            }
            if let Some(Owner::Other) = found {
                let backup = backup_path(&l.file);
                if let Err(e) = std::fs::rename(&l.file, &backup) {
                    return io_fail("back up", &l.file, e);
                }
                println!(
                    "Moved the existing {} to {}.",
                    l.file.display(),
                    backup.display()
                );
            }
            if let Err(e) = write_atomic(&l.file, &wanted) {
                return io_fail("write", &l.file, e);
            }
            let verb = match found {
                Some(Owner::Tap { .. }) => "Updated",
                _ => "Installed",
            };
            println!(
                "{verb} the Tap extension at {}{}.",
                l.file.display(),
                profile_words(profile)
            );
        }
    }
    enable_flag(&l)
}

/// How install messages name the profile.
fn profile_words(profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!(" (every Copilot session uses profile {p})"),
        None => " (no profile: Copilot sessions see every tool)".into(),
    }
}

/// Turns the feature flag on unless it is on, and records that it did.
fn enable_flag(l: &Layout) -> ExitCode {
    let text = match std::fs::read_to_string(&l.settings) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return io_fail("read", &l.settings, e),
    };
    let hand_edit = "add \"enabledFeatureFlags\": {\"EXTENSIONS\": true} to it by hand";
    match settings::flag(&text) {
        Err(e) => {
            return fail(
                "INVALID_JSON",
                format!(
                    "the extension is installed, but {} could not be changed ({e}): {hand_edit}, or Copilot ignores extensions",
                    l.settings.display()
                ),
            )
        }
        Ok(settings::Flag::On) | Ok(settings::Flag::OnByExperimental) => {
            println!("Copilot extensions are already enabled in {}.", l.settings.display());
        }
        Ok(settings::Flag::Off) => {
            let new = settings::set_flag(&text, true).expect("checked above");
            if let Err(e) = write_atomic(&l.settings, &new) {
                return io_fail("write", &l.settings, e);
            }
            let record = json!({"enabledExtensionsFlag": true, "version": env!("CARGO_PKG_VERSION")});
            if let Err(e) = write_atomic(&l.record, &format!("{record}\n")) {
                return io_fail("write", &l.record, e);
            }
            println!(
                "Turned on Copilot's experimental extensions feature (enabledFeatureFlags.EXTENSIONS in {}); `tap uninstall copilot` turns it off again.",
                l.settings.display()
            );
        }
    }
    println!("New Copilot CLI sessions connect to the Tap gateway; check with `tap install copilot --check`.");
    ExitCode::SUCCESS
}

/// `tap uninstall copilot [--copilot-home DIR]`.
pub fn uninstall(copilot_home: Option<PathBuf>) -> ExitCode {
    let l = match Layout::new(copilot_home) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match owner(&l.file) {
        None => println!(
            "The Tap extension is not installed at {}.",
            l.file.display()
        ),
        Some(Owner::Other) => {
            return fail(
                "CONFLICT",
                format!(
                    "{} was not written by tap; it was left alone",
                    l.file.display()
                ),
            )
        }
        Some(Owner::Tap { .. }) => {
            if let Err(e) = std::fs::remove_file(&l.file) {
                return io_fail("remove", &l.file, e);
            }
            let _ = std::fs::remove_dir_all(l.dir.join(STATE_DIR));
            println!("Removed the Tap extension from {}.", l.file.display());
        }
    }
    if let Some(code) = disable_flag(&l) {
        return code;
    }
    // The directory goes when empty; the gateway's `.provider-token` keeps it otherwise.
    let _ = std::fs::remove_dir(&l.dir);
    ExitCode::SUCCESS
}

/// Turns the flag off again when the record says install turned it on.
fn disable_flag(l: &Layout) -> Option<ExitCode> {
    let record = std::fs::read_to_string(&l.record).ok()?;
    let ours = serde_json::from_str::<serde_json::Value>(&record)
        .is_ok_and(|r| r["enabledExtensionsFlag"] == true);
    if ours {
        let text = std::fs::read_to_string(&l.settings).unwrap_or_default();
        if let Ok(settings::Flag::On) = settings::flag(&text) {
            match settings::set_flag(&text, false) {
                Ok(new) => {
                    if let Err(e) = write_atomic(&l.settings, &new) {
                        return Some(io_fail("write", &l.settings, e));
                    }
                    println!(
                        "Turned Copilot's extensions feature off again in {} (tap install had turned it on).",
                        l.settings.display()
                    );
                }
                Err(e) => println!("Left {} as it is ({e}).", l.settings.display()),
            }
        }
    }
    if let Err(e) = std::fs::remove_file(&l.record) {
        return Some(io_fail("remove", &l.record, e));
    }
    None
}

/// `tap install copilot --check`.
pub async fn check(home: &Path, copilot_home: Option<PathBuf>) -> ExitCode {
    match Layout::new(copilot_home) {
        Ok(l) => check::run(home, &l).await,
        Err(code) => code,
    }
}

/// `extension.mjs.bak-<seconds>`, or with a counter when that exists too.
fn backup_path(file: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::connect::write::first_free(format!("{}.bak-{secs}", file.display()))
}

/// Temporary file + rename: Copilot never loads a half-written extension or settings file.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_line_is_written_and_read_back() {
        assert_eq!(SOURCE.matches(PROFILE_LINE).count(), 1, "one line to fill");
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
    }
}

//! `tap install copilot` / `tap uninstall copilot`: the GitHub Copilot CLI extension that makes
//! each Copilot session a gateway session (see `docs/copilot.md`). The files and their edits
//! are `tap_connect::copilot`'s (the gateway's `clients.*` use it too); here are the
//! commands' words, and `--check` ([`check`]).

mod check;

use crate::output::fail;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tap_connect::copilot::{self as files, Error};
pub use tap_connect::copilot::{
    installed_profile, owner, settings, ExtensionWrite, FlagOff, FlagOn, Layout, Owner, Removed,
    EXTENSION_DIR, MARKER,
};

/// The layout under `--copilot-home DIR`, else `$COPILOT_HOME`, else `~/.copilot`.
pub fn layout(copilot_home: Option<PathBuf>) -> Result<Layout, ExitCode> {
    copilot_home
        .or_else(tap_client::default_copilot_home)
        .map(Layout::new)
        .ok_or_else(|| fail("INVALID_ARGS", "no home directory; pass --copilot-home DIR"))
}

fn failed(e: Error) -> ExitCode {
    fail(e.code(), e.to_string())
}

/// `tap install copilot [--copilot-home DIR] [--force] [--profile NAME]`: without a profile,
/// one an earlier install wrote is removed (as `tap connect CLIENT` without `--profile`).
pub fn install(copilot_home: Option<PathBuf>, force: bool, profile: Option<&str>) -> ExitCode {
    let l = match layout(copilot_home) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match files::write_extension(&l, profile, force) {
        Err(e) => return failed(e),
        Ok(ExtensionWrite::Already) => println!(
            "The Tap extension is already installed at {}{}.",
            l.file.display(),
            profile_words(profile)
        ),
        Ok(ExtensionWrite::Written { updated, moved }) => {
            if let Some(backup) = moved {
                println!(
                    "Moved the existing {} to {}.",
                    l.file.display(),
                    backup.display()
                );
            }
            let verb = if updated { "Updated" } else { "Installed" };
            println!(
                "{verb} the Tap extension at {}{}.",
                l.file.display(),
                profile_words(profile)
            );
        }
    }
    match files::enable_flag(&l) {
        Err(e) => return failed(e),
        Ok(FlagOn::Already) => {
            println!("Copilot extensions are already enabled in {}.", l.settings.display());
        }
        Ok(FlagOn::TurnedOn) => println!(
            "Turned on Copilot's experimental extensions feature (enabledFeatureFlags.EXTENSIONS in {}); `tap uninstall copilot` turns it off again.",
            l.settings.display()
        ),
    }
    println!("New Copilot CLI sessions connect to the Tap gateway; check with `tap install copilot --check`.");
    ExitCode::SUCCESS
}

/// How install messages name the profile.
fn profile_words(profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!(" (every Copilot session uses profile {p})"),
        None => " (no profile: Copilot sessions see every tool)".into(),
    }
}

/// `tap uninstall copilot [--copilot-home DIR]`.
pub fn uninstall(copilot_home: Option<PathBuf>) -> ExitCode {
    let l = match layout(copilot_home) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match files::remove_extension(&l) {
        Err(e) => return failed(e),
        Ok(Removed::NotInstalled) => println!(
            "The Tap extension is not installed at {}.",
            l.file.display()
        ),
        Ok(Removed::Removed) => {
            println!("Removed the Tap extension from {}.", l.file.display())
        }
    }
    match files::disable_flag(&l) {
        Err(e) => return failed(e),
        Ok(FlagOff::Untouched) => {}
        Ok(FlagOff::TurnedOff) => println!(
            "Turned Copilot's extensions feature off again in {} (tap install had turned it on).",
            l.settings.display()
        ),
        Ok(FlagOff::LeftAsIs(e)) => println!("Left {} as it is ({e}).", l.settings.display()),
    }
    ExitCode::SUCCESS
}

/// `tap install copilot --check`.
pub async fn check(home: &Path, copilot_home: Option<PathBuf>) -> ExitCode {
    match layout(copilot_home) {
        Ok(l) => check::run(home, &l).await,
        Err(code) => code,
    }
}

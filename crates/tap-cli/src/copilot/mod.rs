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
    installed_profile, owner, settings, skills, ExtensionWrite, FlagOff, FlagOn, Layout, Owner,
    Removed, EXTENSION_DIR, MARKER,
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
    // A user's own file where a skill goes refuses the install before anything is written.
    if !force {
        if let Err(e) = files::skills::changes(&l, true) {
            return failed(e);
        }
    }
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
    match files::enable_flag(&l, files::running_tap().as_deref()) {
        Err(e) => return failed(e),
        Ok(FlagOn::Already) => {
            println!("Copilot extensions are already enabled in {}.", l.settings.display());
        }
        Ok(FlagOn::TurnedOn) => println!(
            "Turned on Copilot's experimental extensions feature (enabledFeatureFlags.EXTENSIONS in {}); `tap uninstall copilot` turns it off again.",
            l.settings.display()
        ),
    }
    match files::skills::install(&l, force) {
        Err(e) => return failed(e),
        Ok(done) => print_skills_written(&done),
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
    match files::skills::remove(&l) {
        Err(e) => return failed(e),
        Ok(done) => {
            for (item, r) in done {
                match r {
                    skills::Removal::NotThere => {}
                    skills::Removal::Removed => {
                        println!("Removed {} ({}).", item.path.display(), what(item.name))
                    }
                    skills::Removal::LeftAlone => {
                        println!("Left {} alone: tap did not write it.", item.path.display())
                    }
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// How messages name an installed file: a skill, or the instructions.
fn what(name: &str) -> String {
    match name {
        "instructions" => "Tap's session-start instructions".into(),
        skill => format!("the {skill} skill"),
    }
}

/// One line for the skills and instructions together when nothing needed writing, else one
/// per file written.
fn print_skills_written(done: &[(skills::Item, skills::Written)]) {
    if done.iter().all(|(_, w)| *w == skills::Written::Already) {
        println!("Tap's skills and session-start instructions are already installed.");
        return;
    }
    for (item, w) in done {
        if let skills::Written::Written { updated, moved } = w {
            if let Some(backup) = moved {
                println!(
                    "Moved the existing {} to {}.",
                    item.path.display(),
                    backup.display()
                );
            }
            let verb = if *updated { "Updated" } else { "Installed" };
            println!("{verb} {} at {}.", what(item.name), item.path.display());
        }
    }
}

/// `tap install copilot --check`.
pub async fn check(home: &Path, copilot_home: Option<PathBuf>) -> ExitCode {
    match layout(copilot_home) {
        Ok(l) => check::run(home, &l).await,
        Err(code) => code,
    }
}

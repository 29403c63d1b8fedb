//! `tap connect copilot` / `tap disconnect copilot`: the Copilot CLI is connected by the
//! extension `tap install copilot` writes (every Copilot session becomes a gateway session,
//! docs/copilot.md), not by an MCP entry. These are that command under the common name;
//! `tap install copilot` / `tap uninstall copilot` stay.

use crate::copilot::{self, Owner};
use std::process::ExitCode;

/// The profile goes into the extension file (`tap install copilot --profile`), whose every
/// session registers with it.
pub fn connect(profile: Option<&str>, dry_run: bool) -> ExitCode {
    if !dry_run {
        return copilot::install(None, false, profile);
    }
    let l = match copilot::layout(None) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let same_profile = copilot::installed_profile(&l.file).as_deref() == profile;
    let what = match copilot::owner(&l.file) {
        Some(Owner::Tap { current: true, .. }) if same_profile => {
            "is already installed; nothing to change"
        }
        Some(Owner::Tap { current: true, .. }) => "would get the new profile",
        Some(Owner::Tap { .. }) => "would be updated to this tap's",
        Some(Owner::Other) => "would not be replaced: a file tap did not write is there (`tap install copilot --force` replaces it, keeping a backup)",
        None => "would be installed",
    };
    println!("The Tap extension at {} {what}.", l.file.display());
    println!(
        "Copilot's extensions feature would be turned on in {} unless it is on.",
        l.settings.display()
    );
    skills_dry_run(&l, true);
    eprintln!("tap: dry run: nothing was changed");
    ExitCode::SUCCESS
}

pub fn disconnect(dry_run: bool) -> ExitCode {
    if !dry_run {
        return copilot::uninstall(None);
    }
    let l = match copilot::layout(None) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let what = match copilot::owner(&l.file) {
        Some(Owner::Tap { .. }) => "would be removed",
        Some(Owner::Other) => "was not written by tap and would be left alone",
        None => "is not installed; nothing to remove",
    };
    println!("The Tap extension at {} {what}.", l.file.display());
    skills_dry_run(&l, false);
    eprintln!("tap: dry run: nothing was changed");
    ExitCode::SUCCESS
}

/// One line per skill or instructions file that connecting (`true`) or disconnecting would
/// change, or leave because tap did not write it.
fn skills_dry_run(l: &copilot::Layout, connect: bool) {
    use copilot::skills::State;
    for item in copilot::skills::items(l) {
        let what = match (copilot::skills::state(&item), connect) {
            (Ok(State::Current), true) => continue,
            (Ok(State::Missing), false) => continue,
            (Ok(State::Missing), true) => "would be installed",
            (Ok(State::Stale), true) => "would be updated to this tap's",
            (Ok(State::Current | State::Stale), false) => "would be removed",
            (Ok(State::Other), true) => "would not be replaced: tap did not write it (`tap install copilot --force` replaces it, keeping a backup)",
            (Ok(State::Other), false) => "was not written by tap and would be left alone",
            (Err(e), _) => {
                println!("{e}");
                continue;
            }
        };
        println!("{} {what}.", item.path.display());
    }
}

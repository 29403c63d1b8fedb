//! `tap connect CLIENT`, `tap disconnect CLIENT`, `tap connect` (the list) and `tap doctor`:
//! the `tap` entry that makes an MCP client launch `tap mcp --session <client>`, written in
//! the client's own file and format (docs/clients.md).
//!
//! The files, their edits and where a client stands are `tap_connect`'s (the gateway's
//! `clients.*` control methods use it too); here are the commands' words, and:
//!
//! - [`clients`]: `CLIENT`, the Copilot CLI included;
//! - [`status`]: the list, with the Copilot CLI's state;
//! - [`copilot_client`]: the Copilot CLI, whose "entry" is `tap install copilot`'s extension;
//! - [`doctor`]: `tap doctor`.

mod clients;
mod copilot_client;
pub mod doctor;
mod status;

pub use clients::Client;

use crate::output::{fail, print_json, print_table};
use std::path::PathBuf;
use std::process::ExitCode;
use tap_connect::{entry, Dirs, Removal, State};

/// A profile name: 1–64 of letters, digits, `_`, `-`, `.` (clap's value parser).
pub fn parse_profile(s: &str) -> Result<String, String> {
    entry::parse_profile(s)
}

fn dirs() -> Result<Dirs, ExitCode> {
    Dirs::from_env().ok_or_else(|| fail("INTERNAL", "no home directory (set HOME)"))
}

/// `$TAP_HOME`, where what `tap connect` did is recorded.
fn tap_home() -> PathBuf {
    tap_client::default_home()
}

/// The absolute path of the running `tap` (symlinks resolved), as clients must launch it.
pub fn tap_path() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the running tap: {e}"))?;
    entry::program_path(&exe)
}

fn failed(e: tap_connect::Error) -> ExitCode {
    fail(e.code(), e.to_string())
}

fn note(note: Option<String>) {
    if let Some(n) = note {
        eprintln!("tap: note: {n}");
    }
}

/// After a change was written: its note, and the words naming the backup, if one was kept.
fn applied(n: Option<String>, backup: Option<PathBuf>) -> String {
    note(n);
    backup
        .map(|b| format!(" (the previous file is kept as {})", b.display()))
        .unwrap_or_default()
}

/// `tap connect CLIENT [--profile NAME] [--dry-run]`.
pub fn connect(client: Client, profile: Option<&str>, dry_run: bool) -> ExitCode {
    let Some(client) = client.with_file() else {
        return copilot_client::connect(profile, dry_run);
    };
    let d = match dirs() {
        Ok(d) => d,
        Err(code) => return code,
    };
    let tap = match tap_path() {
        Ok(t) => t,
        Err(e) => return fail("INTERNAL", e),
    };
    let plan = match tap_connect::plan_connect(client, &d, &tap, profile) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let name = client.title();
    let shown = plan.shown.clone();
    if plan.unchanged() {
        if dry_run {
            eprintln!("tap: dry run: nothing to change in {}", shown.display());
        } else {
            match plan.apply(&tap_home()) {
                Ok(done) => note(done.note),
                Err(e) => return failed(e),
            }
            println!(
                "{name} is already connected: {} has the tap entry.",
                shown.display()
            );
        }
        return ExitCode::SUCCESS;
    }
    if dry_run {
        print!("{}", plan.diff());
        eprintln!("tap: dry run: {} was not changed", shown.display());
        return ExitCode::SUCCESS;
    }
    let verb = match plan.repairs() {
        Some(why) => format!("Repaired {name}'s tap entry ({why})"),
        None => format!("Connected {name}"),
    };
    let kept = match plan.apply(&tap_home()) {
        Ok(done) => applied(done.note, done.backup),
        Err(e) => return failed(e),
    };
    println!(
        "{verb}: {} launches {tap} {}{kept}.",
        shown.display(),
        entry::args(client, profile).join(" ")
    );
    eprintln!(
        "Restart {name} (or reload its MCP servers) to use it; `tap disconnect {}` undoes this.",
        client.word()
    );
    ExitCode::SUCCESS
}

/// `tap disconnect CLIENT [--dry-run]`.
pub fn disconnect(client: Client, dry_run: bool) -> ExitCode {
    let Some(client) = client.with_file() else {
        return copilot_client::disconnect(dry_run);
    };
    let d = match dirs() {
        Ok(d) => d,
        Err(code) => return code,
    };
    let home = tap_home();
    let plan = match tap_connect::plan_disconnect(client, &d, &home) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let name = client.title();
    let shown = plan.shown.clone();
    match &plan.removal {
        Removal::NoFile => {
            println!(
                "{name} has no tap entry: {} does not exist.",
                shown.display()
            );
            return ExitCode::SUCCESS;
        }
        Removal::NoEntry => {
            println!(
                "{name} has no tap entry in {}; nothing to remove.",
                shown.display()
            );
            if !dry_run {
                match plan.apply(&home) {
                    Ok(done) => note(done.note),
                    Err(e) => return failed(e),
                }
            }
            return ExitCode::SUCCESS;
        }
        Removal::Remove { .. } => {}
    }
    if dry_run {
        print!("{}", plan.diff());
        eprintln!("tap: dry run: {} was not changed", shown.display());
        return ExitCode::SUCCESS;
    }
    let kept = match plan.apply(&home) {
        Ok(done) => applied(done.note, done.backup),
        Err(e) => return failed(e),
    };
    println!(
        "Disconnected {name}: removed the tap entry from {}{kept}.",
        shown.display()
    );
    ExitCode::SUCCESS
}

/// `tap connect [--json]`: every client and where it stands.
pub fn list(json: bool) -> ExitCode {
    let d = match dirs() {
        Ok(d) => d,
        Err(code) => return code,
    };
    let tap = match tap_path() {
        Ok(t) => t,
        Err(e) => return fail("INTERNAL", e),
    };
    let reports = status::all(&d, &tap, &tap_home());
    if json {
        print_json(&reports);
        return ExitCode::SUCCESS;
    }
    let header = ["CLIENT", "STATE", "FILE", "NOTE"].map(String::from);
    let rows: Vec<[String; 4]> = reports
        .iter()
        .map(|r| {
            let mut note = r.detail.clone().unwrap_or_default();
            if let Some(p) = &r.profile {
                note = if note.is_empty() {
                    format!("profile {p}")
                } else {
                    format!("profile {p}; {note}")
                };
            }
            [
                r.client.to_string(),
                r.state.word().to_string(),
                r.file.display().to_string(),
                note,
            ]
        })
        .collect();
    print_table(&header, &rows);
    if reports.iter().any(|r| r.state == State::Drifted) {
        eprintln!("`tap connect CLIENT` repairs a drifted client.");
    }
    ExitCode::SUCCESS
}

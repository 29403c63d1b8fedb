//! `tap connect CLIENT`, `tap disconnect CLIENT`, `tap connect` (the list) and `tap doctor`:
//! the `tap` entry that makes an MCP client launch `tap mcp --session <client>`, written in
//! the client's own file and format (docs/clients.md).
//!
//! - [`clients`]: the clients, their files and formats;
//! - [`entry`]: what the entry holds;
//! - [`json_file`], [`toml_file`]: the edits, which keep every other byte;
//! - [`write`]: backup, atomic replace, dry-run diff;
//! - [`status`], [`record`]: connected / drifted;
//! - [`copilot_client`]: the Copilot CLI, whose "entry" is `tap install copilot`'s extension;
//! - [`doctor`]: `tap doctor`.

mod clients;
mod copilot_client;
pub mod doctor;
mod entry;
mod json_file;
mod record;
mod status;
mod toml_file;
pub(crate) mod write;

pub use clients::Client;
pub use entry::parse_profile;

use crate::mcp_servers_import_clients::Dirs;
use crate::output::{fail, print_json, print_table};
use clients::Format;
use std::path::Path;
use std::process::ExitCode;

fn dirs() -> Result<Dirs, ExitCode> {
    Dirs::from_env().ok_or_else(|| fail("INTERNAL", "no home directory (set HOME)"))
}

/// The error code of a file that does not parse as `client`'s format.
fn invalid_code(client: Client) -> &'static str {
    match client.format() {
        Format::Toml => "INVALID_TOML",
        _ => "INVALID_JSON",
    }
}

fn invalid(client: Client, file: &Path, e: json_file::Invalid) -> ExitCode {
    fail(
        invalid_code(client),
        format!(
            "{} cannot be changed: {}; it was left as it is",
            file.display(),
            e.0
        ),
    )
}

fn io_fail(what: &str, file: &Path, e: std::io::Error) -> ExitCode {
    fail("INTERNAL", format!("cannot {what} {}: {e}", file.display()))
}

/// `tap connect CLIENT [--profile NAME] [--dry-run]`.
pub fn connect(client: Client, profile: Option<&str>, dry_run: bool) -> ExitCode {
    if client == Client::Copilot {
        return copilot_client::connect(profile, dry_run);
    }
    let d = match dirs() {
        Ok(d) => d,
        Err(code) => return code,
    };
    let tap = match entry::tap_path() {
        Ok(t) => t,
        Err(e) => return fail("INTERNAL", e),
    };
    let shown = client.file(&d);
    let file = write::target(&shown);
    let old = match write::read(&file) {
        Ok(t) => t,
        Err(e) => return io_fail("read", &file, e),
    };
    let wanted = entry::value(client, &tap, profile);
    let found = match status::read_entry(client, old.as_deref().unwrap_or("")) {
        Ok(f) => f,
        Err(e) => return invalid(client, &file, e),
    };
    let name = client.title();
    if found.as_ref() == Some(&wanted) {
        if dry_run {
            eprintln!("tap: dry run: nothing to change in {}", shown.display());
        } else {
            let created_key = record::get(client).is_some_and(|r| r.created_key);
            remember(client, profile, created_key);
            println!(
                "{name} is already connected: {} has the tap entry.",
                shown.display()
            );
        }
        return ExitCode::SUCCESS;
    }
    let text = old.as_deref().unwrap_or("");
    let new = match client.format() {
        Format::Json { key } => json_file::set(text, key, entry::NAME, &wanted),
        _ => toml_file::set(text, entry::NAME, &wanted),
    };
    let (new, created) = match new {
        Ok(n) => n,
        Err(e) => return invalid(client, &file, e),
    };
    if dry_run {
        print!("{}", write::diff(&shown, old.as_deref(), &new));
        eprintln!("tap: dry run: {} was not changed", shown.display());
        return ExitCode::SUCCESS;
    }
    let backup = match write::replace(&file, old.as_deref(), &new) {
        Ok(b) => b,
        Err(e) => return io_fail("write", &file, e),
    };
    let created_key = created || record::get(client).is_some_and(|r| r.created_key);
    remember(client, profile, created_key);
    let verb = match &found {
        Some(f) => format!(
            "Repaired {name}'s tap entry ({})",
            entry::drift_reason(f, &wanted)
        ),
        None => format!("Connected {name}"),
    };
    let kept = backup
        .map(|b| format!(" (the previous file is kept as {})", b.display()))
        .unwrap_or_default();
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

fn remember(client: Client, profile: Option<&str>, created_key: bool) {
    let profile = profile.map(str::to_string);
    record::set(
        client,
        Some(record::Record {
            profile,
            created_key,
        }),
    );
}

/// `tap disconnect CLIENT [--dry-run]`.
pub fn disconnect(client: Client, dry_run: bool) -> ExitCode {
    if client == Client::Copilot {
        return copilot_client::disconnect(dry_run);
    }
    let d = match dirs() {
        Ok(d) => d,
        Err(code) => return code,
    };
    let shown = client.file(&d);
    let file = write::target(&shown);
    let name = client.title();
    let old = match write::read(&file) {
        Ok(Some(t)) => t,
        Ok(None) => {
            println!(
                "{name} has no tap entry: {} does not exist.",
                shown.display()
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => return io_fail("read", &file, e),
    };
    // The servers object goes too when tap connect created it and nothing else is left in it.
    let drop_key = record::get(client).is_some_and(|r| r.created_key);
    let new = match client.format() {
        Format::Json { key } => json_file::remove(&old, key, entry::NAME, drop_key),
        _ => toml_file::remove(&old, entry::NAME, drop_key),
    };
    let new = match new {
        Ok(Some(n)) => n,
        Ok(None) => {
            println!(
                "{name} has no tap entry in {}; nothing to remove.",
                shown.display()
            );
            if !dry_run {
                record::set(client, None);
            }
            return ExitCode::SUCCESS;
        }
        Err(e) => return invalid(client, &file, e),
    };
    if dry_run {
        print!("{}", write::diff(&shown, Some(&old), &new));
        eprintln!("tap: dry run: {} was not changed", shown.display());
        return ExitCode::SUCCESS;
    }
    let backup = match write::replace(&file, Some(&old), &new) {
        Ok(b) => b,
        Err(e) => return io_fail("write", &file, e),
    };
    record::set(client, None);
    let kept = backup
        .map(|b| format!(" (the previous file is kept as {})", b.display()))
        .unwrap_or_default();
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
    let tap = match entry::tap_path() {
        Ok(t) => t,
        Err(e) => return fail("INTERNAL", e),
    };
    let reports = status::all(&d, &tap);
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
    if reports.iter().any(|r| r.state == status::State::Drifted) {
        eprintln!("`tap connect CLIENT` repairs a drifted client.");
    }
    ExitCode::SUCCESS
}

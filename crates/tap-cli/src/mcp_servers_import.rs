//! `tap mcp import [--from CLIENT] [--scope user|project] [--dry-run] [--force]`
//! (docs/mcp-servers.md, "Import"): the servers other MCP clients have configured on this
//! machine (`mcp_servers_import_clients`), converted to the gateway's shape and checked as
//! the gateway reads them, are shown first (added, skipped and why), then written with the
//! same file code as `tap mcp add` and a running gateway reloads.
//!
//! Only names are shown for `env` and headers, never values.

use crate::mcp_servers_args::{replace_transport, ImportArgs};
use crate::mcp_servers_cmd::{apply_all, file_fail};
use crate::mcp_servers_file::ConfigFile;
use crate::mcp_servers_import_clients::{convert, gateway_name, read, sources, Client, Dirs};
use crate::output::fail;
use serde_json::{Map, Value};
use std::path::Path;
use std::process::ExitCode;
use tap_gateway::mcp_servers::config;

/// A server that will be added.
struct Planned {
    name: String,
    client: Client,
    from: String,
    entry: Map<String, Value>,
    replaces: bool,
}

/// A server that will not be, and why.
struct Skipped {
    name: String,
    client: Client,
    from: String,
    why: String,
}

pub async fn run(home: &Path, args: ImportArgs) -> ExitCode {
    let Some(dirs) = Dirs::from_env() else {
        return fail(
            "INTERNAL",
            "no home directory ($HOME): cannot find the clients' files",
        );
    };
    let clients: Vec<Client> = match args.from {
        Some(c) => vec![c],
        None => Client::ALL.to_vec(),
    };
    let mut file = match ConfigFile::open(args.scope, home) {
        Ok(f) => f,
        Err(e) => return file_fail(e),
    };
    let existing: Map<String, Value> = match file.servers() {
        Ok(s) => s.cloned().unwrap_or_default(),
        Err(e) => return file_fail(e),
    };

    let mut looked = Vec::new();
    let mut planned: Vec<Planned> = Vec::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for client in clients {
        for source in sources(client, &dirs) {
            let found = match read(&source, &dirs.cwd) {
                Ok(None) => continue,
                Ok(Some(found)) => found,
                Err(why) => {
                    eprintln!(
                        "tap: warning: {} ({}): {why}; its servers are not imported",
                        source.path.display(),
                        client.word()
                    );
                    continue;
                }
            };
            looked.push(format!(
                "{} ({}): {}",
                source.path.display(),
                client.word(),
                plural(found.len(), "server")
            ));
            for f in found {
                let name = gateway_name(&f.name);
                let skip = |why: String| Skipped {
                    name: name.clone(),
                    client: f.client,
                    from: f.from.clone(),
                    why,
                };
                let (mut entry, entry_notes) = match convert(f.client, &f.raw) {
                    Ok(converted) => converted,
                    Err(why) => {
                        skipped.push(skip(why));
                        continue;
                    }
                };
                if let Some(earlier) = planned.iter().find(|p| p.name == name) {
                    let why = if earlier.entry == entry {
                        format!("the same server is imported from {}", earlier.from)
                    } else {
                        format!("a server of that name is imported from {}", earlier.from)
                    };
                    skipped.push(skip(why));
                    continue;
                }
                let old = existing.get(&name);
                if old.is_some() && !args.force {
                    skipped.push(skip(format!(
                        "already in {} (--force replaces how it is reached)",
                        file.path.display()
                    )));
                    continue;
                }
                if let Some(old) = old {
                    entry = replace_transport(old, entry);
                }
                let warnings = match config::parse_entry(&name, &Value::Object(entry.clone())) {
                    Ok((_, warnings)) => warnings,
                    Err(why) => {
                        skipped.push(skip(format!("not a valid entry: {why}")));
                        continue;
                    }
                };
                if name != f.name {
                    notes.push(format!(
                        "{name}: imported under this name ('{}' has characters a server name cannot)",
                        f.name
                    ));
                }
                notes.extend(entry_notes.into_iter().map(|n| format!("{name}: {n}")));
                notes.extend(warnings);
                planned.push(Planned {
                    name,
                    client: f.client,
                    from: f.from,
                    entry,
                    replaces: old.is_some(),
                });
            }
        }
    }

    preview(&looked, &planned, &skipped, &notes, &file, args.dry_run);
    if args.dry_run || planned.is_empty() {
        if args.dry_run {
            println!("Dry run: nothing was written.");
        }
        return ExitCode::SUCCESS;
    }
    let servers = match file.servers_mut() {
        Ok(s) => s,
        Err(e) => return file_fail(e),
    };
    for p in &planned {
        servers.insert(p.name.clone(), Value::Object(p.entry.clone()));
    }
    if let Err(e) = file.save() {
        return file_fail(e);
    }
    println!(
        "Imported {} into {}.",
        plural(planned.len(), "MCP server"),
        file.path.display()
    );
    let names: Vec<String> = planned.iter().map(|p| p.name.clone()).collect();
    apply_all(home, &file, &names).await;
    ExitCode::SUCCESS
}

fn preview(
    looked: &[String],
    planned: &[Planned],
    skipped: &[Skipped],
    notes: &[String],
    file: &ConfigFile,
    dry_run: bool,
) {
    if looked.is_empty() {
        println!("No MCP client configuration found on this machine (`tap mcp import --help` lists where it looks).");
        return;
    }
    println!("Found:");
    for l in looked {
        println!("  {l}");
    }
    if planned.is_empty() {
        println!("Nothing to add to {}.", file.path.display());
    } else {
        println!(
            "{} to {} ({} scope):",
            if dry_run { "Would add" } else { "Adding" },
            file.path.display(),
            file.scope.word()
        );
        let rows: Vec<Vec<String>> = planned
            .iter()
            .map(|p| {
                let (kind, target, secrets) = describe(&p.name, &p.entry);
                vec![
                    p.name.clone(),
                    kind,
                    target,
                    secrets,
                    format!(
                        "{}{}",
                        p.client.word(),
                        if p.replaces { " (replaces)" } else { "" }
                    ),
                ]
            })
            .collect();
        indent_table(
            &["NAME", "TRANSPORT", "TARGET", "ENV/HEADERS", "FROM"],
            rows,
        );
    }
    if !skipped.is_empty() {
        println!("Skipped:");
        for s in skipped {
            println!("  {} ({}, {}): {}", s.name, s.client.word(), s.from, s.why);
        }
    }
    if !notes.is_empty() {
        println!("Notes:");
        for n in notes {
            println!("  {n}");
        }
    }
}

/// Transport, target, and the names (never the values) of its env or headers.
fn describe(name: &str, entry: &Map<String, Value>) -> (String, String, String) {
    match config::parse_entry(name, &Value::Object(entry.clone())) {
        Ok((spec, _)) => {
            let kind = serde_json::to_value(spec.transport.kind())
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let names = spec.transport.secret_names();
            let names = if names.is_empty() {
                "-".into()
            } else {
                names.join(", ")
            };
            (kind, spec.transport.target(), names)
        }
        Err(_) => ("?".into(), "?".into(), "-".into()),
    }
}

/// A table, two spaces in, columns two apart.
fn indent_table(header: &[&str], rows: Vec<Vec<String>>) {
    let mut table = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    table.extend(rows);
    let mut widths = vec![0; header.len()];
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        println!("  {}", cells.join("  ").trim_end());
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

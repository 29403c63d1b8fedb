//! `tap profiles`: the profiles in `$TAP_HOME/profiles.json` (docs/clients.md, "Profiles"),
//! the tools each lets through now and what they cost in a client's context, and editing
//! them. The running gateway does the counting (`profiles.list`): it knows the tools.

use crate::output::{connect_control as connect, control_fail, fail, print_table};
use clap::Subcommand;
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::profiles::{ProfileDef, ProfileRef, ProfileSet, ProfilesList, Surface};

fn parse_surface(s: &str) -> Result<Surface, String> {
    match s {
        "tools" => Ok(Surface::Tools),
        "search" => Ok(Surface::Search),
        _ => Err("'tools' or 'search'".into()),
    }
}

#[derive(Subcommand)]
pub enum ProfilesCommand {
    /// One profile: each tool it lets through, with its cost (tokens, bytes).
    Show {
        /// The profile.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create or replace a profile. With no flag it sees every tool.
    Set {
        /// The profile's name (letters, digits, '_', '-', '.').
        name: String,
        /// An MCP server whose tools it sees; repeatable.
        #[arg(long = "server", value_name = "NAME")]
        servers: Vec<String>,
        /// A provider whose tools it sees; repeatable.
        #[arg(long = "provider", value_name = "NAME")]
        providers: Vec<String>,
        /// A glob ('*', '?') a tool's name must match; repeatable.
        #[arg(long = "tool", value_name = "GLOB")]
        tools: Vec<String>,
        /// A glob of tools it never sees; repeatable.
        #[arg(long = "hide-tool", value_name = "GLOB")]
        hide_tools: Vec<String>,
        /// For people.
        #[arg(long)]
        description: Option<String>,
        /// How clients get its tools: 'tools' lists each (the default); 'search' lists
        /// only tap_find_tools and tap_call_tool beside the gateway's own tools.
        #[arg(long, value_name = "tools|search", value_parser = parse_surface, default_value = "tools")]
        surface: Surface,
        /// Ask its sessions' tool-call approvals in the calling MCP client too, when that
        /// client declared elicitation (a client that accepts every elicitation by itself
        /// would then approve every call: use it with clients that show the form).
        #[arg(long)]
        approvals_in_client: bool,
    },
    /// Remove a profile.
    Remove {
        /// The profile.
        name: String,
    },
}

/// `tap profiles [--json]` (no subcommand) and its subcommands.
pub async fn run(home: &Path, command: Option<ProfilesCommand>, json: bool) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (call, show) = match command {
        None => (ControlCall::ProfilesList(Empty {}), None),
        Some(ProfilesCommand::Show { name, json: j }) => {
            (ControlCall::ProfilesList(Empty {}), Some((name, j)))
        }
        Some(ProfilesCommand::Set {
            name,
            servers,
            providers,
            tools,
            hide_tools,
            description,
            surface,
            approvals_in_client,
        }) => (
            ControlCall::ProfilesSet(ProfileSet {
                name,
                def: ProfileDef {
                    servers,
                    providers,
                    tools,
                    hide_tools,
                    description,
                    surface,
                    approvals_in_client,
                },
            }),
            None,
        ),
        Some(ProfilesCommand::Remove { name }) => {
            (ControlCall::ProfilesRemove(ProfileRef { name }), None)
        }
    };
    let list: ProfilesList = match client.call(call).await {
        Ok(l) => l,
        Err(e) => return control_fail(e),
    };
    match show {
        Some((name, json)) => show_one(&list, &name, json),
        None => {
            print_list(&list, json);
            ExitCode::SUCCESS
        }
    }
}

fn print_list(list: &ProfilesList, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(list).unwrap_or_default());
        return;
    }
    for w in &list.warnings {
        eprintln!("tap: warning: {w}");
    }
    let header = ["PROFILE", "SURFACE", "TOOLS", "TOKENS", "BYTES", "PROBLEM"].map(String::from);
    let mut rows = vec![[
        "(no profile)".to_string(),
        "tools".to_string(),
        list.tools.len().to_string(),
        list.tokens.to_string(),
        list.bytes.to_string(),
        String::new(),
    ]];
    for p in &list.profiles {
        rows.push([
            p.name.clone(),
            p.def
                .as_ref()
                .map(|d| d.surface.as_str().to_string())
                .unwrap_or_default(),
            p.visible.len().to_string(),
            p.tokens.to_string(),
            p.bytes.to_string(),
            p.error.clone().unwrap_or_default(),
        ]);
    }
    print_table(&header, &rows);
    println!(
        "Tokens of the tools/list a client gets (a search profile's: the gateway's own tools and tap_find_tools, tap_call_tool), counted with {} ({}).",
        list.tokenizer, list.path
    );
}

fn show_one(list: &ProfilesList, name: &str, json: bool) -> ExitCode {
    let Some(p) = list.profiles.iter().find(|p| p.name == name) else {
        return fail("NOT_FOUND", format!("no profile '{name}' in {}", list.path));
    };
    if json {
        println!("{}", serde_json::to_string_pretty(p).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    if let Some(why) = &p.error {
        return fail("INVALID_JSON", format!("profile '{name}': {why}"));
    }
    let header = ["TOOL", "PROVIDER", "TOKENS", "BYTES"].map(String::from);
    let rows: Vec<[String; 4]> = list
        .tools
        .iter()
        .filter(|t| p.visible.contains(&t.name))
        .map(|t| {
            [
                t.name.clone(),
                t.provider.clone(),
                t.tokens.to_string(),
                t.bytes.to_string(),
            ]
        })
        .collect();
    print_table(&header, &rows);
    match p.full_tokens {
        Some(full) => println!(
            "Search surface: clients list the gateway's own tools and {} ({} tokens ({}), {} bytes); the {} tools above, listed, would be {} tokens.",
            list.search_tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            p.tokens,
            list.tokenizer,
            p.bytes,
            p.visible.len(),
            full
        ),
        None => println!(
            "{} of {} tools: {} tokens ({}), {} bytes; every tool: {} tokens.",
            p.visible.len(),
            list.tools.len(),
            p.tokens,
            list.tokenizer,
            p.bytes,
            list.tokens
        ),
    }
    ExitCode::SUCCESS
}

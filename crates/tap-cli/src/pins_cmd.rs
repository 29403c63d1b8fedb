//! `tap pins`: pinned tool definitions (docs/pins.md). The first definition seen of each
//! tool is pinned; one that changes later is held (not offered to sessions) until it is
//! accepted here, in the panel or from the tray.

use crate::output::{connect_control as connect, control_fail, fail, print_table};
use clap::Subcommand;
use std::path::Path;
use std::process::ExitCode;
use tap_client::{ControlClient, Discovery};
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::pins::{HeldReason, HeldTool, PinRef, PinsEnabled, PinsList};

#[derive(Subcommand)]
pub enum PinsCommand {
    /// Held changes first (each with the command showing its diff), then every pin.
    List {
        /// Print JSON (with the texts and diffs).
        #[arg(long)]
        json: bool,
    },
    /// What changed in a held definition: a diff of its description, schema and
    /// annotations against the pinned one.
    Diff {
        /// The provider's name (an MCP server's name works too).
        provider: String,
        /// The tool.
        tool: String,
    },
    /// Accept the held definition of TOOL (or every held tool of PROVIDER): it is pinned
    /// and offered to sessions again.
    Accept {
        /// The provider's name (an MCP server's name works too).
        provider: String,
        /// The tool; without it, every held tool of the provider.
        tool: Option<String>,
        /// Accept only if the offered definition still has this hash (`tap pins list
        /// --json`'s `offeredHash`), so a change made after you looked is not accepted.
        #[arg(long, value_name = "SHA256")]
        hash: Option<String>,
    },
    /// Forget the pins of TOOL (or of every tool of PROVIDER): the next definition seen
    /// is pinned as new.
    Forget {
        /// The provider's name.
        provider: String,
        /// The tool; without it, every tool of the provider.
        tool: Option<String>,
    },
    /// Stop pinning PROVIDER's tools (they are offered whatever their definition).
    Disable {
        /// The provider's name (`mcp-<server>` for an MCP server).
        provider: String,
    },
    /// Pin PROVIDER's tools again.
    Enable {
        /// The provider's name.
        provider: String,
    },
}

pub async fn run(home: &Path, command: PinsCommand) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let answer = match command {
        PinsCommand::List { json } => {
            return match client
                .call::<PinsList>(ControlCall::PinsList(Empty {}))
                .await
            {
                Ok(l) => {
                    print_list(&l, json);
                    ExitCode::SUCCESS
                }
                Err(e) => control_fail(e),
            }
        }
        PinsCommand::Diff { provider, tool } => {
            let l = match client
                .call::<PinsList>(ControlCall::PinsList(Empty {}))
                .await
            {
                Ok(l) => l,
                Err(e) => return control_fail(e),
            };
            let mcp = format!("mcp-{provider}");
            let Some(h) = l
                .held
                .iter()
                .find(|h| h.tool == tool && (h.provider == provider || h.provider == mcp))
            else {
                return fail(
                    "NOT_FOUND",
                    format!("No held definition of '{tool}' of '{provider}' (`tap pins list`)"),
                );
            };
            print_diff(h);
            return ExitCode::SUCCESS;
        }
        PinsCommand::Accept {
            provider,
            tool,
            hash,
        } => {
            let call = ControlCall::PinsAccept(PinRef {
                provider: provider.clone(),
                tool: tool.clone(),
                hash,
            });
            client.call::<PinsList>(call).await.map(|_| {
                format!(
                    "Accepted {}: offered to sessions again.",
                    which(&provider, tool.as_deref())
                )
            })
        }
        PinsCommand::Forget { provider, tool } => {
            let call = ControlCall::PinsForget(PinRef {
                provider: provider.clone(),
                tool: tool.clone(),
                hash: None,
            });
            client.call::<PinsList>(call).await.map(|_| {
                format!(
                    "Forgot the pins of {}: the next definition seen is pinned.",
                    which(&provider, tool.as_deref())
                )
            })
        }
        PinsCommand::Disable { provider } => set_enabled(&client, provider, false).await,
        PinsCommand::Enable { provider } => set_enabled(&client, provider, true).await,
    };
    match answer {
        Ok(line) => {
            eprintln!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => control_fail(e),
    }
}

async fn set_enabled(
    client: &ControlClient,
    provider: String,
    enabled: bool,
) -> Result<String, tap_client::ControlClientError> {
    let call = ControlCall::PinsSetEnabled(PinsEnabled {
        provider: provider.clone(),
        enabled,
    });
    client.call::<PinsList>(call).await.map(|_| match enabled {
        true => format!("Pinning is on for '{provider}'."),
        false => format!(
            "Pinning is off for '{provider}': its tools are offered whatever their definition."
        ),
    })
}

fn which(provider: &str, tool: Option<&str>) -> String {
    match tool {
        Some(t) => format!("'{t}' of '{provider}'"),
        None => format!("every held tool of '{provider}'"),
    }
}

fn reason(r: HeldReason) -> &'static str {
    match r {
        HeldReason::Changed => "definition changed",
        HeldReason::Full => "pins full",
        HeldReason::Unreadable => "pins.json unreadable",
    }
}

fn print_list(l: &PinsList, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(l).unwrap_or_default());
        return;
    }
    if let Some(p) = &l.problem {
        println!("PROBLEM: {p}\n");
    }
    if !l.held.is_empty() {
        println!("Held ({}), not offered to sessions:", l.held.len());
        for h in &l.held {
            println!(
                "  {} {}  ({}, since {})  review: tap pins diff {} {}",
                h.provider,
                h.tool,
                reason(h.reason),
                h.since,
                h.provider,
                h.tool
            );
        }
        println!();
    }
    let header = ["PROVIDER", "TOOL", "SHA256", "PINNED"].map(String::from);
    let rows: Vec<[String; 4]> = l
        .pins
        .iter()
        .map(|p| {
            [
                p.provider.clone(),
                p.tool.clone(),
                format!(
                    "{}{}",
                    &p.hash[..p.hash.len().min(12)],
                    if p.text_kept { "" } else { " (hash only)" }
                ),
                p.pinned_at.clone(),
            ]
        })
        .collect();
    print_table(&header, &rows);
    if !l.disabled.is_empty() {
        println!("\nNot pinned: {}", l.disabled.join(", "));
    }
}

fn print_diff(h: &HeldTool) {
    println!(
        "{} of {}: {} (offered sha256 {})",
        h.tool,
        h.provider,
        reason(h.reason),
        h.offered_hash
    );
    if !h.diff.is_empty() {
        print!("{}", h.diff);
    } else {
        // A text over the size limit is kept as a hash alone: show what there is.
        if h.pinned.is_none() && h.reason == HeldReason::Changed {
            println!(
                "(the pinned definition was too large to keep its text; only its hash was kept)"
            );
        }
        if let Some(o) = &h.offered {
            println!("offered definition:\n{o}");
        }
    }
    println!(
        "\nAccept with: tap pins accept {} {} --hash {}",
        h.provider, h.tool, h.offered_hash
    );
}

/// For `tap status`: a line naming the held tools, or `None` (none held, or the control
/// plane is out of reach: `tap status` says what it can without it).
pub async fn held_line(home: &Path) -> Option<String> {
    let found = Discovery::from_home(home).ok()?;
    let token = found.control_token.as_deref()?;
    let (client, _) = ControlClient::connect(&found.control_url(), token)
        .await
        .ok()?;
    let l = client
        .call::<PinsList>(ControlCall::PinsList(Empty {}))
        .await
        .ok()?;
    let mut line = match &l.problem {
        Some(p) => format!("Pins: PROBLEM: {p}\n"),
        None => String::new(),
    };
    if !l.held.is_empty() {
        let names: Vec<String> = l
            .held
            .iter()
            .map(|h| format!("{}/{}", h.provider, h.tool))
            .collect();
        line.push_str(&format!(
            "Held tools ({}), not offered until accepted: {} (tap pins list)",
            l.held.len(),
            names.join(", ")
        ));
    }
    (!line.is_empty()).then(|| line.trim_end().to_string())
}

//! `tap tokens`: the MCP HTTP endpoint's client tokens (docs/clients.md, "Client tokens"):
//! one per client, kept across restarts (the host token changes at every start), each
//! revocable on its own, optionally holding its client to a profile.

use crate::output::{connect_control as connect, control_fail, print_table};
use clap::Subcommand;
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::profiles::{
    ClientTokenCreate, ClientTokenCreated, ClientTokenRef, ClientTokensList,
};

#[derive(Subcommand)]
pub enum TokensCommand {
    /// The tokens (never their values): id, client, profile, when made.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make a token for CLIENT; it is printed this once (only its hash is kept).
    Create {
        /// The client it is for (letters, digits, '_', '-', '.').
        client: String,
        /// Hold the client to this profile (its sessions see only the profile's tools).
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Print JSON (with the token).
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token: requests carrying it are refused from now on.
    Revoke {
        /// The token's id (`tap tokens list`).
        id: String,
    },
}

pub async fn run(home: &Path, command: TokensCommand) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match command {
        TokensCommand::List { json } => {
            match client
                .call::<ClientTokensList>(ControlCall::ClientTokensList(Empty {}))
                .await
            {
                Ok(list) => print_list(&list, json),
                Err(e) => return control_fail(e),
            }
        }
        TokensCommand::Create {
            client: name,
            profile,
            json,
        } => {
            let call = ControlCall::ClientTokensCreate(ClientTokenCreate {
                client: name,
                profile,
            });
            let made: ClientTokenCreated = match client.call(call).await {
                Ok(m) => m,
                Err(e) => return control_fail(e),
            };
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&made).unwrap_or_default()
                );
            } else {
                // The token alone on stdout, so `$(tap tokens create …)` captures it.
                println!("{}", made.token);
                eprintln!(
                    "Made client token {} for '{}'{}. It is shown this once: put it in the client's \
                     'Authorization: Bearer …' header for the MCP endpoint (docs/clients.md).",
                    made.info.id,
                    made.info.client,
                    made.info
                        .profile
                        .as_deref()
                        .map(|p| format!(", held to profile '{p}'"))
                        .unwrap_or_default()
                );
            }
        }
        TokensCommand::Revoke { id } => {
            let call = ControlCall::ClientTokensRevoke(ClientTokenRef { id: id.clone() });
            match client.call::<ClientTokensList>(call).await {
                Ok(_) => println!("Revoked client token {id}."),
                Err(e) => return control_fail(e),
            }
        }
    }
    ExitCode::SUCCESS
}

fn print_list(list: &ClientTokensList, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(list).unwrap_or_default());
        return;
    }
    let header = ["ID", "CLIENT", "PROFILE", "CREATED"].map(String::from);
    let rows: Vec<[String; 4]> = list
        .tokens
        .iter()
        .map(|t| {
            [
                t.id.clone(),
                t.client.clone(),
                t.profile.clone().unwrap_or_else(|| "-".into()),
                t.created.clone(),
            ]
        })
        .collect();
    print_table(&header, &rows);
}

//! `tap pairing list|deny|revoke`: the pairing part of the control plane, for scripts and
//! for headless machines with no panel.

use crate::output::{connect_control as connect, control_fail, print_json};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use tap_protocol::pairing::{PairingEntry, PairingState};

/// `tap pairing list [--json]`.
pub async fn list(home: &Path, json: bool) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let entries = match client.pairing_list().await {
        Ok(e) => e,
        Err(e) => return control_fail(e),
    };
    if json {
        print_json(&entries);
        return ExitCode::SUCCESS;
    }
    let (pending, paired): (Vec<&PairingEntry>, Vec<&PairingEntry>) = entries
        .iter()
        .partition(|e| e.state == PairingState::Pending);
    println!("Pending requests ({}):", pending.len());
    for e in pending {
        println!(
            "  {}  code {}  from {}  {}  expires {}",
            e.id,
            e.code.as_deref().unwrap_or("-"),
            e.origin.as_deref().unwrap_or(&e.remote),
            e.name.as_deref().unwrap_or("-"),
            e.expires_at.as_deref().unwrap_or("-"),
        );
    }
    println!("\nPaired providers ({}):", paired.len());
    for e in paired {
        println!(
            "  {}  {}  from {}  session {}{}{}",
            e.id,
            e.name.as_deref().unwrap_or("-"),
            e.origin.as_deref().unwrap_or(&e.remote),
            e.session.as_deref().unwrap_or("(foreground)"),
            if e.remember { "  remembered" } else { "" },
            if e.connected { "  connected" } else { "" },
        );
    }
    ExitCode::SUCCESS
}

/// `tap pairing deny ID` / `tap pairing deny --all`.
pub async fn deny(home: &Path, id: Option<&str>) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match id {
        Some(id) => match client.pairing_deny(id).await {
            Ok(()) => println!("{}", json!({"id": id, "state": "denied"})),
            Err(e) => return control_fail(e),
        },
        None => match client.pairing_deny_all().await {
            Ok(n) => println!("{}", json!({ "denied": n })),
            Err(e) => return control_fail(e),
        },
    }
    ExitCode::SUCCESS
}

/// `tap pairing revoke ID`.
pub async fn revoke(home: &Path, id: &str) -> ExitCode {
    let client = match connect(home).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.pairing_revoke(id).await {
        Ok(()) => {
            println!("{}", json!({"id": id, "state": "revoked"}));
            ExitCode::SUCCESS
        }
        Err(e) => control_fail(e),
    }
}

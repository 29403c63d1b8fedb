//! How commands report: JSON on stdout for results, `{"errorCode","error"}` + exit 1 for
//! failures, plain sentences on stderr for the human; and how they reach the gateway.

use std::path::Path;
use std::process::ExitCode;
use tap_client::{ClientError, ControlClient, ControlClientError, Discovery, HostClient};

/// Prints a failure in the contract's shape and returns exit code 1.
pub fn fail(code: &str, message: impl std::fmt::Display) -> ExitCode {
    // Written by hand: the contract documents this key order, whatever a map would do.
    let code = serde_json::Value::from(code);
    let message = serde_json::Value::from(message.to_string());
    println!("{{\"errorCode\":{code},\"error\":{message}}}");
    ExitCode::from(1)
}

/// A client error in the contract's shape.
pub fn client_fail(e: ClientError) -> ExitCode {
    match e {
        ClientError::Refused(err) => fail(err.code.as_str(), err.message),
        other => fail("DISCONNECTED", other),
    }
}

/// Finds the gateway through `TAP_HOME` and connects as a session host.
pub async fn connect(home: &std::path::Path, name: &str) -> Result<HostClient, ExitCode> {
    let found = Discovery::from_home(home).map_err(|e| fail("DISCONNECTED", e))?;
    HostClient::connect(&found.session_url(), &found.host_token, name, None)
        .await
        .map_err(client_fail)
}

/// Pretty JSON to stdout.
pub fn print_json<T: serde::Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("serializable")
    );
}

/// Finds the gateway through `TAP_HOME` and authenticates on its control plane.
pub async fn connect_control(home: &Path) -> Result<ControlClient, ExitCode> {
    let found = Discovery::from_home(home).map_err(|e| fail("DISCONNECTED", e))?;
    let Some(token) = found.control_token.as_deref() else {
        let why = match &found.control_token_error {
            // The desktop app keeps it in the OS keyring, which could not be read.
            Some(why) => format!("no control token: {why}"),
            None => format!(
                "no control token at {} (the running gateway does not share one)",
                home.join("control-token").display()
            ),
        };
        return Err(fail("AUTH_FAILED", why));
    };
    match ControlClient::connect(&found.control_url(), token).await {
        Ok((client, _snapshot)) => Ok(client),
        Err(e) => Err(control_fail(e)),
    }
}

/// A control-plane client error in the contract's shape.
pub fn control_fail(e: ControlClientError) -> ExitCode {
    match e {
        ControlClientError::Refused(err) => fail(err.code.as_str(), err.message),
        other => fail("DISCONNECTED", other),
    }
}

/// Left-aligned columns as wide as their widest cell, two spaces apart; the last column
/// is not padded.
pub fn print_table<const N: usize>(header: &[String; N], rows: &[[String; N]]) {
    let mut widths = [0; N];
    for row in std::iter::once(header).chain(rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        println!("{line}");
    }
}

/// A one-line note on stderr when the ledger is not writing to its file: what is shown is
/// only what this run kept in memory.
pub fn note_ledger(state: &tap_protocol::ledger::LedgerState) {
    if !state.durable {
        eprintln!(
            "tap: note: history is not being saved ({}); this shows only what the running gateway keeps in memory",
            state.reason.as_deref().unwrap_or("no reason given")
        );
    }
}

//! How commands report: JSON on stdout for results, `{"errorCode","error"}` + exit 1 for
//! failures, plain sentences on stderr for the human.

use std::process::ExitCode;
use tap_client::{ClientError, Discovery, HostClient};

/// Prints a failure in the contract's shape and returns exit code 1.
pub fn fail(code: &str, message: impl std::fmt::Display) -> ExitCode {
    // Written by hand to keep the documented key order (serde_json sorts object keys).
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

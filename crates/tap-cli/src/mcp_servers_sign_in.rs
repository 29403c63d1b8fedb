//! `tap mcp login NAME` and `tap mcp logout NAME`: signing in to (and out of) a remote MCP
//! server in the running gateway (docs/mcp-servers.md, "Remote servers and sign-in").
//!
//! `login` asks the gateway to start a sign-in, prints the authorization page's address
//! (and opens it where there is a display), then waits for the browser to come back to
//! the gateway: it follows the gateway's status events, never polls, and gives up when the
//! sign-in's page expires. The tokens never pass through this command.

use crate::mcp_servers_cmd::{gateway, live_one, Outcome};
use crate::mcp_servers_show::state_line;
use crate::output::{control_fail, fail};
use std::path::Path;
use std::process::ExitCode;
use tap_client::ControlClient;
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::mcp_servers::{
    McpServerInfo, McpServerRef, McpServerState, McpServersList, McpSignInStart,
};

/// How long `login` waits, after the sign-in finished, for the server to be ready.
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// `tap mcp login`.
pub async fn login(home: &Path, name: &str, session: Option<String>, no_open: bool) -> Outcome {
    let (mut client, which) = connect(home, name, session).await?;
    let start: McpSignInStart = client
        .call(ControlCall::McpServersSignIn(which.clone()))
        .await
        .map_err(control_fail)?;
    println!("To sign in to the MCP server '{name}', open this page in a browser:");
    println!("{}", start.url);
    if !no_open && crate::ui_cmd::has_display() {
        crate::ui_cmd::open(&start.url).await;
    }
    eprintln!(
        "Waiting for the browser to come back to the gateway (until {})…",
        start.expires_at
    );
    let until = expiry(&start.expires_at);
    // Signed in when the gateway no longer waits for the browser and holds no reason.
    let info = loop {
        let info = current(&client, &which).await?;
        match &info.sign_in {
            Some(s) if s.pending => {}
            Some(s) if s.signed_in && s.reason.is_none() => break info,
            Some(s) => {
                let why = s
                    .reason
                    .clone()
                    .unwrap_or_else(|| "the sign-in did not finish".into());
                return Err(fail(
                    "SIGN_IN_FAILED",
                    format!("MCP server '{name}': {why}"),
                ));
            }
            None => {
                return Err(fail(
                    "SIGN_IN_FAILED",
                    format!("MCP server '{name}': the sign-in was cancelled"),
                ))
            }
        }
        if !next_change(&mut client, until).await {
            return Err(fail(
                "TIMEOUT",
                format!("MCP server '{name}': nobody finished the sign-in before its page expired; run `tap mcp login {name}` again"),
            ));
        }
    };
    // The gateway restarts it with the new token: say where it lands.
    let settle = tokio::time::Instant::now() + READY_WAIT;
    let mut info = info;
    while matches!(
        info.state,
        McpServerState::Starting | McpServerState::Restarting
    ) && next_change(&mut client, settle).await
    {
        info = current(&client, &which).await?;
    }
    println!("Signed in to MCP server '{name}': {}.", state_line(&info));
    Ok(ExitCode::SUCCESS)
}

/// `tap mcp logout`.
pub async fn logout(home: &Path, name: &str, session: Option<String>) -> Outcome {
    let (client, which) = connect(home, name, session).await?;
    let info: McpServerInfo = client
        .call(ControlCall::McpServersSignOut(which))
        .await
        .map_err(control_fail)?;
    match info.sign_in.as_ref().and_then(|s| s.reason.as_deref()) {
        Some(reason) if reason != "signed out" => println!("MCP server '{name}': {reason}."),
        _ => println!("Signed out of MCP server '{name}': its tokens were revoked and forgotten."),
    }
    Ok(ExitCode::SUCCESS)
}

/// The running gateway and the server `name` names in it (its session found when it runs
/// for one only).
async fn connect(
    home: &Path,
    name: &str,
    session: Option<String>,
) -> Result<(ControlClient, McpServerRef), ExitCode> {
    let client =
        match gateway(home).await {
            None => return Err(fail(
                "DISCONNECTED",
                "no gateway is running: sign-in happens in it (`tap gateway` or the desktop app)",
            )),
            Some(Err(why)) => return Err(fail("DISCONNECTED", why)),
            Some(Ok(client)) => client,
        };
    let list: McpServersList = client
        .call(ControlCall::McpServersList(Empty {}))
        .await
        .map_err(control_fail)?;
    let session = match session {
        Some(s) => Some(s),
        None => live_one(&list.servers, name, None)?.and_then(|s| s.session_id.clone()),
    };
    let which = McpServerRef {
        name: name.to_string(),
        session_id: session,
    };
    Ok((client, which))
}

async fn current(client: &ControlClient, which: &McpServerRef) -> Result<McpServerInfo, ExitCode> {
    let list: McpServersList = client
        .call(ControlCall::McpServersList(Empty {}))
        .await
        .map_err(control_fail)?;
    list.servers
        .into_iter()
        .find(|s| s.name == which.name && s.session_id == which.session_id)
        .ok_or_else(|| {
            fail(
                "NOT_FOUND",
                format!("MCP server '{}' is gone from the gateway", which.name),
            )
        })
}

/// Waits for the gateway's next event (any: the list is read again after it); `false`
/// at `until` or when the connection closed.
async fn next_change(client: &mut ControlClient, until: tokio::time::Instant) -> bool {
    matches!(
        tokio::time::timeout_at(until, client.next_event()).await,
        Ok(Some(_))
    )
}

/// When the sign-in's page expires, as a deadline on this machine's clock.
fn expiry(rfc3339: &str) -> tokio::time::Instant {
    let left = humantime::parse_rfc3339_weak(rfc3339)
        .ok()
        .and_then(|at| at.duration_since(std::time::SystemTime::now()).ok())
        .unwrap_or(std::time::Duration::from_secs(600));
    tokio::time::Instant::now() + left
}

/// Before `tap mcp remove` drops a remote server from the user file: signs it out in the
/// running gateway, so its tokens are revoked, not only forgotten. Best effort: the entry
/// goes either way, and a warning says what could not be done.
pub async fn sign_out_on_remove(home: &Path, name: &str, entry: Option<&serde_json::Value>) {
    let remote = entry.is_some_and(|e| {
        e.get("url").is_some() && e.get("type").and_then(|t| t.as_str()) != Some("sse")
    });
    if !remote {
        return;
    }
    let Some(Ok(client)) = gateway(home).await else {
        return;
    };
    // Only a server holding a sign-in: another one would be restarted for nothing.
    let signed_in = client
        .call::<McpServersList>(ControlCall::McpServersList(Empty {}))
        .await
        .ok()
        .and_then(|l| {
            l.servers
                .into_iter()
                .find(|s| s.name == name && s.session_id.is_none())
        })
        .and_then(|s| s.sign_in)
        .is_some_and(|s| s.signed_in);
    if !signed_in {
        return;
    }
    let which = McpServerRef {
        name: name.to_string(),
        session_id: None,
    };
    match client
        .call::<McpServerInfo>(ControlCall::McpServersSignOut(which))
        .await
    {
        Ok(info) => {
            if let Some(reason) = info
                .sign_in
                .and_then(|s| s.reason)
                .filter(|r| r != "signed out")
            {
                eprintln!("tap: warning: MCP server '{name}': {reason}");
            }
        }
        Err(e) => eprintln!(
            "tap: warning: could not sign out of MCP server '{name}' before removing it: {e}"
        ),
    }
}

//! Desktop notifications: what they say (unit-tested) and sending them (`notify-rust`).
//!
//! A pairing notification never carries the code. The code is what the user types into
//! the page to grant it access; a notification can be shown on the lock screen, mirrored
//! to a phone or kept in a history, so the code is shown only in the tray popup and the
//! panel, where the user is looking at this machine, unlocked.

use std::path::Path;
use tap_protocol::mcp_servers::McpServerInfo;
use tap_protocol::pairing::PairingEntry;

/// The app name notifications carry (notification servers group by it).
pub const APP_NAME: &str = "Tap Gateway";

/// A notification's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The title line.
    pub summary: String,
    /// The body.
    pub body: String,
}

/// Who asks to pair, as the user can recognise it: the page's origin, else the name the
/// provider gave, else its address.
pub fn requester(entry: &PairingEntry) -> String {
    entry
        .origin
        .clone()
        .or_else(|| entry.name.clone())
        .unwrap_or_else(|| entry.remote.clone())
}

/// A new pairing request.
pub fn pairing_request(entry: &PairingEntry) -> Note {
    let minutes = tap_protocol::limits::PAIRING_CODE_TTL.as_secs() / 60;
    let mut body = String::new();
    if let (Some(name), Some(_)) = (&entry.name, &entry.origin) {
        body.push_str(&format!("\"{name}\" asks to provide tools. "));
    }
    body.push_str(&format!(
        "Open the Tap tray popup to see the code to type into the page. The request expires in {minutes} minutes."
    ));
    Note {
        summary: format!("Pairing request from {}", requester(entry)),
        body,
    }
}

/// A provider failure the engine reported.
pub fn provider_failure(what: &str) -> Note {
    Note {
        summary: "Tap: a provider failed".into(),
        body: format!("{what}. Details are on the panel's Diagnostics and Logs pages."),
    }
}

/// An MCP server the gateway parked: it failed too often in a row and stays stopped until
/// the user restarts it. Names it (with its session, for a project server) and says why in
/// its own words: the last line it wrote to stderr, else the gateway's last error.
pub fn mcp_server_parked(info: &McpServerInfo) -> Note {
    let who = match &info.session_id {
        Some(session) => format!("{} (session {session})", info.name),
        None => info.name.clone(),
    };
    let times = match info.failures {
        0 | 1 => String::new(),
        n => format!(" after failing {n} times in a row"),
    };
    let why = info
        .stderr_tail
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .or(info.last_error.as_ref())
        .map(|l| format!(": {}", l.trim().trim_end_matches('.')))
        .unwrap_or_default();
    Note {
        summary: "Tap: an MCP server stopped".into(),
        body: format!(
            "MCP server {who} stopped{times}{why}. Restart it on the panel's Servers page or with `tap mcp restart {}`.",
            info.name
        ),
    }
}

/// A remote MCP server that wants the user to sign in (OAuth) before it can be used: names
/// it (with its session, for a project server), says why in the gateway's words (`it needs
/// you to sign in`, `its sign-in expired or was revoked: …`), and where to sign in. Never carries a token or the sign-in page's address (it holds a one-time
/// `state`).
pub fn mcp_server_needs_sign_in(info: &McpServerInfo) -> Note {
    let who = match &info.session_id {
        Some(session) => format!("{} (session {session})", info.name),
        None => info.name.clone(),
    };
    let why = info
        .sign_in
        .as_ref()
        .and_then(|s| s.reason.as_deref())
        .map(|r| r.trim().trim_end_matches('.'))
        .filter(|r| !r.is_empty())
        .map(|r| format!(": {r}"))
        .unwrap_or_else(|| " waits for you to sign in".into());
    Note {
        summary: "Tap: an MCP server needs you to sign in".into(),
        body: format!(
            "MCP server {who}{why}. Sign in on the panel's Servers page or with `tap mcp login {}`.",
            info.name
        ),
    }
}

/// Shows `note` if the user has notifications on (Settings, read now so a change counts at
/// once); see [`send`].
pub fn show(home: &Path, note: Note) -> Option<std::thread::JoinHandle<()>> {
    if crate::settings::load(home).notifications {
        send(note)
    } else {
        tracing::info!(summary = %note.summary, "notification not shown: notifications are off in Settings");
        None
    }
}

/// The app cannot start (another gateway for this `TAP_HOME`, the port taken, …): says why
/// on stderr and, since a login item has no terminal, in a notification; exits 2.
pub fn refuse_start(home: &Path, why: &str) -> ! {
    eprintln!("tap-desktop: {why}");
    tracing::error!(error = %why, "the app could not start");
    if let Some(shown) = show(home, start_failed(why)) {
        let _ = shown.join();
    }
    std::process::exit(2)
}

/// Shows `note` on a thread of its own (the D-Bus call blocks, and must not run on a
/// tokio worker); a failure is logged, never fatal. Join the handle to wait for it (before
/// exiting).
pub fn send(note: Note) -> Option<std::thread::JoinHandle<()>> {
    let spawned = std::thread::Builder::new()
        .name("tap-notify".into())
        .spawn(move || {
            let shown = notify_rust::Notification::new()
                .appname(APP_NAME)
                .summary(&note.summary)
                .body(&note.body)
                .icon("dialog-information")
                .show();
            match shown {
                Ok(_) => tracing::debug!(summary = %note.summary, "notification shown"),
                Err(e) => {
                    tracing::warn!(summary = %note.summary, error = %e, "could not show a desktop notification")
                }
            }
        });
    spawned
        .map_err(|e| tracing::warn!(error = %e, "could not start the notification thread"))
        .ok()
}

/// A notification's button: the action key the server reports back, and its label.
pub type NoteAction = (&'static str, &'static str);

/// Shows `note` with `actions` as buttons if the user has notifications on (see [`show`]),
/// and calls `on_action` with the key of the one the user picks, on the notification's own
/// thread. A server without the `actions` capability shows the text alone; one that closes
/// the notification (expiry, the user dismissing it) ends the wait without a call (the key
/// `__closed` is not one of `actions`). Where notify-rust cannot wait for an action (not
/// the freedesktop protocol: macOS, Windows), the buttons are not offered.
pub fn show_with_actions(
    home: &Path,
    note: Note,
    actions: &'static [NoteAction],
    on_action: impl FnOnce(&str) + Send + 'static,
) -> Option<std::thread::JoinHandle<()>> {
    if !crate::settings::load(home).notifications {
        tracing::info!(summary = %note.summary, "notification not shown: notifications are off in Settings");
        return None;
    }
    let spawned = std::thread::Builder::new()
        .name("tap-notify-actions".into())
        .spawn(move || {
            let mut n = notify_rust::Notification::new();
            n.appname(APP_NAME)
                .summary(&note.summary)
                .body(&note.body)
                .icon("dialog-information");
            #[cfg(all(unix, not(target_os = "macos")))]
            for (key, label) in actions {
                n.action(key, label);
            }
            match n.show() {
                Ok(handle) => {
                    tracing::info!(id = handle.id(), summary = %note.summary, "notification shown with actions");
                    #[cfg(all(unix, not(target_os = "macos")))]
                    handle.wait_for_action(|key| {
                        if actions.iter().any(|(k, _)| *k == key) {
                            on_action(key)
                        }
                    });
                    #[cfg(not(all(unix, not(target_os = "macos"))))]
                    let _ = (handle, on_action);
                }
                Err(e) => {
                    tracing::warn!(summary = %note.summary, error = %e, "could not show a desktop notification")
                }
            }
        });
    spawned
        .map_err(|e| tracing::warn!(error = %e, "could not start the notification thread"))
        .ok()
}

/// The app could not start (a login item has no terminal to say so in).
pub fn start_failed(why: &str) -> Note {
    Note {
        summary: "Tap Gateway could not start".into(),
        body: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::pairing::PairingState;

    fn entry(origin: Option<&str>, name: Option<&str>) -> PairingEntry {
        PairingEntry {
            id: "pr-1".into(),
            state: PairingState::Pending,
            code: Some("482913".into()),
            origin: origin.map(Into::into),
            remote: "127.0.0.1:53122".into(),
            name: name.map(Into::into),
            metadata: None,
            created_at: "2026-11-22T14:00:00.000Z".into(),
            expires_at: Some("2026-11-22T14:05:00.000Z".into()),
            session: None,
            remember: false,
            connected: true,
        }
    }

    #[test]
    fn a_pairing_notification_names_the_origin_and_never_the_code() {
        let n = pairing_request(&entry(Some("http://127.0.0.1:8080"), Some("page-tools")));
        assert_eq!(n.summary, "Pairing request from http://127.0.0.1:8080");
        assert_eq!(
            n.body,
            "\"page-tools\" asks to provide tools. Open the Tap tray popup to see the code to type into the page. The request expires in 5 minutes."
        );
        assert!(!n.summary.contains("482913") && !n.body.contains("482913"));
    }

    #[test]
    fn without_an_origin_the_name_then_the_address_identify_the_requester() {
        assert_eq!(
            pairing_request(&entry(None, Some("cli-tool"))).summary,
            "Pairing request from cli-tool"
        );
        assert_eq!(
            pairing_request(&entry(None, None)).summary,
            "Pairing request from 127.0.0.1:53122"
        );
    }

    #[test]
    fn a_failed_start_says_why() {
        assert_eq!(
            start_failed("127.0.0.1:9400 is in use by another program"),
            Note {
                summary: "Tap Gateway could not start".into(),
                body: "127.0.0.1:9400 is in use by another program".into()
            }
        );
    }

    #[test]
    fn a_parked_server_notification_names_it_and_quotes_its_last_stderr_line() {
        let mut info: McpServerInfo = serde_json::from_value(serde_json::json!({
            "name": "github", "scope": "user", "configPath": "/h/mcp.json",
            "transport": "stdio", "target": "npx -y server-github", "state": "parked",
            "tools": [], "restarts": 2, "failures": 3, "failing": true,
            "lastError": "it exited (exit status: 1)",
            "stderrTail": ["starting", "Error: GITHUB_TOKEN is not set", ""]
        }))
        .unwrap();
        let n = mcp_server_parked(&info);
        assert_eq!(n.summary, "Tap: an MCP server stopped");
        assert_eq!(
            n.body,
            "MCP server github stopped after failing 3 times in a row: Error: GITHUB_TOKEN is not set. Restart it on the panel's Servers page or with `tap mcp restart github`."
        );
        // Nothing on stderr (a command that could not start): the gateway's reason.
        info.stderr_tail.clear();
        info.session_id = Some("s-4f2a".into());
        assert_eq!(
            mcp_server_parked(&info).body,
            "MCP server github (session s-4f2a) stopped after failing 3 times in a row: it exited (exit status: 1). Restart it on the panel's Servers page or with `tap mcp restart github`."
        );
    }

    #[test]
    fn a_sign_in_notification_names_the_server_and_says_why_and_where() {
        let mut info: McpServerInfo = serde_json::from_value(serde_json::json!({
            "name": "github", "scope": "user", "configPath": "/h/mcp.json",
            "transport": "http", "target": "https://api.example.com/mcp", "state": "needsSignIn",
            "tools": [], "restarts": 0, "failures": 0, "failing": false,
            "signIn": {"signedIn": false, "pending": false, "scopes": [],
                       "reason": "its sign-in expired or was revoked: sign in again"}
        }))
        .unwrap();
        let n = mcp_server_needs_sign_in(&info);
        assert_eq!(n.summary, "Tap: an MCP server needs you to sign in");
        assert_eq!(
            n.body,
            "MCP server github: its sign-in expired or was revoked: sign in again. Sign in on the panel's Servers page or with `tap mcp login github`."
        );
        // No reason given, a project server: named with its session.
        info.sign_in = None;
        info.session_id = Some("s-4f2a".into());
        assert_eq!(
            mcp_server_needs_sign_in(&info).body,
            "MCP server github (session s-4f2a) waits for you to sign in. Sign in on the panel's Servers page or with `tap mcp login github`."
        );
    }

    #[test]
    fn a_failure_notification_carries_what_the_engine_said() {
        let n = provider_failure("provider process exited (command: node p.mjs)");
        assert_eq!(n.summary, "Tap: a provider failed");
        assert_eq!(
            n.body,
            "provider process exited (command: node p.mjs). Details are on the panel's Diagnostics and Logs pages."
        );
    }
}

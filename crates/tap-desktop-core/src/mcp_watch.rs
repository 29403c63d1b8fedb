//! What the desktop follows of the gateway's MCP servers: which are failing now (the tray
//! names them and asks for attention while they are), which were just parked (one
//! notification per park: a server the user restarts and that is parked again notifies
//! again; one that stays parked never does twice), and which wait for the user to sign in
//! (OAuth; named in the tray while they wait, one notification each time one starts
//! waiting, by the same rule as a park). Read from `mcpServers.list` each time the gateway
//! announces a status change, which it does when a server becomes ready, restarts after a
//! failure, is parked, or its sign-in changes.

use crate::notify::{self, Note};
use std::collections::BTreeSet;
use tap_gateway::Gateway;
use tap_protocol::host::GatewayStatus;
use tap_protocol::mcp_servers::{McpServerInfo, McpServerState};

/// What the watcher reads from the engine when its status changes.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Sessions and providers.
    pub status: GatewayStatus,
    /// The MCP servers (`mcpServers.list`).
    pub servers: Vec<McpServerInfo>,
    /// The tools whose changed definition is held until the user accepts it
    /// (`pins.list`), as `provider/tool`.
    pub held: Vec<String>,
}

impl Snapshot {
    /// The running gateway's, now.
    pub fn of(gateway: &Gateway) -> Self {
        Self {
            status: gateway.status(),
            servers: gateway.mcp_servers_list().servers,
            held: gateway
                .pins_list()
                .held
                .iter()
                .map(|h| format!("{}/{}", h.provider, h.tool))
                .collect(),
        }
    }
}

/// One server instance: a user server by name, a project server by name and session.
type Key = (String, Option<String>);

fn key(info: &McpServerInfo) -> Key {
    (info.name.clone(), info.session_id.clone())
}

/// The failing servers, those waiting for a sign-in, and the parked and waiting ones
/// already announced.
#[derive(Debug, Default)]
pub struct McpWatch {
    failing: Vec<String>,
    needs_sign_in: Vec<String>,
    parked: BTreeSet<Key>,
    waiting: BTreeSet<Key>,
}

/// The servers of `servers` in `state`.
fn keys_in(servers: &[McpServerInfo], state: McpServerState) -> BTreeSet<Key> {
    servers
        .iter()
        .filter(|s| s.state == state)
        .map(key)
        .collect()
}

impl McpWatch {
    /// Starts from `servers`. Servers parked or waiting for a sign-in already are not
    /// announced: the app started after they were (there are none in a fresh gateway: a
    /// remote server asks for a sign-in only after its first request, and is announced
    /// then).
    pub fn new(servers: &[McpServerInfo]) -> Self {
        let mut watch = Self::default();
        watch.update(servers);
        watch
    }

    /// Takes in a new list; a notification for each server parked, and each that started
    /// waiting for a sign-in, since the last one.
    pub fn update(&mut self, servers: &[McpServerInfo]) -> Vec<Note> {
        let names = |keep: fn(&McpServerInfo) -> bool| -> Vec<String> {
            servers
                .iter()
                .filter(|s| keep(s))
                .map(|s| s.name.clone())
                .collect()
        };
        self.failing = names(|s| s.failing);
        self.needs_sign_in = names(|s| s.state == McpServerState::NeedsSignIn);
        let is_new = |s: &McpServerInfo, told: &BTreeSet<Key>, state: McpServerState| {
            s.state == state && !told.contains(&key(s))
        };
        let mut notes: Vec<Note> = servers
            .iter()
            .filter(|s| is_new(s, &self.parked, McpServerState::Parked))
            .map(notify::mcp_server_parked)
            .collect();
        notes.extend(
            servers
                .iter()
                .filter(|s| is_new(s, &self.waiting, McpServerState::NeedsSignIn))
                .map(notify::mcp_server_needs_sign_in),
        );
        // A server no longer parked or waiting (restarted, signed in, removed) is
        // forgotten: the next time it is, that is news.
        self.parked = keys_in(servers, McpServerState::Parked);
        self.waiting = keys_in(servers, McpServerState::NeedsSignIn);
        notes
    }

    /// The failing servers' names, one per instance ([`crate::tray_state::Summary`]).
    pub fn failing(&self) -> &[String] {
        &self.failing
    }

    /// The names of the servers waiting for the user to sign in, one per instance
    /// ([`crate::tray_state::Summary`]).
    pub fn needs_sign_in(&self) -> &[String] {
        &self.needs_sign_in
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tray_state::TrayState;
    use crate::watcher::{Action, Watcher};
    use tokio::time::Instant;

    fn server(name: &str, state: &str, session: Option<&str>) -> McpServerInfo {
        let failing = matches!(state, "parked" | "restarting");
        serde_json::from_value(serde_json::json!({
            "name": name, "scope": if session.is_some() { "project" } else { "user" },
            "sessionId": session, "configPath": "/h/mcp.json", "transport": "stdio",
            "target": "python s.py", "state": state, "tools": [], "restarts": 1,
            "failures": if failing { 2 } else { 0 }, "failing": failing,
            "lastError": "it exited (exit status: 3)", "stderrTail": ["boom"]
        }))
        .unwrap()
    }

    #[test]
    fn a_park_notifies_once_and_again_only_after_the_server_left_it() {
        let mut w = McpWatch::new(&[server("github", "ready", None)]);
        assert!(w.failing().is_empty());
        // Failing and restarting: named, no notification yet.
        assert_eq!(w.update(&[server("github", "restarting", None)]), vec![]);
        assert_eq!(w.failing(), ["github"]);
        let parked = server("github", "parked", None);
        assert_eq!(
            w.update(std::slice::from_ref(&parked)),
            vec![notify::mcp_server_parked(&parked)]
        );
        // Still parked at the next status change: said already.
        assert_eq!(w.update(std::slice::from_ref(&parked)), vec![]);
        assert_eq!(w.failing(), ["github"]);
        // Restarted by the user, parked again: news again.
        assert_eq!(w.update(&[server("github", "starting", None)]), vec![]);
        assert!(w.failing().is_empty());
        assert_eq!(w.update(std::slice::from_ref(&parked)).len(), 1);
    }

    #[test]
    fn parked_at_start_is_not_news_and_instances_are_told_apart() {
        let mut w = McpWatch::new(&[server("fs", "parked", Some("s-1"))]);
        assert_eq!(w.failing(), ["fs"]);
        // The same project server parked in another session is another park.
        let other = server("fs", "parked", Some("s-2"));
        let notes = w.update(&[server("fs", "parked", Some("s-1")), other.clone()]);
        assert_eq!(notes, vec![notify::mcp_server_parked(&other)]);
        assert_eq!(w.failing(), ["fs", "fs"]);
    }

    /// A remote server: waiting for a sign-in (`needsSignIn`), or in `state` with a token.
    fn remote(name: &str, state: &str, session: Option<&str>) -> McpServerInfo {
        let waits = state == "needsSignIn";
        serde_json::from_value(serde_json::json!({
            "name": name, "scope": if session.is_some() { "project" } else { "user" },
            "sessionId": session, "configPath": "/h/mcp.json", "transport": "http",
            "target": "https://mcp.example.com/mcp", "state": state, "tools": [],
            "restarts": 0, "failures": 0, "failing": false,
            "signIn": {
                "signedIn": !waits, "pending": false, "scopes": ["repo"],
                "reason": if waits { Some("it needs you to sign in") } else { None }
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_sign_in_wait_notifies_once_and_again_only_after_the_server_left_it() {
        let mut w = McpWatch::new(&[remote("github", "starting", None)]);
        assert!(w.needs_sign_in().is_empty());
        let waits = remote("github", "needsSignIn", None);
        assert_eq!(
            w.update(std::slice::from_ref(&waits)),
            vec![notify::mcp_server_needs_sign_in(&waits)]
        );
        assert_eq!(w.needs_sign_in(), ["github"]);
        // Waiting for a sign-in is not failing.
        assert!(w.failing().is_empty());
        // Still waiting at the next status change (a sign-in started, say): said already.
        let mut pending = waits.clone();
        pending.sign_in.as_mut().unwrap().pending = true;
        assert_eq!(w.update(&[pending]), vec![]);
        assert_eq!(w.update(std::slice::from_ref(&waits)), vec![]);
        // Signed in and ready: quiet, and no longer named.
        assert_eq!(w.update(&[remote("github", "ready", None)]), vec![]);
        assert!(w.needs_sign_in().is_empty());
        // Signed out (or the token expired for good): news again.
        assert_eq!(w.update(std::slice::from_ref(&waits)).len(), 1);
        // Removed, then back and waiting: news again too.
        assert_eq!(w.update(&[]), vec![]);
        assert_eq!(w.update(std::slice::from_ref(&waits)).len(), 1);
    }

    #[test]
    fn waiting_at_start_is_not_news_and_instances_are_told_apart() {
        let mut w = McpWatch::new(&[remote("linear", "needsSignIn", Some("s-1"))]);
        assert_eq!(w.needs_sign_in(), ["linear"]);
        let other = remote("linear", "needsSignIn", Some("s-2"));
        let notes = w.update(&[remote("linear", "needsSignIn", Some("s-1")), other.clone()]);
        assert_eq!(notes, vec![notify::mcp_server_needs_sign_in(&other)]);
        assert_eq!(w.needs_sign_in(), ["linear", "linear"]);
    }

    #[test]
    fn a_park_and_a_sign_in_in_one_list_notify_each() {
        let mut w = McpWatch::new(&[]);
        let parked = server("exits", "parked", None);
        let waits = remote("github", "needsSignIn", None);
        assert_eq!(
            w.update(&[waits.clone(), parked.clone()]),
            vec![
                notify::mcp_server_parked(&parked),
                notify::mcp_server_needs_sign_in(&waits)
            ]
        );
        assert_eq!(w.failing(), ["exits"]);
        assert_eq!(w.needs_sign_in(), ["github"]);
    }

    fn snapshot(servers: Vec<McpServerInfo>) -> Snapshot {
        let status = serde_json::from_value(serde_json::json!({
            "address": "ws://127.0.0.1:9400", "version": "0.1.0",
            "startedAt": "2026-11-22T14:00:00.000Z", "uptimeMs": 1,
            "sessions": [], "providers": []
        }))
        .unwrap();
        Snapshot {
            status,
            servers,
            held: Vec::new(),
        }
    }

    #[test]
    fn a_held_tool_reaches_the_tray_and_leaves_it_when_accepted() {
        let mut w = Watcher::new(&snapshot(vec![]), &[]);
        let mut held = snapshot(vec![]);
        held.held = vec!["mcp-d/d__describe".into()];
        let event = tap_gateway::GatewayEvent::StatusChanged;
        assert_eq!(
            w.on_event(&event, Instant::now(), || held),
            vec![Action::UpdateTray]
        );
        assert_eq!(w.summary().held_tools, ["mcp-d/d__describe"]);
        assert_eq!(w.summary().state(), TrayState::Attention);
        assert_eq!(
            w.on_event(&event, Instant::now(), || snapshot(vec![])),
            vec![Action::UpdateTray]
        );
        assert!(w.summary().held_tools.is_empty());
    }

    #[test]
    fn the_watcher_puts_failing_servers_in_the_tray_and_notifies_a_park() {
        let mut w = Watcher::new(&snapshot(vec![server("good", "ready", None)]), &[]);
        let event = tap_gateway::GatewayEvent::StatusChanged;
        let parked = server("exits", "parked", None);
        let servers = vec![server("good", "ready", None), parked.clone()];
        let actions = w.on_event(&event, Instant::now(), || snapshot(servers.clone()));
        assert_eq!(
            actions,
            vec![
                Action::UpdateTray,
                Action::Notify(notify::mcp_server_parked(&parked))
            ]
        );
        assert_eq!(w.summary().failing_servers, ["exits"]);
        assert_eq!(w.summary().state(), TrayState::Attention);
        // Opening the panel clears provider failures, not servers that still fail.
        assert_eq!(w.failures_seen(), vec![]);
        assert_eq!(w.summary().state(), TrayState::Attention);
        // The same list again: nothing to do.
        assert_eq!(
            w.on_event(&event, Instant::now(), || snapshot(servers)),
            vec![]
        );
        // Restarted and ready: the tray calms down.
        let ready = vec![
            server("good", "ready", None),
            server("exits", "ready", None),
        ];
        assert_eq!(
            w.on_event(&event, Instant::now(), || snapshot(ready)),
            vec![Action::UpdateTray]
        );
        assert_eq!(w.summary().state(), TrayState::Idle);
    }

    #[test]
    fn the_watcher_names_servers_waiting_for_a_sign_in_and_notifies_once() {
        let mut w = Watcher::new(&snapshot(vec![remote("github", "starting", None)]), &[]);
        let event = tap_gateway::GatewayEvent::StatusChanged;
        let waits = remote("github", "needsSignIn", None);
        let actions = w.on_event(&event, Instant::now(), || snapshot(vec![waits.clone()]));
        assert_eq!(
            actions,
            vec![
                Action::UpdateTray,
                Action::Notify(notify::mcp_server_needs_sign_in(&waits))
            ]
        );
        assert_eq!(w.summary().needs_sign_in, ["github"]);
        assert!(w.summary().failing_servers.is_empty());
        assert_eq!(w.summary().state(), TrayState::Attention);
        assert_eq!(
            w.summary().sign_in_item(),
            ("1 MCP server needs sign-in: github".into(), true)
        );
        // Opening the panel does not clear it: only signing in does.
        assert_eq!(w.failures_seen(), vec![]);
        assert_eq!(w.summary().state(), TrayState::Attention);
        assert_eq!(
            w.on_event(&event, Instant::now(), || snapshot(vec![waits.clone()])),
            vec![]
        );
        let ready = vec![remote("github", "ready", None)];
        assert_eq!(
            w.on_event(&event, Instant::now(), || snapshot(ready)),
            vec![Action::UpdateTray]
        );
        assert_eq!(w.summary().state(), TrayState::Idle);
        assert_eq!(
            w.summary().sign_in_item(),
            ("No MCP server needs sign-in".into(), false)
        );
    }

    /// A real engine runs `tests/mcp/servers/exits.py` (it exits at once) until it parks
    /// it (five quick failures, about 8 s of backoff): the follower notifies once, and the
    /// tray names the server.
    #[tokio::test]
    async fn a_real_engine_parking_a_server_notifies_once() {
        use crate::engine::{Engine, StartOptions};
        use std::sync::{Arc, Mutex};
        let dir = tempfile::tempdir().unwrap();
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/mcp/servers/exits.py");
        let python = std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let servers = serde_json::json!({"mcpServers": {"exits": {
            "command": python, "args": [script.display().to_string()]
        }}});
        std::fs::write(dir.path().join("mcp.json"), servers.to_string()).unwrap();
        let engine = Engine::start(StartOptions::for_tests(
            dir.path(),
            Arc::new(tap_secrets::MemoryBackend::new()),
        ))
        .await
        .unwrap();
        let gateway = engine.gateway().clone();
        let watcher = Arc::new(Mutex::new(Watcher::new(&Snapshot::of(&gateway), &[])));
        let (_failure_tx, failure_rx) = tokio::sync::mpsc::unbounded_channel();
        let (applied_tx, mut applied) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(crate::watcher::follow(
            gateway.clone(),
            watcher.clone(),
            gateway.subscribe(),
            failure_rx,
            move |actions| {
                let _ = applied_tx.send(actions);
            },
        ));
        let note = tokio::time::timeout(std::time::Duration::from_secs(60), async {
            loop {
                let actions: Vec<Action> = applied.recv().await.unwrap();
                if let Some(Action::Notify(n)) =
                    actions.into_iter().find(|a| matches!(a, Action::Notify(_)))
                {
                    return n;
                }
            }
        })
        .await
        .expect("a notification within 60 s");
        assert_eq!(note.summary, "Tap: an MCP server stopped");
        assert!(
            note.body.starts_with("MCP server exits stopped after failing 5 times in a row: exits: failing on purpose."),
            "{note:?}"
        );
        assert_eq!(watcher.lock().unwrap().summary().failing_servers, ["exits"]);
        assert_eq!(
            watcher.lock().unwrap().summary().state(),
            TrayState::Attention
        );
        // Other status changes while it stays parked: no second word. A pairing request
        // after them marks where they end (the watcher takes events in order).
        gateway.emit(tap_gateway::GatewayEvent::StatusChanged);
        gateway.emit(tap_gateway::GatewayEvent::StatusChanged);
        let marker: tap_protocol::pairing::PairingEntry =
            serde_json::from_value(serde_json::json!({
                "id": "pr-marker", "state": "pending", "remote": "127.0.0.1:5",
                "createdAt": "2026-11-22T14:00:00.000Z", "remember": false, "connected": true
            }))
            .unwrap();
        gateway.emit(tap_gateway::GatewayEvent::PairingChanged(Box::new(marker)));
        loop {
            let actions = applied.recv().await.unwrap();
            assert!(
                !actions.iter().any(|a| matches!(a, Action::Notify(_))),
                "{actions:?}"
            );
            if actions.contains(&Action::ShowPopup) {
                break;
            }
        }
        task.abort();
        engine.stop().await;
    }
}

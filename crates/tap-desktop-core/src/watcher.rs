//! Turns the engine's events into what the desktop shell does: tray updates,
//! notifications, showing and hiding the pairing popup. Tauri-free, so every rule is
//! unit-tested; the Tauri shell (`src-tauri/src/app.rs`) just carries the actions out.
//! When a pairing request notifies is [`popup::should_notify`]'s rule.

use crate::failures::ProviderFailure;
use crate::mcp_watch::{McpWatch, Snapshot};
use crate::notify::{self, Note};
use crate::popup::{self, PopupShown};
use crate::tray_state::Summary;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use tap_gateway::{Gateway, GatewayEvent};
use tap_protocol::pairing::{PairingEntry, PairingState};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

mod approvals;
pub use approvals::{answer_from_notification, approval_waiting, NOTIFICATION_ACTIONS};

/// Something the shell should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Redraw the tray (icon, tooltip, pending item) from [`Watcher::summary`].
    UpdateTray,
    /// Show a desktop notification (if the user has them on).
    Notify(Note),
    /// Show a waiting tool call's notification with the answers as its buttons
    /// ([`NOTIFICATION_ACTIONS`], answered by [`answer_from_notification`]).
    NotifyCall {
        /// The call's approval id.
        id: String,
        /// Its text ([`approval_waiting`]).
        note: Note,
    },
    /// Show the popup (a pairing request arrived, or a tool call waits for approval).
    ShowPopup,
    /// Hide the popup (no pairing request is pending and no call waits any more).
    HidePopup,
}

/// A pending pairing request, as the desktop follows it.
#[derive(Debug)]
struct Waiting {
    since: Instant,
    notified: bool,
    note: Note,
}

/// The desktop's view of the gateway.
#[derive(Debug)]
pub struct Watcher {
    pending: BTreeMap<String, Waiting>,
    popup: PopupShown,
    notify_after: std::time::Duration,
    sessions: usize,
    /// Distinct tool names over the sessions.
    tools: usize,
    providers: usize,
    failures: usize,
    mcp: McpWatch,
    /// Tool calls waiting for the user's approval.
    approvals: approvals::ApprovalWatch,
    /// Tools held until the user accepts their changed definition (`provider/tool`).
    held: Vec<String>,
}

impl Watcher {
    /// Starts from a status and the pairing list (requests already pending and servers
    /// already parked at start do not notify: there are none in a fresh gateway).
    pub fn new(status: &Snapshot, pairings: &[PairingEntry]) -> Self {
        let mut w = Self {
            pending: BTreeMap::new(),
            popup: PopupShown::Yes,
            notify_after: popup::NOTIFY_AFTER,
            sessions: 0,
            tools: 0,
            providers: 0,
            failures: 0,
            mcp: McpWatch::default(),
            approvals: Default::default(),
            held: Vec::new(),
        };
        let _parked_before_us = w.set_status(status);
        let now = Instant::now();
        for e in pairings.iter().filter(|p| p.state == PairingState::Pending) {
            let waiting = Waiting {
                since: now,
                notified: true,
                note: notify::pairing_request(e),
            };
            w.pending.insert(e.id.clone(), waiting);
        }
        w
    }

    /// Uses `after` instead of [`popup::NOTIFY_AFTER`] (see [`popup::notify_after`]).
    pub fn with_notify_after(mut self, after: std::time::Duration) -> Self {
        self.notify_after = after;
        self
    }

    /// A request arrived at `now`: the tray, the popup, and a notification if the rule
    /// says so.
    fn arrived(&mut self, entry: &PairingEntry, now: Instant, actions: &mut Vec<Action>) {
        let note = notify::pairing_request(entry);
        let notified = popup::should_notify(
            self.popup,
            std::time::Duration::ZERO,
            false,
            self.notify_after,
        );
        if notified {
            actions.push(Action::Notify(note.clone()));
        }
        let waiting = Waiting {
            since: now,
            notified,
            note,
        };
        self.pending.insert(entry.id.clone(), waiting);
    }

    /// When [`Watcher::remind`] has something to do next (a request reaching
    /// [`popup::NOTIFY_AFTER`] without a notification), if ever.
    pub fn next_reminder(&self) -> Option<Instant> {
        let pairing = self.pending.values().filter(|w| !w.notified);
        let pairing = pairing.map(|w| w.since + self.notify_after).min();
        let calls = self.approvals.next_reminder(self.notify_after);
        pairing.into_iter().chain(calls).min()
    }

    /// Notifies the requests the rule says are due at `now` (each once).
    pub fn remind(&mut self, now: Instant) -> Vec<Action> {
        let (popup, after) = (self.popup, self.notify_after);
        let mut actions = vec![];
        for w in self.pending.values_mut() {
            let waited = now.saturating_duration_since(w.since);
            if popup::should_notify(popup, waited, w.notified, after) {
                w.notified = true;
                actions.push(Action::Notify(w.note.clone()));
            }
        }
        actions.extend(self.approvals.remind(now, popup, after));
        actions
    }

    /// The shell tried to show the popup: when it could not, notifications take its place,
    /// for the requests waiting now and for the next ones.
    pub fn set_popup(&mut self, shown: PopupShown, now: Instant) -> Vec<Action> {
        self.popup = shown;
        self.remind(now)
    }

    /// The counts for the tray.
    pub fn summary(&self) -> Summary {
        Summary {
            sessions: self.sessions,
            tools: self.tools,
            providers: self.providers,
            pending: self.pending.len(),
            approvals: self.approvals.len(),
            failures: self.failures,
            failing_servers: self.mcp.failing().to_vec(),
            needs_sign_in: self.mcp.needs_sign_in().to_vec(),
            held_tools: self.held.clone(),
        }
    }

    /// Takes in what the engine says now; a notification for each MCP server parked, or
    /// waiting for a sign-in, since.
    fn set_status(&mut self, snapshot: &Snapshot) -> Vec<Action> {
        self.sessions = snapshot.status.sessions.len();
        // A tool offered to several sessions is one tool to the user.
        let tools = snapshot.status.sessions.iter().flat_map(|s| &s.tools);
        self.tools = tools.collect::<BTreeSet<_>>().len();
        self.providers = snapshot.status.providers.len();
        self.held = snapshot.held.clone();
        let parked = self.mcp.update(&snapshot.servers);
        parked.into_iter().map(Action::Notify).collect()
    }

    /// One engine event at `now`. `status` is called for `StatusChanged` only.
    pub fn on_event(
        &mut self,
        event: &GatewayEvent,
        now: Instant,
        status: impl FnOnce() -> Snapshot,
    ) -> Vec<Action> {
        match event {
            GatewayEvent::PairingChanged(entry) => {
                if entry.state == PairingState::Pending {
                    if self.pending.contains_key(&entry.id) {
                        return vec![];
                    }
                    let mut actions = vec![Action::UpdateTray];
                    self.arrived(entry, now, &mut actions);
                    actions.push(Action::ShowPopup);
                    actions
                } else {
                    self.resolved(&entry.id)
                }
            }
            GatewayEvent::PairingRemoved { id, .. } => self.resolved(id),
            // The panel follows these itself; the tray shows none of it.
            GatewayEvent::DiagnosticsChanged
            | GatewayEvent::SettingsChanged(_)
            | GatewayEvent::PolicyChanged => vec![],
            GatewayEvent::ApprovalWaiting(call) => self.call_waiting(call, now),
            GatewayEvent::ApprovalResolved { id, .. } => self.call_resolved(id),
            GatewayEvent::StatusChanged => {
                let before = self.summary();
                let notes = self.set_status(&status());
                let mut actions = if self.summary() == before {
                    vec![]
                } else {
                    vec![Action::UpdateTray]
                };
                actions.extend(notes);
                actions
            }
        }
    }

    /// A request left the pending set (paired, denied, expired, …).
    fn resolved(&mut self, id: &str) -> Vec<Action> {
        if self.pending.remove(id).is_none() {
            return vec![];
        }
        let mut actions = vec![Action::UpdateTray];
        if self.nothing_waits() {
            actions.push(Action::HidePopup);
        }
        actions
    }

    /// Events were dropped (the watcher lagged): start over from the engine's state.
    /// Requests that appeared meanwhile are announced; the popup follows the new count.
    pub fn resync(
        &mut self,
        status: &Snapshot,
        pairings: &[PairingEntry],
        now: Instant,
    ) -> Vec<Action> {
        let ids = pending_ids(pairings);
        let mut actions = vec![Action::UpdateTray];
        let was_pending = !self.pending.is_empty();
        self.pending.retain(|id, _| ids.contains(id));
        let mut new = false;
        for e in pairings {
            if ids.contains(&e.id) && !self.pending.contains_key(&e.id) {
                self.arrived(e, now, &mut actions);
                new = true;
            }
        }
        actions.extend(self.set_status(status));
        if new {
            actions.push(Action::ShowPopup);
        } else if was_pending && self.nothing_waits() {
            actions.push(Action::HidePopup);
        }
        actions
    }

    /// The engine reported a provider failure.
    pub fn on_failure(&mut self, failure: &ProviderFailure) -> Vec<Action> {
        self.failures += 1;
        vec![
            Action::UpdateTray,
            Action::Notify(notify::provider_failure(&failure.0)),
        ]
    }

    /// The user opened the panel, where failures are shown: the tray stops asking for
    /// attention because of them.
    pub fn failures_seen(&mut self) -> Vec<Action> {
        if self.failures == 0 {
            return vec![];
        }
        self.failures = 0;
        vec![Action::UpdateTray]
    }
}

/// Feeds the engine's events and the provider failures to `watcher` until the engine's
/// event stream ends, and hands each batch of actions to `apply` (which runs on the async
/// runtime, so it must not block). After a lag it starts over from the engine's state.
pub async fn follow(
    gateway: Gateway,
    watcher: Arc<Mutex<Watcher>>,
    mut events: broadcast::Receiver<GatewayEvent>,
    mut failures: UnboundedReceiver<ProviderFailure>,
    mut apply: impl FnMut(Vec<Action>),
) {
    loop {
        // std Mutex: each lock is taken and released between two awaits.
        let reminder = watcher.lock().unwrap().next_reminder();
        let actions = tokio::select! {
            event = events.recv() => match event {
                Ok(event) => watcher.lock().unwrap().on_event(&event, Instant::now(), || Snapshot::of(&gateway)),
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "desktop watcher lagged; resyncing");
                    let (status, pairings) = (Snapshot::of(&gateway), gateway.pairing_list());
                    let calls = gateway.approvals_list().waiting;
                    let mut w = watcher.lock().unwrap();
                    let mut actions = w.resync(&status, &pairings, Instant::now());
                    actions.extend(w.resync_calls(&calls, Instant::now()));
                    actions
                }
                Err(RecvError::Closed) => return,
            },
            Some(failure) = failures.recv() => watcher.lock().unwrap().on_failure(&failure),
            _ = sleep_until_some(reminder) => watcher.lock().unwrap().remind(Instant::now()),
        };
        if !actions.is_empty() {
            apply(actions);
        }
    }
}

/// Sleeps until `at`; forever when there is nothing to wait for.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn pending_ids(pairings: &[PairingEntry]) -> BTreeSet<String> {
    pairings
        .iter()
        .filter(|p| p.state == PairingState::Pending)
        .map(|p| p.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::host::{GatewayStatus, ProviderStatus, SessionStatus};

    pub(super) fn status(sessions: usize, providers: usize) -> Snapshot {
        let status = GatewayStatus {
            address: "ws://127.0.0.1:9400".into(),
            version: "0.1.0".into(),
            started_at: "2026-11-22T14:00:00.000Z".into(),
            uptime_ms: 1,
            sessions: (0..sessions)
                .map(|i| {
                    serde_json::from_value::<SessionStatus>(serde_json::json!({
                        "id": format!("s{i}"), "foreground": false, "state": "idle",
                        "hostDetached": false, "toolRevision": 0, "tools": []
                    }))
                    .unwrap()
                })
                .collect(),
            providers: (0..providers)
                .map(|i| {
                    serde_json::from_value::<ProviderStatus>(serde_json::json!({
                        "id": format!("p{i}"), "trust": "project", "state": "bound",
                        "tools": [], "inFlight": 0, "remote": "127.0.0.1:1",
                        "connectedAt": "2026-11-22T14:00:00.000Z"
                    }))
                    .unwrap()
                })
                .collect(),
            history: None,
        };
        Snapshot {
            status,
            servers: Vec::new(),
            held: Vec::new(),
        }
    }

    #[test]
    fn the_tray_counts_a_tool_offered_to_several_sessions_once() {
        let mut snapshot = status(2, 0);
        snapshot.status.sessions[0].tools = vec!["read".into(), "grep".into()];
        snapshot.status.sessions[1].tools = vec!["grep".into(), "write".into()];
        let w = Watcher::new(&snapshot, &[]);
        assert_eq!((w.summary().sessions, w.summary().tools), (2, 3));
    }

    fn entry(id: &str, state: PairingState) -> PairingEntry {
        PairingEntry {
            id: id.into(),
            state,
            code: (state == PairingState::Pending).then(|| "123456".into()),
            origin: Some("http://127.0.0.1:8080".into()),
            remote: "127.0.0.1:5".into(),
            name: None,
            metadata: None,
            created_at: "2026-11-22T14:00:00.000Z".into(),
            expires_at: None,
            session: None,
            remember: false,
            connected: true,
        }
    }

    fn no_status() -> Snapshot {
        panic!("status must not be fetched for pairing events")
    }

    fn pending(id: &str) -> GatewayEvent {
        GatewayEvent::PairingChanged(Box::new(entry(id, PairingState::Pending)))
    }

    fn note(id: &str) -> Action {
        Action::Notify(notify::pairing_request(&entry(id, PairingState::Pending)))
    }

    #[test]
    fn a_new_request_shows_the_popup_and_notifies_only_after_a_while() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        let actions = w.on_event(&pending("pr-1"), t0, no_status);
        // The popup opening by itself is the notification.
        assert_eq!(actions, vec![Action::UpdateTray, Action::ShowPopup]);
        assert_eq!(w.summary().pending, 1);
        // The same request changing (configured, say) is no news.
        assert_eq!(w.on_event(&pending("pr-1"), t0, no_status), vec![]);
        // Still pending after NOTIFY_AFTER: one reminder, then never again.
        let due = t0 + popup::NOTIFY_AFTER;
        assert_eq!(w.next_reminder(), Some(due));
        assert_eq!(w.remind(due - std::time::Duration::from_secs(1)), vec![]);
        assert_eq!(w.remind(due), vec![note("pr-1")]);
        assert_eq!(w.next_reminder(), None);
        assert_eq!(w.remind(due + popup::NOTIFY_AFTER), vec![]);
    }

    #[test]
    fn a_request_resolved_before_the_delay_never_notifies() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        w.on_event(&pending("pr-1"), t0, no_status);
        let gone = GatewayEvent::PairingRemoved {
            id: "pr-1".into(),
            reason: "denied".into(),
        };
        w.on_event(&gone, t0, no_status);
        assert_eq!(w.next_reminder(), None);
        assert_eq!(w.remind(t0 + popup::NOTIFY_AFTER), vec![]);
    }

    #[test]
    fn when_the_popup_cannot_be_shown_requests_notify_at_once() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        w.on_event(&pending("pr-1"), t0, no_status);
        // The shell could not show the popup: the waiting request notifies now.
        assert_eq!(w.set_popup(PopupShown::No, t0), vec![note("pr-1")]);
        // And the next one at once, popup or not.
        assert_eq!(
            w.on_event(&pending("pr-2"), t0, no_status),
            vec![Action::UpdateTray, note("pr-2"), Action::ShowPopup]
        );
        // Back to normal once the popup shows again.
        assert_eq!(w.set_popup(PopupShown::Yes, t0), vec![]);
        assert_eq!(
            w.on_event(&pending("pr-3"), t0, no_status),
            vec![Action::UpdateTray, Action::ShowPopup]
        );
    }

    #[tokio::test]
    async fn follow_reminds_of_a_request_still_pending_after_the_delay() {
        use crate::engine::{Engine, StartOptions};
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::start(StartOptions::for_tests(
            dir.path(),
            Arc::new(tap_secrets::MemoryBackend::new()),
        ))
        .await
        .unwrap();
        let gateway = engine.gateway().clone();
        // Paused from here: the runtime jumps to the next timer once everything is idle.
        tokio::time::pause();
        let watcher = Arc::new(Mutex::new(Watcher::new(&status(0, 0), &[])));
        let t0 = Instant::now();
        watcher
            .lock()
            .unwrap()
            .on_event(&pending("pr-1"), t0, no_status);
        let (_failure_tx, failure_rx) = tokio::sync::mpsc::unbounded_channel();
        let (applied_tx, mut applied) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(follow(
            gateway.clone(),
            watcher,
            gateway.subscribe(),
            failure_rx,
            move |actions| {
                let _ = applied_tx.send(actions);
            },
        ));
        let actions = applied.recv().await.unwrap();
        assert_eq!(actions, vec![note("pr-1")]);
        assert!(Instant::now() >= t0 + popup::NOTIFY_AFTER);
        task.abort();
        engine.stop().await;
    }

    #[test]
    fn the_popup_hides_when_the_last_request_is_resolved_anywhere() {
        let mut w = Watcher::new(
            &status(0, 0),
            &[
                entry("pr-1", PairingState::Pending),
                entry("pr-2", PairingState::Pending),
                entry("pr-0", PairingState::Paired),
            ],
        );
        assert_eq!(w.summary().pending, 2);
        // Paired (the code was typed): one left, the popup stays.
        assert_eq!(
            w.on_event(
                &GatewayEvent::PairingChanged(Box::new(entry("pr-1", PairingState::Paired))),
                Instant::now(),
                no_status
            ),
            vec![Action::UpdateTray]
        );
        // Denied from the CLI: none left.
        assert_eq!(
            w.on_event(
                &GatewayEvent::PairingRemoved {
                    id: "pr-2".into(),
                    reason: "denied".into()
                },
                Instant::now(),
                no_status
            ),
            vec![Action::UpdateTray, Action::HidePopup]
        );
        // A paired provider revoked later changes nothing here.
        assert_eq!(
            w.on_event(
                &GatewayEvent::PairingRemoved {
                    id: "pr-0".into(),
                    reason: "revoked".into()
                },
                Instant::now(),
                no_status
            ),
            vec![]
        );
    }

    #[test]
    fn status_changes_update_the_counts_only_when_they_changed() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        assert_eq!(
            w.on_event(&GatewayEvent::StatusChanged, Instant::now(), || status(
                1, 2
            )),
            vec![Action::UpdateTray]
        );
        assert_eq!(w.summary().sessions, 1);
        assert_eq!(w.summary().providers, 2);
        assert_eq!(
            w.on_event(&GatewayEvent::StatusChanged, Instant::now(), || status(
                1, 2
            )),
            vec![]
        );
    }

    #[test]
    fn failures_ask_for_attention_until_the_panel_is_opened() {
        let mut w = Watcher::new(&status(0, 1), &[]);
        let actions = w.on_failure(&ProviderFailure("provider process exited".into()));
        assert_eq!(
            actions,
            vec![
                Action::UpdateTray,
                Action::Notify(notify::provider_failure("provider process exited"))
            ]
        );
        assert_eq!(w.summary().state(), crate::tray_state::TrayState::Attention);
        assert_eq!(w.failures_seen(), vec![Action::UpdateTray]);
        assert_eq!(w.summary().state(), crate::tray_state::TrayState::Connected);
        assert_eq!(w.failures_seen(), vec![]);
    }

    #[tokio::test]
    async fn follow_carries_a_running_engines_failures_to_apply() {
        use crate::engine::{Engine, StartOptions};
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::start(StartOptions::for_tests(
            dir.path(),
            Arc::new(tap_secrets::MemoryBackend::new()),
        ))
        .await
        .unwrap();
        let gateway = engine.gateway().clone();
        let events = gateway.subscribe();
        let watcher = Arc::new(Mutex::new(Watcher::new(
            &Snapshot::of(&gateway),
            &gateway.pairing_list(),
        )));
        let (failure_tx, failure_rx) = tokio::sync::mpsc::unbounded_channel();
        let (applied_tx, mut applied) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(follow(
            gateway,
            watcher.clone(),
            events,
            failure_rx,
            move |actions| {
                let _ = applied_tx.send(actions);
            },
        ));
        failure_tx
            .send(ProviderFailure("provider process exited".into()))
            .unwrap();
        let actions = tokio::time::timeout(std::time::Duration::from_secs(10), applied.recv())
            .await
            .expect("actions within 10 s")
            .unwrap();
        assert_eq!(
            actions,
            vec![
                Action::UpdateTray,
                Action::Notify(notify::provider_failure("provider process exited"))
            ]
        );
        assert_eq!(watcher.lock().unwrap().summary().failures, 1);
        task.abort();
        engine.stop().await;
    }

    #[test]
    fn a_resync_announces_requests_missed_and_hides_the_popup_when_none_is_left() {
        let mut w = Watcher::new(&status(0, 0), &[entry("pr-1", PairingState::Pending)]);
        let actions = w.resync(
            &status(0, 0),
            &[entry("pr-2", PairingState::Pending)],
            Instant::now(),
        );
        assert_eq!(actions, vec![Action::UpdateTray, Action::ShowPopup]);
        assert_eq!(
            w.resync(&status(0, 0), &[], Instant::now()),
            vec![Action::UpdateTray, Action::HidePopup]
        );
    }
}

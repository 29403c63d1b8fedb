//! Tool-call approvals as the tray follows them (`docs/approvals.md`, "From the tray"): the
//! calls waiting for the user, the popup that shows them (the pairing popup's window, whose
//! page lists both), and their notifications. The popup opening by itself is the prompt, as
//! for pairing: a call notifies only when the popup cannot be shown, or when it still waits
//! [`crate::popup::NOTIFY_AFTER`] after it arrived (the user was away; the gateway denies it
//! at its deadline, 120 s by default).

use super::{Action, Watcher};
use crate::notify::{Note, NoteAction};
use crate::popup;
use std::collections::BTreeMap;
use tap_gateway::Gateway;
use tap_protocol::approvals::{AnswerScope, ApprovalApprove, ApprovalDeny, WaitingCall};
use tokio::time::Instant;

/// A waiting call, as the desktop follows it.
#[derive(Debug)]
struct Asked {
    since: Instant,
    notified: bool,
    note: Note,
}

/// The calls waiting for the user's answer, by approval id.
#[derive(Debug, Default)]
pub(super) struct ApprovalWatch {
    waiting: BTreeMap<String, Asked>,
}

impl ApprovalWatch {
    /// How many calls wait.
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// When the first reminder is due (a call still waiting `after` it arrived).
    pub(super) fn next_reminder(&self, after: std::time::Duration) -> Option<Instant> {
        let due = self.waiting.values().filter(|a| !a.notified);
        due.map(|a| a.since + after).min()
    }

    /// The reminders due at `now`, each call's once.
    pub(super) fn remind(
        &mut self,
        now: Instant,
        shown: popup::PopupShown,
        after: std::time::Duration,
    ) -> Vec<Action> {
        let mut actions = vec![];
        for (id, a) in self.waiting.iter_mut() {
            let waited = now.saturating_duration_since(a.since);
            if popup::should_notify(shown, waited, a.notified, after) {
                a.notified = true;
                let (id, note) = (id.clone(), a.note.clone());
                actions.push(Action::NotifyCall { id, note });
            }
        }
        actions
    }
}

/// A waiting call's notification. It names the tool, who offers it and the session, never
/// the arguments: a notification can be shown on a lock screen, mirrored to a phone or kept
/// in a history, and arguments can carry secrets (the popup shows them, masked).
pub fn approval_waiting(call: &WaitingCall) -> Note {
    let session = call.session_label.as_deref().unwrap_or(&call.session_id);
    let client = call
        .client
        .as_deref()
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    Note {
        summary: format!("Tap: {} wants to run {}", session, call.tool),
        body: format!(
            "{} from {}, session {session}{client}. Approve or deny it in the Tap tray popup, or with `tap approvals approve {}`. Unanswered, it is denied at its deadline.",
            call.tool, call.provider, call.id
        ),
    }
}

/// A waiting call's notification buttons (action key, label): the popup's answers.
pub const NOTIFICATION_ACTIONS: &[NoteAction] = &[
    ("approve-once", "Approve once"),
    ("approve-session", "For this session"),
    ("approve-hour", "For 1 hour"),
    ("approve-always", "Always"),
    ("deny", "Deny"),
];

/// Answers call `id` as the notification's button `key` says, through the gateway the app
/// hosts (the same `approvals.approve`/`approvals.deny` as the popup's). A call answered
/// meanwhile elsewhere gets the gateway's `NOT_FOUND`, logged.
pub fn answer_from_notification(gateway: &Gateway, id: &str, key: &str) {
    let approve = |scope, minutes| ApprovalApprove {
        id: id.to_string(),
        scope,
        minutes,
        args_pattern: Vec::new(),
    };
    let answered = match key {
        "approve-once" => gateway.approvals_approve(&approve(AnswerScope::Call, None)),
        "approve-session" => gateway.approvals_approve(&approve(AnswerScope::Session, None)),
        "approve-hour" => gateway.approvals_approve(&approve(AnswerScope::Minutes, Some(60))),
        "approve-always" => gateway.approvals_approve(&approve(AnswerScope::Always, None)),
        "deny" => gateway.approvals_deny(&ApprovalDeny {
            id: id.to_string(),
            remember: None,
            minutes: None,
        }),
        _ => return,
    };
    match answered {
        Ok(_) => tracing::info!(id, answer = key, "tool call answered from its notification"),
        Err(e) => {
            tracing::warn!(id, answer = key, error = %e, "could not answer the tool call from its notification")
        }
    }
}

impl Watcher {
    /// Calls already waiting when the desktop starts following (none in a fresh gateway):
    /// counted, not announced.
    pub fn with_waiting_calls(mut self, calls: &[WaitingCall]) -> Self {
        let now = Instant::now();
        for call in calls {
            let note = approval_waiting(call);
            let asked = Asked {
                since: now,
                notified: true,
                note,
            };
            self.approvals.waiting.insert(call.id.clone(), asked);
        }
        self
    }

    /// A call started waiting: the tray, the popup, and a notification if the rule says so.
    pub(super) fn call_waiting(&mut self, call: &WaitingCall, now: Instant) -> Vec<Action> {
        if self.approvals.waiting.contains_key(&call.id) {
            return vec![];
        }
        let mut actions = vec![Action::UpdateTray];
        let note = approval_waiting(call);
        let zero = std::time::Duration::ZERO;
        let notified = popup::should_notify(self.popup, zero, false, self.notify_after);
        if notified {
            let (id, note) = (call.id.clone(), note.clone());
            actions.push(Action::NotifyCall { id, note });
        }
        let asked = Asked {
            since: now,
            notified,
            note,
        };
        self.approvals.waiting.insert(call.id.clone(), asked);
        actions.push(Action::ShowPopup);
        actions
    }

    /// A call was answered (here, in the panel, from the CLI), timed out, or its caller went
    /// away: the popup closes when nothing else waits in it.
    pub(super) fn call_resolved(&mut self, id: &str) -> Vec<Action> {
        if self.approvals.waiting.remove(id).is_none() {
            return vec![];
        }
        let mut actions = vec![Action::UpdateTray];
        if self.nothing_waits() {
            actions.push(Action::HidePopup);
        }
        actions
    }

    /// Whether the popup has nothing to show (no pairing request, no waiting call).
    pub(super) fn nothing_waits(&self) -> bool {
        self.pending.is_empty() && self.approvals.is_empty()
    }

    /// After a lag: the waiting calls as the gateway lists them now. New ones are announced
    /// (the popup opens), gone ones dropped (the popup closes when nothing waits).
    pub fn resync_calls(&mut self, calls: &[WaitingCall], now: Instant) -> Vec<Action> {
        let was_waiting = !self.nothing_waits();
        let ids: std::collections::BTreeSet<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        self.approvals
            .waiting
            .retain(|id, _| ids.contains(id.as_str()));
        let mut actions = vec![];
        for call in calls {
            actions.extend(self.call_waiting(call, now));
        }
        if actions.is_empty() && was_waiting && self.nothing_waits() {
            actions = vec![Action::UpdateTray, Action::HidePopup];
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::status;
    use super::*;
    use crate::popup::PopupShown;
    use tap_gateway::GatewayEvent;
    use tap_protocol::approvals::ApprovalOutcome;

    fn call(id: &str) -> WaitingCall {
        serde_json::from_value(serde_json::json!({
            "id": id, "tool": "deploy", "provider": "ops", "sessionId": "s-1",
            "sessionLabel": "PR 42", "client": "claude-code",
            "args": {"token": "ghp_secret"}, "annotations": {"destructiveHint": true},
            "why": "default: destructiveHint", "since": "2026-11-29T07:00:00Z",
            "deadline": "2026-11-29T07:02:00Z"
        }))
        .unwrap()
    }

    fn waiting(id: &str) -> GatewayEvent {
        GatewayEvent::ApprovalWaiting(Box::new(call(id)))
    }

    fn resolved(id: &str) -> GatewayEvent {
        GatewayEvent::ApprovalResolved {
            id: id.into(),
            outcome: ApprovalOutcome::Approved,
        }
    }

    fn no_status() -> crate::mcp_watch::Snapshot {
        panic!("status must not be fetched for approval events")
    }

    #[test]
    fn a_waiting_call_opens_the_popup_counts_in_the_tray_and_notifies_only_after_a_while() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        let actions = w.on_event(&waiting("a-1"), t0, no_status);
        assert_eq!(actions, vec![Action::UpdateTray, Action::ShowPopup]);
        assert_eq!(w.summary().approvals, 1);
        assert_eq!(w.summary().state(), crate::tray_state::TrayState::Attention);
        // The same call announced again is no news.
        assert_eq!(w.on_event(&waiting("a-1"), t0, no_status), vec![]);
        let due = t0 + popup::NOTIFY_AFTER;
        assert_eq!(w.next_reminder(), Some(due));
        assert_eq!(
            w.remind(due),
            vec![Action::NotifyCall {
                id: "a-1".into(),
                note: approval_waiting(&call("a-1"))
            }]
        );
        assert_eq!(w.remind(due + popup::NOTIFY_AFTER), vec![]);
    }

    #[test]
    fn the_popup_closes_when_neither_a_call_nor_a_pairing_request_waits() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        w.on_event(&waiting("a-1"), t0, no_status);
        w.on_event(&waiting("a-2"), t0, no_status);
        assert_eq!(
            w.on_event(&resolved("a-1"), t0, no_status),
            vec![Action::UpdateTray]
        );
        assert_eq!(
            w.on_event(&resolved("a-2"), t0, no_status),
            vec![Action::UpdateTray, Action::HidePopup]
        );
        // Resolved twice (answered here and timed out): nothing more.
        assert_eq!(w.on_event(&resolved("a-2"), t0, no_status), vec![]);
        assert_eq!(w.summary().approvals, 0);
    }

    #[test]
    fn without_a_popup_a_waiting_call_notifies_at_once_and_never_shows_its_arguments() {
        let mut w = Watcher::new(&status(0, 0), &[]);
        let t0 = Instant::now();
        assert_eq!(w.set_popup(PopupShown::No, t0), vec![]);
        let note = approval_waiting(&call("a-1"));
        assert_eq!(
            w.on_event(&waiting("a-1"), t0, no_status),
            vec![
                Action::UpdateTray,
                Action::NotifyCall {
                    id: "a-1".into(),
                    note: note.clone()
                },
                Action::ShowPopup
            ]
        );
        assert_eq!(note.summary, "Tap: PR 42 wants to run deploy");
        assert!(
            note.body.contains("tap approvals approve a-1"),
            "{}",
            note.body
        );
        assert!(note.body.contains("ops") && note.body.contains("claude-code"));
        assert!(
            !note.body.contains("ghp_secret"),
            "arguments stay out: {}",
            note.body
        );
    }

    #[test]
    fn calls_waiting_at_start_are_counted_and_a_resync_follows_the_gateways_list() {
        let mut w = Watcher::new(&status(0, 0), &[]).with_waiting_calls(&[call("a-1")]);
        assert_eq!(w.summary().approvals, 1);
        assert_eq!(w.next_reminder(), None, "not announced");
        let t0 = Instant::now();
        assert_eq!(
            w.resync_calls(&[call("a-2")], t0),
            vec![Action::UpdateTray, Action::ShowPopup]
        );
        assert_eq!(w.summary().approvals, 1);
        assert_eq!(
            w.resync_calls(&[], t0),
            vec![Action::UpdateTray, Action::HidePopup]
        );
        assert_eq!(w.resync_calls(&[], t0), vec![]);
    }
}

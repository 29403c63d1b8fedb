//! A resume: this connection takes an existing host over, with its sessions, what was
//! kept for it while it was away, and one answer for each call it says it still waits on.

use super::HostConn;
use crate::socket::frame::frame;
use crate::state::answers::frame_answer_key;
use crate::state::State;
use std::collections::HashSet;
use tap_protocol::host::{HostAuthOk, HostEvent, HostToolResult, SessionTools};
use tap_protocol::limits::HOST_RECENT_ANSWERS;
use tap_protocol::{ErrorCode, HOST_PROTOCOL_VERSION};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::sessions::host_conn::resume";

impl HostConn {
    /// Attaches host `id` to this connection and sends, in order: `auth.ok`, the outbox,
    /// each resumed session's current tool set (the old socket may have lost the last
    /// one), then for each of `pending` that is neither running nor answered by the outbox,
    /// the answer kept for it or a `DISCONNECTED` result. Returns the new epoch and the
    /// sessions taken back.
    pub(super) fn take_over(
        &self,
        state: &mut State,
        id: &str,
        pending: Option<Vec<String>>,
    ) -> (u64, Vec<String>) {
        let default_timeout = self.core.config.default_tool_timeout;
        let state = &mut *state;
        let host = state.hosts.get_mut(id).expect("found by the caller");
        // A resume takes the host over from any connection still holding it; that
        // connection runs no more calls (`invoke` checks the epoch).
        host.kill.cancel();
        host.kill = self.kill.clone();
        host.epoch += 1;
        host.out = Some(self.out.clone());
        let sessions: Vec<String> = host.sessions.iter().cloned().collect();
        let ok = HostEvent::AuthOk(HostAuthOk {
            protocol_version: HOST_PROTOCOL_VERSION,
            host_id: id.to_string(),
            resume_token: host.resume_token.clone(),
            resumed: sessions.clone(),
        });
        let _ = self.out.send(frame(&ok));
        if host.dropped > 0 {
            tracing::warn!(target: LOG_TARGET, host = %id, dropped = host.dropped, "host outbox overflowed while detached");
        }
        let listed = pending.is_some();
        let mut answered: HashSet<String> = HashSet::new();
        // Held already: requeued whatever the queue's limits (see `requeue`).
        for (m, _) in host.outbox.drain(..) {
            if listed {
                if let Some(call) = frame_answer_key(&m) {
                    answered.insert(call);
                }
            }
            let _ = self.out.requeue(m);
        }
        for s in &sessions {
            if let Some(session) = state.sessions.get(s) {
                host.send(&HostEvent::SessionTools(SessionTools {
                    session_id: s.clone(),
                    revision: session.tool_revision,
                    tools: session.host_tools(default_timeout),
                }));
            }
        }
        let (mut resent, mut lost) = (0, 0);
        for call in distinct(pending.unwrap_or_default()) {
            if answered.contains(&call) || host.invocations.contains_key(&call) {
                continue; // in the outbox, or still running: its answer comes as usual
            }
            match host.answers.get(&call) {
                Some(kept) => {
                    resent += 1;
                    let _ = self.out.requeue(kept.clone());
                }
                None => {
                    lost += 1;
                    host.send(&HostEvent::ToolResult(lost_answer(call)));
                }
            }
        }
        let epoch = host.epoch;
        // Last: the deliveries that waited for this host, each session's in order.
        for s in &sessions {
            crate::state::delivery_queue::flush(state, s);
        }
        tracing::info!(target: LOG_TARGET, host = %id, sessions = sessions.len(), resent, lost, "session host resumed");
        (epoch, sessions)
    }
}

/// Each call once, in the order listed.
pub(super) fn distinct(calls: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    calls
        .into_iter()
        .filter(|c| seen.insert(c.clone()))
        .collect()
}

/// The answer for a call the gateway holds nothing for.
fn lost_answer(call_id: String) -> HostToolResult {
    let error = format!(
        "No answer is kept for call '{call_id}': either it never ran (it did not reach \
         the gateway before the connection dropped, or came on the old connection after \
         this resume), or it was answered more than {HOST_RECENT_ANSWERS} answers ago"
    );
    disconnected(call_id, error)
}

/// The answer for a call listed by a host whose resume found it gone.
pub(super) fn gone_answer(call_id: String) -> HostToolResult {
    let error = format!(
        "Call '{call_id}' belonged to a host that is gone (its resume window passed, or \
         the gateway restarted); it was cancelled if it was still running"
    );
    disconnected(call_id, error)
}

fn disconnected(call_id: String, error: String) -> HostToolResult {
    HostToolResult {
        call_id,
        data: None,
        error: Some(error),
        error_code: Some(ErrorCode::Disconnected),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_peer::{connect, frame, next};
    use serde_json::json;

    /// The old connection reads a `tool.invoke` after a resume took its host over (its
    /// socket was still open). Over real sockets the old one is usually closed first, so
    /// this order is set up directly: the call must not run, since the resume already
    /// answered it `DISCONNECTED`.
    #[tokio::test]
    async fn a_call_read_late_from_a_taken_over_connection_does_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let core = crate::state::test_core(dir.path(), |_| {});
        let auth = json!({"type": "auth", "token": "htk-test", "protocolVersion": 1});
        let (mut old, mut old_rx) = connect(&core);
        frame(&mut old, auth.clone());
        let token = next(&mut old_rx, "auth.ok").await["resumeToken"].clone();
        frame(
            &mut old,
            json!({"type": "session.register", "requestId": "r", "sessionId": "s", "cwd": "/tmp"}),
        );
        next(&mut old_rx, "session.registered").await;

        let (mut new, mut new_rx) = connect(&core);
        let mut resume = auth;
        resume["resumeToken"] = token;
        resume["pendingCalls"] = json!(["late"]);
        frame(&mut new, resume);
        let answer = next(&mut new_rx, "tool.result").await;
        assert_eq!(answer["callId"], "late");
        assert_eq!(answer["errorCode"], "DISCONNECTED");

        frame(
            &mut old,
            json!({"type": "tool.invoke", "callId": "late", "sessionId": "s", "tool": "tap_streams", "args": {}}),
        );
        let state = core.state();
        let host = state.hosts.values().next().expect("the host");
        assert!(host.invocations.is_empty(), "the late call started");
        drop(state);
        core.stopping.cancel();
    }
}

//! The socket is gone: a host without sessions is forgotten, one with sessions keeps
//! them for the resume window.

use super::HostConn;
use crate::sessions::lifecycle;
use tokio_tungstenite::tungstenite::Message;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::sessions::host_conn::detach";

impl HostConn {
    /// The socket is gone. A host without sessions is forgotten (its calls cancelled); a
    /// host with sessions keeps them for the resume window, then they end.
    pub(super) fn detach(&self, unsent: Vec<Message>) {
        let remote = self.remote;
        let Some((id, epoch)) = self.attached.clone() else {
            return;
        };
        let mut state = self.core.state();
        let Some(host) = state.hosts.get_mut(&id) else {
            return;
        };
        if host.epoch != epoch {
            // Another connection resumed this host. What this socket did not write is
            // not sent again as such: the answers in it are kept (`HostEntry::answers`)
            // for the calls the resume listed, and the resume sent fresh tool sets.
            return;
        }
        host.out = None;
        for m in unsent.into_iter().rev() {
            host.outbox.push_front((m, false));
        }
        if host.sessions.is_empty() {
            let host = state.hosts.remove(&id).expect("present");
            for t in host.invocations.values() {
                t.cancel();
            }
            tracing::debug!(target: LOG_TARGET, host = %id, %remote, "session host disconnected");
            return;
        }
        drop(state);
        let grace = self.core.config.host_resume_grace;
        tracing::info!(target: LOG_TARGET, host = %id, grace_s = grace.as_secs(), "session host dropped; its sessions wait for it to resume");
        let core = self.core.clone();
        let stopping = core.stopping.clone();
        self.core.tasks.spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(grace) => {}
                _ = stopping.cancelled() => return,
            }
            let sessions = {
                let mut state = core.state();
                let still_gone = state
                    .hosts
                    .get(&id)
                    .is_some_and(|h| h.epoch == epoch && h.out.is_none());
                if !still_gone {
                    return;
                }
                let host = state.hosts.remove(&id).expect("present");
                for t in host.invocations.values() {
                    t.cancel();
                }
                host.sessions
            };
            let endings = sessions.into_iter().map(|s| {
                lifecycle::end_session(&core, s, None, "its host did not come back".into())
            });
            futures_util::future::join_all(endings).await;
        });
    }
}

//! `auth`: a new host identity, or a resume that takes an existing one over (with its
//! sessions and the messages kept for it while it was away).

use super::HostConn;
use crate::auth::tokens;
use crate::sessions::hosts::HostEntry;
use crate::socket::frame::frame;
use tap_protocol::host::{HostAuth, HostAuthOk, HostEvent};
use tap_protocol::{ErrorCode, HOST_PROTOCOL_VERSION};

impl HostConn {
    pub(super) fn on_auth(&mut self, a: HostAuth) -> bool {
        if a.protocol_version != HOST_PROTOCOL_VERSION {
            self.reply_direct(
                ErrorCode::UnsupportedVersion,
                &format!(
                    "This gateway speaks session-host protocolVersion {HOST_PROTOCOL_VERSION}; got {}",
                    a.protocol_version
                ),
                Some("auth"),
            );
            return false;
        }
        if !tokens::matches(&a.token, &self.core.secrets.host_token) {
            self.reply_direct(ErrorCode::AuthFailed, "Invalid host token", Some("auth"));
            return false;
        }
        let mut state = self.core.state();
        let resumed = a.resume_token.as_deref().and_then(|t| {
            state
                .hosts
                .values()
                .find(|h| tokens::matches(t, &h.resume_token))
                .map(|h| h.id.clone())
        });
        let (id, epoch, resumed_sessions) = match resumed {
            Some(id) => {
                let host = state.hosts.get_mut(&id).expect("found above");
                // A resume takes the host over from any connection still holding it.
                host.kill.cancel();
                host.kill = self.kill.clone();
                host.epoch += 1;
                host.out = Some(self.out.clone());
                let ok = HostEvent::AuthOk(HostAuthOk {
                    protocol_version: HOST_PROTOCOL_VERSION,
                    host_id: id.clone(),
                    resume_token: host.resume_token.clone(),
                    resumed: host.sessions.iter().cloned().collect(),
                });
                let _ = self.out.send(frame(&ok));
                if host.dropped > 0 {
                    tracing::warn!(host = %id, dropped = host.dropped, "host outbox overflowed while detached");
                }
                // Held already: requeued whatever the queue's limits (see `requeue`).
                for (m, _) in host.outbox.drain(..) {
                    let _ = self.out.requeue(m);
                }
                let sessions: Vec<String> = host.sessions.iter().cloned().collect();
                (id, host.epoch, sessions)
            }
            None => {
                let id = crate::ids::short("h");
                let host = HostEntry::new(
                    id.clone(),
                    a.host_name.clone().unwrap_or_else(|| "host".into()),
                    self.out.clone(),
                    self.kill.clone(),
                );
                let ok = HostEvent::AuthOk(HostAuthOk {
                    protocol_version: HOST_PROTOCOL_VERSION,
                    host_id: id.clone(),
                    resume_token: host.resume_token.clone(),
                    resumed: Vec::new(),
                });
                let _ = self.out.send(frame(&ok));
                state.hosts.insert(id.clone(), host);
                (id, 1, Vec::new())
            }
        };
        drop(state);
        tracing::debug!(host = %id, name = ?a.host_name, resumed = ?resumed_sessions, "session host connected");
        self.attached = Some((id, epoch));
        true
    }
}

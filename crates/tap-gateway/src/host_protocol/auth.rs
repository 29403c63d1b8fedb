//! `auth`: a new host identity, or a resume that takes an existing one over (`resume`).

use super::{resume, HostConn};
use crate::auth::tokens;
use crate::socket::frame::frame;
use crate::state::host::HostEntry;
use tap_protocol::host::{HostAuth, HostAuthOk, HostEvent};
use tap_protocol::limits::MAX_RESUME_PENDING_CALLS;
use tap_protocol::{ErrorCode, HOST_PROTOCOL_VERSION};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::sessions::host_conn::auth";

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
        let listed = a.pending_calls.as_ref().map_or(0, Vec::len);
        if listed > MAX_RESUME_PENDING_CALLS {
            self.reply_direct(
                ErrorCode::PayloadTooLarge,
                &format!("'pendingCalls' lists {listed} calls; at most {MAX_RESUME_PENDING_CALLS}"),
                Some("auth"),
            );
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
                let (epoch, sessions) = self.take_over(&mut state, &id, a.pending_calls);
                (id, epoch, sessions)
            }
            None => {
                let id = crate::ids::short("h");
                let mut host = HostEntry::new(
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
                // Listed calls of a host that is gone (its window passed, or another
                // gateway run): each still gets its one answer.
                for call in resume::distinct(a.pending_calls.unwrap_or_default()) {
                    host.send(&HostEvent::ToolResult(resume::gone_answer(call)));
                }
                state.hosts.insert(id.clone(), host);
                (id, 1, Vec::new())
            }
        };
        drop(state);
        tracing::debug!(target: LOG_TARGET, host = %id, name = ?a.host_name, resumed = ?resumed_sessions, "session host connected");
        self.attached = Some((id, epoch));
        true
    }
}

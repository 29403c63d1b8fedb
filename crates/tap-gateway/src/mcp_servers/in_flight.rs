//! A run's calls in flight, and whom a server's own requests go to.
//!
//! A server may ask for a model's answer (`sampling/createMessage`) or the user's
//! (`elicitation/create`) while it runs a call. Over stdio nothing says which call a
//! request belongs to, so it goes to the session of the newest call in flight (a project
//! server has one session anyway), and there to the newest MCP client of that session that
//! declared the capability.

use crate::state::mcp_binding::{ClientAsk, ClientAsker, Notice};
use crate::state::mcp_server_peers::{tell_sessions, Entry};
use crate::state::Core;
use rmcp::model::ProgressToken;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub(crate) struct InFlight {
    /// Call id → its cancellation.
    pub cancels: HashMap<String, CancellationToken>,
    /// Progress token → call id.
    pub progress: HashMap<ProgressToken, String>,
    /// (call id, session id), oldest first.
    pub sessions: Vec<(String, String)>,
    /// Call id → its trace id (from its `traceparent`): whose request stream an ask of the
    /// server during the call belongs to.
    pub traces: HashMap<String, u128>,
}

impl InFlight {
    /// Forgets a finished call; `false` if it was already gone (the run answered it).
    pub fn finish(&mut self, id: &str) -> bool {
        self.progress.retain(|_, call| call != id);
        self.sessions.retain(|(call, _)| call != id);
        self.traces.remove(id);
        self.cancels.remove(id).is_some()
    }
}

/// Finds who answers a server's request, and whom its notifications concern.
#[derive(Clone)]
pub(crate) struct Router {
    pub core: Arc<Core>,
    /// The server's name.
    pub server: String,
    /// A project server's session.
    pub session: Option<String>,
    pub in_flight: Arc<Mutex<InFlight>>,
}

impl Router {
    /// Tells the MCP clients of the sessions the server works for now what `notice` says:
    /// a project server's session, else the sessions of its calls in flight.
    pub fn tell_callers(&self, notice: Notice) {
        let sessions: Vec<String> = match &self.session {
            Some(s) => vec![s.clone()],
            None => {
                let in_flight = self.in_flight.lock().unwrap();
                in_flight.sessions.iter().map(|(_, s)| s.clone()).collect()
            }
        };
        if sessions.is_empty() {
            return;
        }
        let state = self.core.state();
        for binding in state.mcp.values() {
            if sessions.contains(&binding.session_id) {
                binding.notify(notice.clone());
            }
        }
    }

    /// Tells the MCP clients of the sessions that see the server what `notice` makes of its
    /// facade entry (nothing while the server offers no prompts or resources).
    pub fn tell(&self, notice: impl FnOnce(&Entry) -> Notice) {
        let peers = &self.core.mcp_server_peers;
        if let Some(e) = peers.find(&self.server, self.session.as_deref()) {
            tell_sessions(&self.core, &e, &notice(&e));
        }
    }

    pub fn asker(&self, ask: ClientAsk) -> Result<Arc<dyn ClientAsker>, String> {
        let sessions: Vec<String> = match &self.session {
            Some(s) => vec![s.clone()],
            None => {
                let in_flight = self.in_flight.lock().unwrap();
                in_flight
                    .sessions
                    .iter()
                    .rev()
                    .map(|(_, s)| s.clone())
                    .collect()
            }
        };
        let what = match ask {
            ClientAsk::Sampling => "sampling/createMessage ('sampling')",
            ClientAsk::Elicitation => "elicitation/create ('elicitation')",
        };
        if sessions.is_empty() {
            return Err(format!(
                "the gateway forwards {what} only during a call of one of the server's tools"
            ));
        }
        // The client that made the newest call in flight, on that call's own stream. (The
        // table's lock is let go before the state's is taken.)
        let calls: Vec<(String, u128)> = {
            let in_flight = self.in_flight.lock().unwrap();
            in_flight
                .sessions
                .iter()
                .rev()
                .filter_map(|(call, s)| Some((s.clone(), *in_flight.traces.get(call)?)))
                .collect()
        };
        let state = self.core.state();
        for (session, trace) in &calls {
            let found = state
                .mcp
                .values()
                .filter(|b| b.session_id == *session)
                .find_map(|b| b.call_asker(*trace, ask));
            if let Some(asker) = found {
                return Ok(asker);
            }
        }
        for session in &sessions {
            let found = state
                .mcp
                .values()
                .filter(|b| b.session_id == *session)
                .find_map(|b| b.asker(ask));
            if let Some(asker) = found {
                return Ok(asker);
            }
        }
        Err(format!(
            "no MCP client of the calling session can answer {what}: none declared the capability (session hosts such as the Copilot extension cannot answer it)"
        ))
    }
}

//! The `initialize` generation's MCP sessions over HTTP, as the endpoint's own answer to a
//! plain `tools/call` needs them (`fast_session.rs`): which gateway binding an
//! `Mcp-Session-Id` uses, the version it negotiated, its calls in flight (so a
//! `notifications/cancelled` finds them), and when rmcp last saw one of its requests.
//!
//! rmcp owns the session: it creates it at `initialize`, ends it at `DELETE` or after
//! [`MCP_SESSION_IDLE_TIMEOUT`] without a request, and drops its handler then, which takes
//! the entry out of here. A session is entered when its client says `initialized` (the
//! first request that carries the session's id).

use super::attach::Presence;
use crate::limits::RMCP_TOUCH_INTERVAL;
use crate::state::mcp_binding::{Binding, Target};
use crate::state::Core;
use rmcp::model::{ProtocolVersion, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::ErrorData as McpError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One MCP client's hold on its gateway binding, shared by its rmcp handler and the
/// endpoint's own answers: whichever serves a request first attaches, both use the same.
#[derive(Default)]
pub(crate) struct Attachment {
    presence: Mutex<Option<Presence>>,
}

impl Attachment {
    /// The binding, attaching on first use (and again if the session ended under it: the
    /// next request gets a new one of the same name). `target` names the session then.
    pub fn binding(
        &self,
        core: &Arc<Core>,
        target: impl FnOnce() -> Option<Target>,
    ) -> Result<Arc<Binding>, McpError> {
        let mut slot = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref().filter(|p| !p.binding.gone.is_cancelled()) {
            return Ok(p.binding.clone());
        }
        let target = target().ok_or_else(|| {
            McpError::invalid_request("No gateway session named: use /mcp/<session>", None)
        })?;
        let presence =
            super::attach::attach(core, &target.name, target.cwd, target.profile.as_deref())
                .map_err(super::errors::gateway_error)?;
        let binding = presence.binding.clone();
        *slot = Some(presence);
        Ok(binding)
    }
}

/// One MCP session of the `initialize` generation.
pub(crate) struct Entry {
    pub attachment: Arc<Attachment>,
    /// What `initialize` settled on; a request naming another version is rmcp's to judge.
    pub version: ProtocolVersion,
    /// The client declared `sampling` or `elicitation`: an MCP server may ask it something
    /// during a call (`fast_session::may_ask_the_client`).
    pub can_be_asked: bool,
    /// When rmcp last saw a request of this session.
    touched: Mutex<Instant>,
    /// The endpoint's own calls in flight, by JSON-RPC id.
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
}

impl Entry {
    /// A request of this session goes to rmcp: its idle timer restarts.
    pub fn touch(&self) {
        *self.touched.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Whether rmcp should see the next request, to keep the session alive.
    pub fn due_for_rmcp(&self) -> bool {
        self.touched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            >= RMCP_TOUCH_INTERVAL
    }

    /// A call the endpoint answers: cancelled by a `notifications/cancelled` naming `id`
    /// until the returned guard drops.
    pub fn start_call(self: &Arc<Self>, id: RequestId, cancel: CancellationToken) -> InFlight {
        self.lock_calls().insert(id.clone(), cancel);
        InFlight {
            entry: self.clone(),
            id,
        }
    }

    /// `notifications/cancelled` for `id`: `true` when it was one of the endpoint's calls.
    pub fn cancel(&self, id: &RequestId) -> bool {
        match self.lock_calls().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One of the endpoint's calls, listed for `notifications/cancelled` while it runs.
pub(crate) struct InFlight {
    entry: Arc<Entry>,
    id: RequestId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.entry.lock_calls().remove(&self.id);
    }
}

/// Every MCP session of the `initialize` generation over HTTP, by `Mcp-Session-Id`.
pub(crate) struct Sessions {
    /// rmcp's own record: a session it closed is not answered, even before its handler is
    /// dropped.
    manager: Arc<LocalSessionManager>,
    entries: Mutex<HashMap<Arc<str>, Arc<Entry>>>,
}

impl Sessions {
    pub fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self {
            manager,
            entries: Mutex::default(),
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().get(id).cloned()
    }

    /// Whether rmcp still has session `id`: it closes one (at `DELETE`, or its idle timeout)
    /// a moment before it drops the handler that listed it.
    pub async fn live(&self, id: &str) -> bool {
        self.manager.sessions.read().await.contains_key(id)
    }

    /// Enters session `id` for a handler; the entry leaves when the guard drops (the
    /// handler with it).
    pub fn enter(
        self: &Arc<Self>,
        id: &str,
        attachment: Arc<Attachment>,
        version: ProtocolVersion,
        can_be_asked: bool,
    ) -> Entered {
        let entry = Arc::new(Entry {
            attachment,
            version,
            can_be_asked,
            touched: Mutex::new(Instant::now()),
            calls: Mutex::default(),
        });
        let id: Arc<str> = id.into();
        self.lock().insert(id.clone(), entry.clone());
        Entered {
            sessions: self.clone(),
            id,
            entry,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A handler's session, listed in [`Sessions`] while the handler lives.
pub(crate) struct Entered {
    sessions: Arc<Sessions>,
    id: Arc<str>,
    entry: Arc<Entry>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut entries = self.sessions.lock();
        // Only this handler's own entry (an id is never reused, but a handler entered twice
        // by a repeated `initialized` replaced its first one).
        if entries
            .get(&self.id)
            .is_some_and(|e| Arc::ptr_eq(e, &self.entry))
        {
            entries.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> Arc<Sessions> {
        Arc::new(Sessions::new(Arc::new(LocalSessionManager::default())))
    }

    #[test]
    fn an_entry_leaves_with_its_handler_and_only_its_own() {
        let s = sessions();
        let first = s.enter("a", Arc::default(), ProtocolVersion::V_2025_11_25, false);
        let second = s.enter("a", Arc::default(), ProtocolVersion::V_2025_11_25, false);
        drop(first);
        assert!(s.get("a").is_some(), "the newer entry stays");
        drop(second);
        assert!(s.get("a").is_none());
    }

    #[test]
    fn a_cancel_reaches_a_call_in_flight_and_nothing_after_it() {
        let s = sessions();
        let _entered = s.enter("a", Arc::default(), ProtocolVersion::V_2025_11_25, false);
        let entry = s.get("a").unwrap();
        let token = CancellationToken::new();
        let call = entry.start_call(RequestId::Number(7), token.clone());
        assert!(!entry.cancel(&RequestId::Number(8)));
        assert!(entry.cancel(&RequestId::Number(7)));
        assert!(token.is_cancelled());
        drop(call);
        assert!(
            !entry.cancel(&RequestId::Number(7)),
            "a call that ended is unlisted"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn rmcp_sees_a_request_at_least_every_touch_interval() {
        let s = sessions();
        let _entered = s.enter("a", Arc::default(), ProtocolVersion::V_2025_11_25, false);
        let entry = s.get("a").unwrap();
        assert!(!entry.due_for_rmcp());
        tokio::time::advance(RMCP_TOUCH_INTERVAL).await;
        assert!(entry.due_for_rmcp());
        entry.touch();
        assert!(!entry.due_for_rmcp());
    }
}

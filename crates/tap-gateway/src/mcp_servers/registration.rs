//! A server's tools as an in-process provider (`provider_protocol::local`): registered with
//! `hello`, bound to every session (a user server) or to its session (a project server),
//! kept up to date with `tools.update`. A registration outlives the server's process when
//! it is lazy or stopped when idle: its tools stay in the sessions, and the first call
//! starts the process again.

use super::catalog::Catalog;
use super::server::Server;
use crate::provider_protocol::local::LocalProvider;
use crate::state::Core;
use serde_json::json;
use std::collections::HashSet;
use tap_protocol::provider::{
    GatewayMessage, LifecycleState, ProviderMessage, SessionInfo, SessionRef, ToolCall, ToolDef,
    ToolsUpdate,
};

pub(crate) struct Registration {
    pub local: LocalProvider,
    pub provider_id: String,
    /// The tools declared now.
    pub catalog: Catalog,
    /// `sessions` in the entry: the sessions (ids or labels) that see a user server.
    filter: Option<Vec<String>>,
    /// Sessions announced so far, and those of them that see the server.
    seen: HashSet<String>,
    readied: HashSet<String>,
    /// Whether the tools changed since `hello` (a session readied later gets them again).
    changed_since_hello: bool,
}

/// What a registration waiting for its process to start got.
pub(crate) enum Waited {
    /// A call: the process is to start and run it.
    Call(ToolCall),
    /// The server is stopped for good.
    Stopped,
    /// The user asked for a restart.
    Restart,
    /// The gateway closed the provider connection.
    Closed,
}

/// The provider name a server's tools are offered under.
pub(crate) fn provider_name(server: &Server) -> String {
    format!(
        "{}{}",
        crate::profiles::MCP_SERVER_PROVIDER_PREFIX,
        server.spec.name
    )
}

impl Registration {
    /// Connects and sends `hello` with `catalog`'s tools.
    pub async fn register(
        core: &std::sync::Arc<Core>,
        server: &Server,
        catalog: Catalog,
    ) -> Result<Self, String> {
        let mut local = crate::provider_protocol::local::connect(core);
        let provider_id = local.provider_id().to_string();
        // The first message of a local connection is `sessions`.
        let live = match local.recv().await {
            Some(GatewayMessage::Sessions(s)) => s.active,
            _ => Vec::new(),
        };
        let session = server.session_id.clone().unwrap_or_else(|| "all".into());
        let hello = json!({
            "type": "hello",
            "name": provider_name(server),
            "protocolVersion": tap_protocol::PROTOCOL_VERSION,
            "session": session,
            "metadata": {"mcpServer": server.spec.name, "transport": server.spec.transport.kind()},
            "tools": catalog.defs,
        });
        local
            .send_json(&hello)
            .map_err(|_| "the gateway closed its provider connection".to_string())?;
        loop {
            match local.recv().await {
                None => return Err("the gateway closed its provider connection".into()),
                Some(GatewayMessage::HelloAck(_)) => break,
                Some(GatewayMessage::Error(e)) => {
                    return Err(format!("the gateway refused its tools: {}", e.message))
                }
                Some(_) => {}
            }
        }
        let mut reg = Registration {
            local,
            provider_id,
            catalog,
            filter: server.spec.sessions.clone(),
            seen: HashSet::new(),
            readied: HashSet::new(),
            changed_since_hello: false,
        };
        // Binding to "all" registered the tools in every live session: a filtered server
        // leaves the others at once.
        for s in live {
            if reg.sees(&s) {
                reg.readied.insert(s.id.clone());
            } else {
                let _ = reg
                    .local
                    .send(&tools_update(Some(s.id.clone()), Vec::new()));
            }
            reg.seen.insert(s.id);
        }
        Ok(reg)
    }

    fn sees(&self, s: &SessionInfo) -> bool {
        self.filter.as_ref().is_none_or(|l| {
            l.iter()
                .any(|x| *x == s.id || s.label.as_deref() == Some(x.as_str()))
        })
    }

    /// Declares `catalog`'s tools instead of the current ones, if they differ.
    pub fn update_tools(&mut self, catalog: Catalog) {
        if catalog.defs == self.catalog.defs {
            self.catalog = catalog;
            return;
        }
        self.catalog = catalog;
        self.changed_since_hello = true;
        match &self.filter {
            None => {
                let _ = self
                    .local
                    .send(&tools_update(None, self.catalog.defs.clone()));
            }
            Some(_) => {
                for id in &self.readied {
                    let _ = self
                        .local
                        .send(&tools_update(Some(id.clone()), self.catalog.defs.clone()));
                }
            }
        }
    }

    /// Answers the session-scoped messages of an `"all"` binding; `true` if `msg` was one.
    /// A session that opens later gets the tools once it is declared ready (if it sees the
    /// server), and an ending one is let go at once.
    pub fn on_sessions(&mut self, server: &Server, msg: &GatewayMessage) -> bool {
        match msg {
            GatewayMessage::SessionsUpdated(list) if server.session_id.is_none() => {
                for s in &list.active {
                    if !self.seen.insert(s.id.clone()) || !self.sees(s) {
                        continue;
                    }
                    self.readied.insert(s.id.clone());
                    let _ = self.local.send(&ProviderMessage::SessionReady(SessionRef {
                        session_id: s.id.clone(),
                    }));
                    // Ready registers hello's tools; per-session updates since then are
                    // this session's only if sent again.
                    if self.filter.is_some() && self.changed_since_hello {
                        let _ = self
                            .local
                            .send(&tools_update(Some(s.id.clone()), self.catalog.defs.clone()));
                    }
                }
                true
            }
            GatewayMessage::SessionLifecycle(l) if l.state == LifecycleState::ShutdownPending => {
                self.seen.remove(&l.session_id);
                self.readied.remove(&l.session_id);
                let _ = self.local.send(&ProviderMessage::ShutdownReady(SessionRef {
                    session_id: l.session_id.clone(),
                }));
                true
            }
            _ => false,
        }
    }

    /// Waits, with no process running, for a call (or the server's stop or restart).
    pub async fn wait_for_call(&mut self, server: &Server) -> Waited {
        loop {
            tokio::select! {
                _ = server.stop.cancelled() => return Waited::Stopped,
                _ = server.restart.notified() => return Waited::Restart,
                msg = self.local.recv() => match msg {
                    None => return Waited::Closed,
                    Some(GatewayMessage::ToolCall(call)) => return Waited::Call(call),
                    Some(other) => {
                        self.on_sessions(server, &other);
                    }
                },
            }
        }
    }
}

/// A `tools.update` replacing the tool list (of one session, or of every session).
fn tools_update(session_id: Option<String>, tools: Vec<ToolDef>) -> ProviderMessage {
    ProviderMessage::ToolsUpdate(ToolsUpdate {
        request_id: Some(crate::ids::short("tools")),
        session_id,
        tools,
        remove: None,
    })
}

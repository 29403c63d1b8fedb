use crate::providers::{ProviderEntry, ProviderLink};
use crate::tools::call::Route;
use crate::tools::CallError;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::host::{BusyState, HostTool};
use tap_protocol::provider::{SessionInfo, ToolDef};
use tap_protocol::ErrorCode;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// One registered session.
pub(crate) struct Session {
    pub info: SessionInfo,
    pub busy: BusyState,
    /// The host that registered it (and receives its tool sets and deliveries).
    pub host: String,
    /// Bound provider ids, in bind order.
    pub bound: Vec<String>,
    /// Tool name → route, rebuilt whenever a bound provider's tools change.
    pub tools: HashMap<String, ToolEntry>,
    /// Revision of the tool set last published to the host.
    pub tool_revision: u64,
    /// Poked on every tool-set change; the session's debouncer publishes.
    pub toolset_changed: Arc<Notify>,
    /// Ends the session's own tasks (the debouncer).
    pub cancel: CancellationToken,
    /// Set once the session is ending: providers that still owe `goodbye` /
    /// `shutdown.ready`, and a signal for when none do.
    pub ending: Option<Ending>,
}

pub(crate) struct Ending {
    pub waiting: HashSet<String>,
    pub done: Arc<Notify>,
    /// `session.end` requests that came while the session was already ending; each is
    /// answered by its own `session.ended` at teardown.
    pub late_requests: Vec<String>,
}

pub(crate) struct ToolEntry {
    pub def: ToolDef,
    pub provider_id: String,
    pub provider_name: String,
    pub link: ProviderLink,
}

impl Session {
    pub fn is_ending(&self) -> bool {
        self.ending.is_some()
    }

    pub fn route(&self, tool: &str, default_timeout: Duration) -> Result<Route, CallError> {
        let entry = self.tools.get(tool).ok_or_else(|| {
            CallError::new(
                ErrorCode::NotFound,
                format!("No tool '{tool}' in session '{}'", self.info.id),
            )
        })?;
        Ok(Route {
            provider_name: entry.provider_name.clone(),
            link: entry.link.clone(),
            timeout: ProviderEntry::timeout_of(&entry.def, default_timeout),
        })
    }

    /// `TOOL_CONFLICT` if another provider than `provider_id` already holds one of `tools`
    /// in this session (spec: "Two providers CANNOT register the same tool name in the
    /// same session").
    pub fn check_conflicts(
        &self,
        tools: &[ToolDef],
        provider_id: &str,
    ) -> Result<(), (ErrorCode, String)> {
        let taken = tools.iter().find_map(|t| {
            let owner = self.tools.get(&t.name)?;
            (owner.provider_id != provider_id).then_some((&t.name, owner))
        });
        match taken {
            None => Ok(()),
            Some((name, owner)) => Err((
                ErrorCode::ToolConflict,
                format!(
                    "Tool '{name}' already registered by provider '{}' in session '{}'",
                    owner.provider_name, self.info.id
                ),
            )),
        }
    }

    /// Rebuilds the tool map from the bound providers. Called on every bind, unbind and
    /// update; a session holds at most a few hundred tools, so rebuilding is cheap and
    /// cannot drift from the providers' own lists.
    pub fn rebuild_tools(&mut self, providers: &HashMap<String, ProviderEntry>) {
        self.tools.clear();
        for pid in &self.bound {
            let Some(p) = providers.get(pid) else {
                continue;
            };
            for def in p.tools.iter() {
                self.tools
                    .entry(def.name.clone())
                    .or_insert_with(|| ToolEntry {
                        def: def.clone(),
                        provider_id: p.id.clone(),
                        provider_name: p.name.clone().unwrap_or_default(),
                        link: p.link.clone(),
                    });
            }
        }
        self.toolset_changed.notify_one();
    }

    /// The tool set as the host sees it, sorted by name.
    pub fn host_tools(&self, default_timeout: Duration) -> Vec<HostTool> {
        let mut tools: Vec<HostTool> = self
            .tools
            .values()
            .map(|e| HostTool {
                name: e.def.name.clone(),
                description: e.def.description.clone(),
                parameters: e.def.parameters.clone(),
                provider: e.provider_name.clone(),
                provider_id: e.provider_id.clone(),
                timeout_ms: ProviderEntry::timeout_of(&e.def, default_timeout).as_millis() as u64,
            })
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }
}

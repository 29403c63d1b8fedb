//! What the gateway reports about itself: the status snapshot behind `tap status --json`,
//! and the diagnostics report (counters from `crate::diagnostics`, every connection's
//! state read from the registry).

mod connections;
pub(crate) mod diagnostics;

use crate::state::provider_entry::Trust;
use crate::state::tool_entry::ToolKind;
use crate::state::Core;
use tap_protocol::host::{GatewayStatus, ProviderStatus, SessionStatus};

/// A consistent snapshot of sessions and providers.
pub(crate) fn snapshot(core: &Core) -> GatewayStatus {
    let state = core.state();
    let sessions = state
        .session_order
        .iter()
        .filter_map(|id| state.sessions.get(id))
        .map(|s| {
            let host = state.hosts.get(&s.host);
            // What the providers give the session; the built-in `tap_*` tools every
            // session has are not listed here.
            let mut tools: Vec<String> = s
                .tools
                .iter()
                .filter(|(_, e)| !matches!(e.kind, ToolKind::Builtin))
                .map(|(name, _)| name.clone())
                .collect();
            tools.sort();
            SessionStatus {
                id: s.info.id.clone(),
                label: s.info.label.clone(),
                cwd: s.info.cwd.clone(),
                foreground: s.info.foreground.unwrap_or(false),
                state: s.busy,
                host_id: host.map(|h| h.id.clone()),
                host_name: host.map(|h| h.name.clone()),
                host_detached: host.is_some_and(|h| h.out.is_none()),
                tool_revision: s.tool_revision,
                tools,
            }
        })
        .collect();
    let mut providers: Vec<ProviderStatus> = state
        .providers
        .values()
        .map(|p| ProviderStatus {
            id: p.id.clone(),
            name: p.name.clone(),
            instance: p.instance.clone(),
            trust: p.trust.as_str().to_string(),
            state: p.phase.as_str().to_string(),
            // Bound to "all": shown as "all" (its sessions list it as bound).
            session: p
                .session
                .clone()
                .or_else(|| p.all.as_ref().map(|_| "all".into())),
            tools: p.tools.iter().map(|t| t.name.clone()).collect(),
            in_flight: p.link.calls.len(),
            remote: match p.trust {
                Trust::Internal => "local".into(),
                _ => p.remote.to_string(),
            },
            connected_at: crate::time::rfc3339(p.connected_at),
        })
        .collect();
    providers.sort_by(|a, b| a.connected_at.cmp(&b.connected_at).then(a.id.cmp(&b.id)));
    GatewayStatus {
        address: format!("ws://{}", core.address),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: crate::time::rfc3339(core.started_at),
        uptime_ms: core.started.elapsed().as_millis() as u64,
        sessions,
        providers,
        history: Some(core.ledger.state()),
    }
}

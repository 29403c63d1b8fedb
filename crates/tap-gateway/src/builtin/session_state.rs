//! `tap_get_session_state`: the calling session as the gateway sees it now, read-only —
//! what the host reported (mode, model, capabilities: `state::host_report`), its
//! emitters and injectors, the providers bound to it, the tool calls of it waiting for
//! the user, and pending pairing requests. Only this session's: another session's
//! approvals or emitters never appear; lists are bounded ([`MAX_STATE_LISTED`]).

use super::{to_json, Answer};
use crate::limits::MAX_STATE_LISTED;
use crate::state::host::MCP_HOST_PREFIX;
use crate::state::tool_entry::ToolKind;
use crate::state::Core;
use serde_json::json;
use tap_protocol::pairing::PairingState;
use tap_protocol::Json;

pub(super) fn get(core: &Core, session_id: &str) -> Answer {
    // Read under the state lock; the emitters, approvals and pairings after it (each has
    // its own lock, never taken with the state's held here).
    let mut answer = {
        let state = core.state();
        let s = state.live_session(session_id)?;
        let host = state.hosts.get(&s.host);
        let (kind, client) = match host.map(|h| h.name.as_str()) {
            Some(n) if n.starts_with(MCP_HOST_PREFIX) => ("mcp", &n[MCP_HOST_PREFIX.len()..]),
            Some(n) => ("sessionHost", n),
            None => ("sessionHost", ""),
        };
        let capabilities = s.report.capabilities.clone().unwrap_or_default();
        let providers: Vec<Json> = s
            .bound
            .iter()
            .filter_map(|id| state.providers.get(id))
            .map(|p| {
                let tools = s
                    .tools
                    .values()
                    .filter(|e| match &e.kind {
                        ToolKind::Own(h) => h.by.provider_id == p.id,
                        ToolKind::Shared(hs) => hs.iter().any(|h| h.by.provider_id == p.id),
                        _ => false,
                    })
                    .count();
                json!({
                    "id": p.id, "name": p.name, "instance": p.instance,
                    "trust": p.trust.as_str(), "state": p.phase.as_str(),
                    "allSessions": p.all.is_some(), "tools": tools,
                    "callsInFlight": p.link.calls.len(),
                })
            })
            .collect();
        let builtin = s
            .tools
            .values()
            .filter(|e| matches!(e.kind, ToolKind::Builtin))
            .count();
        json!({
            "sessionId": s.info.id,
            "label": s.info.label,
            "cwd": s.info.cwd,
            "foreground": s.info.foreground.unwrap_or(false),
            "state": s.busy,
            "mode": s.report.mode,
            "model": s.report.model,
            "host": {
                "kind": kind,
                "name": client,
                "attached": host.is_some_and(|h| h.out.is_some()),
                "capabilities": capabilities,
                "canChangeMode": !capabilities.modes.is_empty(),
            },
            "profile": s.profile.as_ref().map(|p| p.name.clone()),
            "tools": { "total": s.tools.len(), "gateway": builtin, "revision": s.tool_revision },
            "providers": providers,
        })
    };
    let emitters = crate::emitters::api::list(core, Some(session_id));
    answer["emitters"] = to_json(&emitters.emitters)?;
    if !emitters.warnings.is_empty() {
        answer["emitterWarnings"] = json!(emitters.warnings);
    }
    let injectors: serde_json::Map<String, Json> = core
        .emitters
        .injectors(session_id)
        .into_iter()
        .map(|(stream, i)| (stream, serde_json::to_value(i.policy()).unwrap_or_default()))
        .collect();
    answer["injectors"] = Json::Object(injectors);
    let label = answer["label"].as_str().map(str::to_string);
    // The MCP servers the gateway runs that offer this session prompts or resources
    // (their tools come through `providers`).
    answer["mcpServers"] = core
        .mcp_server_peers
        .for_session(session_id, label.as_deref())
        .iter()
        .map(|e| {
            json!({
                "name": e.server, "project": e.session.is_some(),
                "prompts": e.offers_prompts, "resources": e.offers_resources,
            })
        })
        .collect();
    let waiting: Vec<_> = core
        .approvals
        .waiting
        .list()
        .into_iter()
        .filter(|w| w.session_id == session_id)
        .collect();
    answer["approvalsWaiting"] = json!({
        "count": waiting.len(),
        "calls": waiting.iter().take(MAX_STATE_LISTED).map(|w| json!({
            "id": w.id, "tool": w.tool, "provider": w.provider, "why": w.why,
            "since": w.since, "deadline": w.deadline,
        })).collect::<Vec<_>>(),
    });
    // Pairing requests for this session or for none in particular. Their codes are the
    // user's to read off the provider, never the agent's.
    let pairings: Vec<_> = core
        .state()
        .pairing
        .list()
        .into_iter()
        .filter(|p| p.state == PairingState::Pending)
        .filter(|p| p.session.as_deref().is_none_or(|s| s == session_id))
        .collect();
    answer["pairingsPending"] = json!({
        "count": pairings.len(),
        "requests": pairings.iter().take(MAX_STATE_LISTED).map(|p| json!({
            "id": p.id, "name": p.name, "origin": p.origin, "since": p.created_at,
            "expiresAt": p.expires_at,
        })).collect::<Vec<_>>(),
    });
    Ok(answer)
}

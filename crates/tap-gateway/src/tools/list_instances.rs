//! The generated `list_<name>_instances` tool, answered by the gateway itself.

use crate::request::CallError;
use crate::state::instances::label;
use crate::state::Core;
use tap_protocol::Json;

/// Answers `list_<name>_instances`: the instances of `provider` bound in the session,
/// most recently active first.
///
/// ```json
/// { "provider": "browser", "defaultTarget": "tab-b2c1",
///   "instances": [ { "instance": "tab-b2c1", "providerId": "p-…", "label": "Settings",
///                    "metadata": {…}, "lastActive": "2026-…Z", "tools": ["screenshot"] } ] }
/// ```
pub(crate) fn answer(core: &Core, session_id: &str, provider: &str) -> Result<Json, CallError> {
    let state = core.state();
    let session = state.live_session(session_id)?;
    let mut found: Vec<(u64, Json)> = session
        .bound
        .iter()
        .filter_map(|id| state.providers.get(id))
        .filter(|p| p.name.as_deref() == Some(provider))
        .filter_map(|p| {
            let instance = p.instance.as_deref().filter(|i| !i.is_empty())?;
            let mut tools: Vec<String> = p
                .tools_in(session_id)
                .iter()
                .map(|t| t.name.clone())
                .collect();
            tools.sort();
            let activity = &p.link.activity;
            Some((
                activity.order(),
                serde_json::json!({
                    "instance": instance,
                    "providerId": p.id,
                    "label": label(p.metadata.as_ref()),
                    "metadata": p.metadata.clone().unwrap_or_default(),
                    "lastActive": activity.at().map(crate::time::rfc3339),
                    "tools": tools,
                }),
            ))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let instances: Vec<Json> = found.into_iter().map(|(_, v)| v).collect();
    Ok(serde_json::json!({
        "provider": provider,
        "defaultTarget": instances.first().map(|i| i["instance"].clone()),
        "instances": instances,
    }))
}

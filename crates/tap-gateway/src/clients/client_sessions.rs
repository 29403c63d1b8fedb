//! Clients' recent sessions (`clients.list`): a client's entry runs `tap mcp --session
//! <client>`, so its sessions are labelled with the client's id. The live ones come from the
//! state, the rest from the ledger's history, newest first, at most
//! [`CLIENT_RECENT_SESSIONS`] per client.

use crate::limits::CLIENT_RECENT_SESSIONS;
use crate::state::Core;
use std::collections::HashMap;
use tap_protocol::clients::ClientSession;

/// The recent sessions of each of `labels` (every label has an entry, maybe empty).
pub(crate) fn recent(core: &Core, labels: &[&str]) -> HashMap<String, Vec<ClientSession>> {
    let mut live: Vec<(String, String)> = {
        let state = core.state();
        state
            .sessions
            .values()
            .filter_map(|s| {
                let label = s.info.label.as_deref().filter(|l| labels.contains(l))?;
                Some((label.to_string(), s.info.id.clone()))
            })
            .collect()
    };
    live.sort();
    // A failed read costs only the history part of the list: the live sessions still show.
    let history =
        crate::ledger::read::labelled_sessions(&core.ledger, labels, CLIENT_RECENT_SESSIONS)
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read clients' sessions from the history");
                Vec::new()
            });
    let mut out: HashMap<String, Vec<ClientSession>> =
        labels.iter().map(|l| (l.to_string(), Vec::new())).collect();
    for (label, id) in &live {
        let started_at = history
            .iter()
            .find(|r| &r.id == id)
            .map(|r| r.started_at.clone());
        out.entry(label.clone()).or_default().push(ClientSession {
            id: id.clone(),
            live: true,
            started_at,
            ended_at: None,
        });
    }
    for r in history {
        if live.iter().any(|(_, id)| *id == r.id) {
            continue;
        }
        let Some(label) = r.label else { continue };
        out.entry(label).or_default().push(ClientSession {
            id: r.id,
            live: false,
            started_at: Some(r.started_at),
            ended_at: r.ended_at,
        });
    }
    for sessions in out.values_mut() {
        sessions.truncate(CLIENT_RECENT_SESSIONS);
    }
    out
}

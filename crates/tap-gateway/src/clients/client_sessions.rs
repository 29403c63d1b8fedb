//! A client's recent sessions (`clients.list`): its entry runs `tap mcp --session
//! <client>`, so its sessions are labelled with the client's id. The live one comes from
//! the state, the rest from the ledger's history, newest first, at most
//! [`CLIENT_RECENT_SESSIONS`].

use crate::limits::CLIENT_RECENT_SESSIONS;
use crate::state::Core;
use tap_protocol::clients::ClientSession;

pub(crate) fn recent(core: &Core, label: &str) -> Vec<ClientSession> {
    let live: Vec<String> = {
        let state = core.state();
        let mut ids: Vec<String> = state
            .sessions
            .values()
            .filter(|s| s.info.label.as_deref() == Some(label))
            .map(|s| s.info.id.clone())
            .collect();
        ids.sort();
        ids
    };
    // A failed read costs only the history part of the list: the live sessions still show.
    let history =
        crate::ledger::read::labelled_sessions(&core.ledger, &[label], CLIENT_RECENT_SESSIONS)
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read a client's sessions from the history");
                Vec::new()
            });
    let started = |id: &str| {
        history
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.started_at.clone())
    };
    let mut out: Vec<ClientSession> = live
        .iter()
        .map(|id| ClientSession {
            id: id.clone(),
            live: true,
            started_at: started(id),
            ended_at: None,
        })
        .collect();
    out.extend(
        history
            .iter()
            .filter(|r| !live.contains(&r.id))
            .map(|r| ClientSession {
                id: r.id.clone(),
                live: false,
                started_at: Some(r.started_at.clone()),
                ended_at: r.ended_at.clone(),
            }),
    );
    out.truncate(CLIENT_RECENT_SESSIONS);
    out
}

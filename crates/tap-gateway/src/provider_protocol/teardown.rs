//! The connection is over: what it held in the registry goes, and its calls fail.

use super::ProviderConn;
use crate::events::GatewayEvent;
use crate::ledger::record::Record;
use crate::providers::registry::detach;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::connection::teardown";

impl ProviderConn {
    /// Puts a bind on the record, so history names this provider after it is gone.
    pub(super) fn record_bound(&self, name: &str, session_id: &str) {
        if let Some(id) = &self.id {
            self.core.ledger.write_detached(Record::ProviderBound {
                id: id.clone(),
                name: name.to_string(),
                session_id: Some(session_id.to_string()),
                at: std::time::SystemTime::now(),
            });
        }
    }

    /// The connection is over: the provider leaves the registry, its tools leave its
    /// session, and every call still pending fails with `DISCONNECTED`.
    pub(crate) fn disconnect(&mut self) {
        // Denied, or gone before confirming: the request's span ends unconfirmed.
        if let Some(span) = self.pairing_span.take() {
            span.fail(
                "NOT_PAIRED",
                "the connection ended before the pairing was confirmed",
            );
        }
        // A provider that leaves before confirming takes its pairing request with it.
        if let Some(pid) = &self.pairing {
            if self.core.state().pairing.remove_pending(pid) {
                crate::pairing::api::audit(&self.core, "withdrawn", (pid, None, None), "provider");
                tracing::info!(target: LOG_TARGET, remote = %self.remote, pairing = %pid, "provider left before confirming its pairing");
                self.core.events.emit(GatewayEvent::PairingRemoved {
                    id: pid.clone(),
                    reason: "failed".into(),
                });
            }
        }
        let name = self.with_entry(|state, id| {
            let kept = crate::providers::reconnect::keep(state, id);
            let entry = state.providers.remove(id).expect("checked by with_entry");
            state.transforms.forget(id);
            self.core.stream_controls.forget(id);
            state.identity.disconnected(id, kept);
            state.limits.forget(id);
            for sid in entry.bound_sessions() {
                detach(state, id, &sid);
            }
            if let Some(changed) = entry
                .pairing
                .as_deref()
                .and_then(|pid| state.pairing.disconnected(pid))
            {
                self.core
                    .events
                    .emit(GatewayEvent::PairingChanged(Box::new(changed)));
            }
            entry.name
        });
        let who = name.flatten().unwrap_or_else(|| "provider".into());
        self.link
            .calls
            .close(&format!("Provider '{who}' disconnected before answering"));
        // Pending gate checks fail closed.
        self.link.gates.close();
        if let Some(id) = &self.id {
            self.core.ledger.write_detached(Record::ProviderGone {
                id: id.clone(),
                reason: "disconnected".into(),
                at: std::time::SystemTime::now(),
            });
            self.core
                .events
                .emit(crate::events::GatewayEvent::StatusChanged);
            tracing::info!(target: LOG_TARGET, provider = ?self.id, remote = %self.remote, "provider disconnected");
        }
    }
}

//! The connection is over: what it held in the registry goes, and its calls fail.

use super::Conn;
use crate::events::GatewayEvent;
use crate::providers::registry::detach;

impl Conn {
    /// The connection is over: the provider leaves the registry, its tools leave its
    /// session, and every call still pending fails with `DISCONNECTED`.
    pub(crate) fn disconnect(&self) {
        // A provider that leaves before confirming takes its pairing request with it.
        if let Some(pid) = &self.pairing {
            if self.core.state().pairing.remove_pending(pid) {
                tracing::info!(remote = %self.remote, pairing = %pid, "provider left before confirming its pairing");
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
                self.core.events.emit(GatewayEvent::PairingChanged(changed));
            }
            entry.name
        });
        let who = name.flatten().unwrap_or_else(|| "provider".into());
        self.link
            .calls
            .close(&format!("Provider '{who}' disconnected before answering"));
        // Pending gate checks fail closed.
        self.link.gates.close();
        if self.id.is_some() {
            self.core
                .events
                .emit(crate::events::GatewayEvent::StatusChanged);
            tracing::info!(provider = ?self.id, remote = %self.remote, "provider disconnected");
        }
    }
}

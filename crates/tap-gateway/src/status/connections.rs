//! Connection states, read from the registry and the connection slots when asked.

use crate::socket::outbound::Gauge;
use crate::state::provider_entry::Phase;
use crate::state::Core;
use tap_protocol::diagnostics::{
    Connections, ControlConnections, HostConnections, OutboundQueue, ProviderConnections,
};
use tap_protocol::limits::{
    MAX_CONTROL_CONNECTIONS, MAX_HOST_CONNECTIONS, MAX_PROVIDER_CONNECTIONS,
};

fn queued(core: &Core, gauge: &Gauge) -> OutboundQueue {
    OutboundQueue {
        bytes: gauge.bytes(),
        messages: gauge.messages(),
        peak_bytes: gauge.peak_bytes(),
        max_bytes: core.config.outbound.max_queued_bytes,
        max_messages: core.config.outbound.max_queued_messages,
    }
}

pub(crate) fn states(core: &Core) -> Connections {
    let slots = &core.slots;
    let mut providers = ProviderConnections {
        open: slots.providers.open(MAX_PROVIDER_CONNECTIONS),
        max: MAX_PROVIDER_CONNECTIONS,
        await_auth: 0,
        await_pairing: 0,
        await_hello: 0,
        bound: 0,
        unbound: 0,
        queued: queued(core, &core.outbound.providers),
    };
    let state = core.state();
    for p in state.providers.values() {
        match p.phase {
            Phase::AwaitHello => providers.await_hello += 1,
            Phase::Bound => providers.bound += 1,
            Phase::Unbound => providers.unbound += 1,
        }
    }
    providers.await_pairing = state.pairing.pending_ids().len();
    // What holds a slot but is neither authenticated nor pairing has not sent `auth`.
    providers.await_auth = providers
        .open
        .saturating_sub(state.providers.len() + providers.await_pairing);
    let attached = state.hosts.values().filter(|h| h.out.is_some()).count();
    Connections {
        providers,
        session_hosts: HostConnections {
            open: slots.hosts.open(MAX_HOST_CONNECTIONS),
            max: MAX_HOST_CONNECTIONS,
            attached,
            detached: state.hosts.len() - attached,
            queued: queued(core, &core.outbound.hosts),
        },
        control_clients: ControlConnections {
            open: slots.control.open(MAX_CONTROL_CONNECTIONS),
            max: MAX_CONTROL_CONNECTIONS,
            queued: queued(core, &core.outbound.control),
        },
        sessions: state.sessions.len(),
    }
}

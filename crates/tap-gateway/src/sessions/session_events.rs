//! `session.event` forwarding (spec: "session.event", "Event payload shapes").
//!
//! The session host reports what happens in the conversation; each provider bound to the
//! session that listed the event name in `hello.subscribe` gets
//! `session.event {sessionId, event, data}`. Names outside the spec's table are accepted
//! in `subscribe` (a newer host may report more events) and simply match nothing until a
//! host reports them. Paired (external) providers get tool events (`tool.*`) only: their
//! `hello` is refused otherwise, and forwarding checks it again.

use crate::socket::frame::frame;
use crate::state::provider_entry::Trust;
use crate::state::Core;
use tap_protocol::host::HostSessionEvent;
use tap_protocol::provider::{GatewayMessage, SessionEvent};

/// Forwards a host's `session.event` to the subscribed providers of its session. A
/// `user.message` also restarts the session's inject-cycle budgets.
pub(crate) fn forward(core: &Core, e: HostSessionEvent) {
    if e.event == "user.message" {
        core.stream_controls.user_message(&e.session_id);
    }
    let state = core.state();
    let Some(session) = state.sessions.get(&e.session_id) else {
        return;
    };
    let mut message = None;
    for pid in &session.bound {
        let Some(p) = state.providers.get(pid) else {
            continue;
        };
        if !p.subscribe.contains(&e.event) {
            continue;
        }
        if p.trust == Trust::External && !e.event.starts_with("tool.") {
            continue;
        }
        let m = message.get_or_insert_with(|| {
            frame(&GatewayMessage::SessionEvent(SessionEvent {
                session_id: e.session_id.clone(),
                event: e.event.clone(),
                data: e.data.clone(),
            }))
        });
        let _ = p.link.out.send(m.clone());
    }
}

//! One task per binding turns what happens in its gateway session into [`Notice`]s for
//! the MCP clients: tool-set changes (the session's published revision moved), new stream
//! events, and, for a session the facade owns, deliveries and the session's end. It also
//! runs the binding's end timer: the resume window after the last client left.

use super::binding::{split_key, stream_uri, Binding, Notice};
use crate::events::GatewayEvent;
use crate::socket::outbound::OutReceiver;
use crate::state::Core;
use std::sync::Arc;
use tap_protocol::host::HostEvent;
use tokio::sync::broadcast;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

pub(crate) fn spawn(core: &Arc<Core>, binding: &Arc<Binding>, host_rx: Option<OutReceiver>) {
    let tasks = core.tasks.clone();
    let core = core.clone();
    let binding = binding.clone();
    let task = async move {
        let mut events = core.events.subscribe();
        let (mut tail, _) = core.streams.follow(&binding.session_id);
        let mut host_rx = host_rx;
        let mut revision = revision_of(&core, &binding);
        // The end timer: when the last client left, and the epoch then.
        let mut unused: Option<(Instant, u64)> = None;
        let grace = core.config.host_resume_grace;
        loop {
            tokio::select! {
                _ = binding.gone.cancelled() => return,
                _ = binding.idle.notified() => {
                    unused = Some((Instant::now() + grace, binding.epoch()));
                }
                _ = sleep_until_some(unused.map(|(at, _)| at)) => {
                    let (_, epoch) = unused.take().expect("armed");
                    if super::ending::end_if_unused(&core, &binding, epoch).await {
                        return;
                    }
                }
                event = events.recv() => match event {
                    Ok(GatewayEvent::StatusChanged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        match revision_of(&core, &binding) {
                            None => {
                                super::ending::give_up(&core, &binding, "its session ended").await;
                                return;
                            }
                            Some(r) if Some(r) != revision => {
                                revision = Some(r);
                                binding.notify(Notice::ToolsChanged);
                            }
                            Some(_) => {}
                        }
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                entry = tail.rx.recv() => match entry {
                    Ok(e) if e.session == binding.session_id => {
                        let (provider, stream) = split_key(&e.key);
                        binding.notify(Notice::StreamUpdated(stream_uri(provider, stream)));
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                Some(frame) = next_frame(&mut host_rx) => {
                    let Message::Text(text) = frame else { continue };
                    match serde_json::from_str::<HostEvent>(&text) {
                        Ok(HostEvent::Delivery(d)) => binding.notify(Notice::Delivery(d)),
                        Ok(HostEvent::SessionEnded(_)) => {
                            super::ending::give_up(&core, &binding, "its session ended").await;
                            return;
                        }
                        _ => {}
                    }
                }
            }
        }
    };
    tasks.spawn(task);
}

/// The session's published tool-set revision; `None` once the session is gone.
fn revision_of(core: &Core, binding: &Binding) -> Option<u64> {
    let state = core.state();
    state
        .live_session(&binding.session_id)
        .ok()
        .map(|s| s.tool_revision)
}

/// Sleeps until `at`; forever when there is none.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The next frame for the facade's own host; pending forever for a joined session.
async fn next_frame(rx: &mut Option<OutReceiver>) -> Option<Message> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

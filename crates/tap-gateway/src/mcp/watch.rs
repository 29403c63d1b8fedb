//! One task per binding turns what happens in its gateway session into [`Notice`]s for
//! the MCP clients: tool-set changes (the session's published revision moved), new stream
//! events, and, for a session the facade owns, deliveries and the session's end. It also
//! runs the binding's end timer: the resume window after the last client left.
//!
//! Nothing a tool call does wakes it: it waits on the session's own signal (a tool set
//! published, the session ending), not on every status change of the gateway, and the end
//! timer stays armed while stateless clients come and go (`attach::Presence`).

use crate::socket::outbound::OutReceiver;
use crate::state::mcp_binding::{split_key, stream_uri, Binding, Notice};
use crate::state::Core;
use std::sync::atomic::Ordering;
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
        // Subscribed before the revision is read: a publish in between is still seen.
        let changes = core
            .state()
            .sessions
            .get(&binding.session_id)
            .map(|s| s.watchers.subscribe());
        let Some(mut changes) = changes else {
            super::ending::give_up(&core, &binding, "its session ended").await;
            return;
        };
        let (mut tail, _) = core.streams.follow(&binding.session_id);
        let mut host_rx = host_rx;
        let mut revision = revision_of(&core, &binding);
        let mut end_at: Option<Instant> = None;
        let grace = core.config.host_resume_grace;
        loop {
            tokio::select! {
                _ = binding.gone.cancelled() => return,
                _ = binding.idle.notified() => {
                    end_at = Some(binding.end_at(grace));
                }
                _ = sleep_until_some(end_at) => {
                    match end_timer_ran_out(&core, &binding).await {
                        Timer::Ended => return,
                        Timer::Again(at) => end_at = at,
                    }
                }
                changed = changes.changed() => {
                    let now = changed.ok().and_then(|()| revision_of(&core, &binding));
                    match now {
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
                },
                entry = tail.rx.recv() => match entry {
                    Ok(e) if e.session == binding.session_id => {
                        let (provider, stream) = split_key(&e.key);
                        binding.notify(Notice::ResourceUpdated(stream_uri(provider, stream)));
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

enum Timer {
    /// The binding was given up.
    Ended,
    /// It goes on; the timer is armed again for this instant, or disarmed.
    Again(Option<Instant>),
}

/// The end timer ran out. Ends the binding if no client is present and the last one left a
/// whole window ago; otherwise arms the timer again for the window after the last leave,
/// or disarms it while clients are present (the next to leave last arms it).
async fn end_timer_ran_out(core: &Arc<Core>, binding: &Arc<Binding>) -> Timer {
    // Read before the checks: a client arriving after this makes `end_if_unused` refuse,
    // and one that arrived and left before it moved `end_at`.
    let epoch = binding.epoch();
    if binding.clients.load(Ordering::SeqCst) == 0 {
        let at = binding.end_at(core.config.host_resume_grace);
        if at > Instant::now() {
            return Timer::Again(Some(at));
        }
        if super::ending::end_if_unused(core, binding, epoch).await {
            return Timer::Ended;
        }
    }
    binding.timer_armed.store(false, Ordering::SeqCst);
    // A client that left last between the count above and the disarm saw the timer armed
    // and woke nobody: arm it for that one.
    if binding.clients.load(Ordering::SeqCst) == 0
        && !binding.timer_armed.swap(true, Ordering::SeqCst)
    {
        return Timer::Again(Some(binding.end_at(core.config.host_resume_grace)));
    }
    Timer::Again(None)
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

#[cfg(test)]
mod tests {
    use super::super::attach::attach;
    use crate::state::Core;
    use std::sync::Arc;
    use std::time::Duration;

    const GRACE: Duration = Duration::from_secs(1);

    fn core(dir: &std::path::Path) -> Arc<Core> {
        crate::state::test_core(dir, |c| c.host_resume_grace = GRACE)
    }

    fn session_of(core: &Core, name: &str) -> Option<String> {
        let state = core.state();
        let b = state.mcp.get(name)?;
        state
            .live_session(&b.session_id)
            .ok()
            .map(|s| s.info.id.clone())
    }

    /// Stateless clients (one presence per request) keep a session for as long as they
    /// keep coming, with gaps shorter than the window, however long that is; the session
    /// ends one whole window after the last of them left.
    #[tokio::test(start_paused = true)]
    async fn a_session_lives_while_clients_come_and_go_and_ends_a_window_after_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let core = core(dir.path());
        let first = attach(&core, "agent", None, None).unwrap();
        let id = session_of(&core, "agent").expect("registered");
        drop(first);
        for _ in 0..20 {
            // 20 × 0.6 s = 12 windows, never a whole one without a client.
            tokio::time::sleep(GRACE * 2 / 5).await;
            let p = attach(&core, "agent", None, None).unwrap();
            tokio::time::sleep(GRACE / 5).await;
            drop(p);
            assert_eq!(session_of(&core, "agent").as_deref(), Some(id.as_str()));
        }
        // A client present for longer than the window keeps it too.
        let long = attach(&core, "agent", None, None).unwrap();
        tokio::time::sleep(GRACE * 3).await;
        assert_eq!(session_of(&core, "agent").as_deref(), Some(id.as_str()));
        drop(long);
        tokio::time::sleep(GRACE * 9 / 10).await;
        assert_eq!(
            session_of(&core, "agent").as_deref(),
            Some(id.as_str()),
            "within the window"
        );
        tokio::time::sleep(GRACE / 5).await;
        // The end itself runs in the watcher's task: let it finish.
        for _ in 0..100 {
            if !core.state().sessions.contains_key(&id) {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(
            session_of(&core, "agent").is_none(),
            "the binding was given up"
        );
        assert!(
            !core.state().sessions.contains_key(&id),
            "the session ended"
        );
        core.stopping.cancel();
    }
}

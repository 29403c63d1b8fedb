//! `tap gateway --exit-when-idle`: the spec's process model for a gateway started on
//! demand ("Gateway process model", step 4): it exits once no session has been
//! registered for a grace period (30 s by default, the reconnect-token lifetime, so a
//! session that reconnects or arrives late still finds it). The tray app and a plain
//! `tap gateway` are started by the user and keep running without sessions.

use std::time::Duration;
use tap_gateway::Gateway;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

/// Resolves when `gateway` has had no session for `grace` without a break, counting from
/// now (a gateway nobody registers with also exits).
pub async fn wait_until_idle(gateway: &Gateway, grace: Duration) {
    // Subscribe before the first look, so a session registered in between is not missed.
    let mut events = gateway.subscribe();
    let mut deadline = Some(Instant::now() + grace);
    loop {
        if gateway.status().sessions.is_empty() {
            // Armed once per idle spell: chatter from providers must not postpone it.
            deadline.get_or_insert_with(|| Instant::now() + grace);
        } else {
            deadline = None;
        }
        let sleep_until = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep_until => {
                if gateway.status().sessions.is_empty() {
                    return;
                }
            }
            event = events.recv() => {
                if let Err(RecvError::Closed) = event {
                    // The gateway is stopping on its own; let the caller's stop path run.
                    std::future::pending::<()>().await;
                }
                // Anything else (an event, or a lag): look at the sessions again.
            }
        }
    }
}

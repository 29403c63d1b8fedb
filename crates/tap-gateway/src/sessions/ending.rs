//! A session that is ending waits for its providers' `goodbye` / `shutdown.ready`.

use crate::state::State;

/// A provider said `goodbye` / `shutdown.ready` for `session`, or disconnected: it no
/// longer holds up that session's teardown.
pub(crate) fn release_shutdown(state: &mut State, provider_id: &str, session: &str) {
    if let Some(ending) = state
        .sessions
        .get_mut(session)
        .and_then(|s| s.ending.as_mut())
    {
        ending.waiting.remove(provider_id);
        if ending.waiting.is_empty() {
            ending.done.notify_one();
        }
    }
}

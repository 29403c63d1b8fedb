//! A binding ending: its watcher's end timer ran out with no client back, or its session
//! ended under it. Out of the registry, its watcher stopped, and a session the facade
//! registered ended.

use crate::state::mcp_binding::Binding;
use crate::state::Core;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The watcher's end timer ran out: the binding is given up (and its session ended, if the
/// facade registered it) unless a client came back since `epoch`. Returns whether it was.
pub(crate) async fn end_if_unused(core: &Arc<Core>, binding: &Arc<Binding>, epoch: u64) -> bool {
    {
        // Decided under the lock `attach` counts clients under: a client arriving now
        // either is seen here or finds the binding gone and makes a new one.
        let mut state = core.state();
        if binding.epoch() != epoch || binding.clients.load(Ordering::SeqCst) > 0 {
            return false;
        }
        forget(&mut state, binding);
    }
    finish(core, binding, "its MCP clients left").await;
    true
}

/// Gives the binding up now (its session ended under it).
pub(crate) async fn give_up(core: &Arc<Core>, binding: &Arc<Binding>, reason: &str) {
    forget(&mut core.state(), binding);
    finish(core, binding, reason).await;
}

fn forget(state: &mut crate::state::State, binding: &Arc<Binding>) {
    if state
        .mcp
        .get(&binding.name)
        .is_some_and(|b| Arc::ptr_eq(b, binding))
    {
        state.mcp.remove(&binding.name);
    }
}

/// Stops the binding's watcher and ends a session the facade owns.
async fn finish(core: &Arc<Core>, binding: &Arc<Binding>, reason: &str) {
    binding.gone.cancel();
    if let Some(host) = &binding.host_id {
        crate::sessions::lifecycle::end_session(
            core,
            binding.session_id.clone(),
            None,
            reason.to_string(),
        )
        .await;
        core.state().hosts.remove(host);
    }
}

//! MCP clients arriving at and leaving a gateway session.
//!
//! The first client to name a session (`/mcp/<name>`) finds it by id or label and joins it,
//! or registers one labelled `<name>` through an in-process session host. Every later
//! client shares that [`Binding`]. When the last client has been gone for the session
//! hosts' resume window, a session the facade registered is ended (one it joined is left
//! alone), so an MCP client that reconnects within the window (a new `tap mcp` process, a
//! stateless client between two requests) keeps its session, its providers and its history.

use crate::accept::Kind;
use crate::error::Error;
use crate::state::host::{HostEntry, MCP_HOST_PREFIX};
use crate::state::mcp_binding::Binding;
use crate::state::Core;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tap_protocol::host::{BusyState, SessionRegister};
use tap_protocol::limits::MAX_SESSION_ID_LEN;
use tap_protocol::ErrorCode;

/// One MCP client's hold on a binding; dropping the last one starts the end timer (run by
/// the binding's watcher, `watch.rs`) unless it is already running.
pub(crate) struct Presence {
    pub binding: Arc<Binding>,
}

impl Drop for Presence {
    fn drop(&mut self) {
        let b = &self.binding;
        b.leaving();
        if b.clients.fetch_sub(1, Ordering::SeqCst) == 1
            && !b.timer_armed.swap(true, Ordering::SeqCst)
        {
            // `notify_one` keeps the wake-up if the watcher is busy right now.
            b.idle.notify_one();
        }
    }
}

/// Joins (or registers) the session `name` for one more MCP client. `cwd` is used only
/// when the session is registered.
pub(crate) fn attach(
    core: &Arc<Core>,
    name: &str,
    cwd: Option<String>,
    profile: Option<&str>,
) -> Result<Presence, Error> {
    if name.is_empty() || name.len() > MAX_SESSION_ID_LEN {
        return Err(Error::new(
            ErrorCode::InvalidSession,
            format!("A session name must be 1 to {MAX_SESSION_ID_LEN} characters"),
        ));
    }
    if core.stopping.is_cancelled() {
        return Err(Error::new(ErrorCode::Internal, "The gateway is stopping"));
    }
    let binding = {
        let mut state = core.state();
        let alive = state
            .mcp
            .get(name)
            .filter(|b| !b.gone.is_cancelled() && state.live_session(&b.session_id).is_ok());
        match alive {
            Some(b) => {
                same_profile(&state, &b.session_id, name, profile)?;
                // Under the lock: an end timer decides under it too, so it either sees
                // this client or has already removed the binding.
                b.epoch.fetch_add(1, Ordering::SeqCst);
                b.clients.fetch_add(1, Ordering::SeqCst);
                return Ok(Presence { binding: b.clone() });
            }
            None => {
                let joined = state
                    .session_order
                    .iter()
                    .filter_map(|id| state.sessions.get(id))
                    .filter(|s| !s.is_ending())
                    .find(|s| s.info.id == name || s.info.label.as_deref() == Some(name))
                    .map(|s| s.info.id.clone());
                match joined {
                    Some(id) => {
                        same_profile(&state, &id, name, profile)?;
                        let b = Arc::new(Binding::new(
                            name.to_string(),
                            id,
                            None,
                            core.stopping.child_token(),
                        ));
                        state.mcp.insert(name.to_string(), b.clone());
                        drop(state);
                        super::watch::spawn(core, &b, None);
                        Ok(b)
                    }
                    None => {
                        drop(state);
                        register(core, name, cwd, profile)
                    }
                }
            }
        }
    }?;
    binding.epoch.fetch_add(1, Ordering::SeqCst);
    binding.clients.fetch_add(1, Ordering::SeqCst);
    Ok(Presence { binding })
}

/// A client asking for `profile` may join the session `id` only if it was opened with
/// that profile: a session's tool set is its profile's, for every client in it.
fn same_profile(
    state: &crate::state::State,
    id: &str,
    name: &str,
    profile: Option<&str>,
) -> Result<(), Error> {
    let Some(wanted) = profile else {
        return Ok(());
    };
    let has = state
        .sessions
        .get(id)
        .and_then(|s| s.profile.as_ref().map(|p| p.name.clone()));
    if has.as_deref() == Some(wanted) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidSession,
        format!(
            "session '{name}' was opened {}; a client with profile '{wanted}' needs a session of its own (another --session)",
            match has {
                Some(p) => format!("with profile '{p}'"),
                None => "without a profile".to_string(),
            }
        ),
    ))
}

/// Registers a session labelled `name`, owned by an in-process session host whose
/// messages (deliveries, the session's end) the binding's watcher reads.
fn register(
    core: &Arc<Core>,
    name: &str,
    cwd: Option<String>,
    profile: Option<&str>,
) -> Result<Arc<Binding>, Error> {
    let host_id = crate::ids::short("mcp");
    let kill = core.stopping.child_token();
    let (out, rx) = core.outbound_queue(Kind::Host, kill.clone());
    // Nobody resumes an in-process host; its resume token is never handed out.
    let mut host = HostEntry::new(
        host_id.clone(),
        format!("{MCP_HOST_PREFIX}{name}"),
        out,
        kill,
    );
    // Until a client listens, deliveries wait in the session's queue.
    let listeners = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    host.listeners = Some(listeners.clone());
    core.state().hosts.insert(host_id.clone(), host);
    // The newest agent session the user started is the one they work in: providers that
    // bind to "the foreground session" should find it.
    let registered = crate::sessions::lifecycle::register_session(
        core,
        &host_id,
        "mcp",
        SessionRegister {
            request_id: "mcp".into(),
            session_id: None,
            label: Some(name.to_string()),
            cwd,
            foreground: true,
            profile: profile.map(str::to_string),
            ..SessionRegister::default()
        },
    );
    let info = match registered {
        Ok(info) => info,
        Err(e) => {
            core.state().hosts.remove(&host_id);
            return Err(e);
        }
    };
    let mut binding = Binding::new(
        name.to_string(),
        info.id,
        Some(host_id),
        core.stopping.child_token(),
    );
    binding.delivery_listeners = listeners;
    let b = Arc::new(binding);
    core.state().mcp.insert(name.to_string(), b.clone());
    super::watch::spawn(core, &b, Some(rx));
    tracing::info!(session = %b.session_id, name, "MCP session registered");
    Ok(b)
}

/// A tool call in flight on a binding: a session the facade owns is busy while one runs, so
/// push pacing (`inject` waits for idle) works for in-process clients too, and idle again
/// when the last call's guard drops (however the call ended, cancelled futures included).
pub(crate) struct Busy<'a> {
    core: &'a Core,
    binding: &'a Binding,
}

pub(crate) fn busy<'a>(core: &'a Core, binding: &'a Binding) -> Busy<'a> {
    if binding.calls.fetch_add(1, Ordering::SeqCst) == 0 {
        set_busy(core, binding, BusyState::Busy);
    }
    Busy { core, binding }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if self.binding.calls.fetch_sub(1, Ordering::SeqCst) == 1 {
            set_busy(self.core, self.binding, BusyState::Idle);
        }
    }
}

fn set_busy(core: &Core, binding: &Binding, state: BusyState) {
    if binding.owns_session() {
        let _ = crate::sessions::lifecycle::set_busy(core, &binding.session_id, state);
    }
}

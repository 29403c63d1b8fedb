//! One run of a server: it is reached and initialized, then it is an in-process provider
//! (`provider_protocol::local`) like any other: its tools go through `hello` and
//! `tools.update` into the sessions' tool maps, and the gateway's `tool.call`s come back
//! here to become MCP `tools/call`s. Hooks, gates, concurrency, timeouts and traces are
//! the call path's, unchanged: this is a translator, not a second path.

use super::catalog::Catalog;
use super::client::Note;
use super::connect::{self, Connection, Refused, LOG_TARGET};
use super::in_flight::{InFlight, Router};
use super::registration::Registration;
use super::server::Server;
pub(crate) use super::server_calls::NEEDS_SIGN_IN;
use super::server_calls::{oversized, start_call, Lost};
use crate::limits::{MCP_EXIT_STATUS_WAIT, MCP_LIST_TIMEOUT, MCP_NOTES_QUEUE};
use crate::oauth::challenge::{self, Challenge};
use crate::provider_protocol::local::LocalSender;
use crate::state::Core;
use crate::trace::span::OpenSpan;
use rmcp::model::LoggingLevel;
use rmcp::{Peer, RoleClient};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tap_protocol::mcp_servers::McpServerState;
use tap_protocol::provider::{GatewayMessage, ProviderMessage, ToolCall, ToolResult};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::mpsc;

/// How a run ended.
pub(crate) enum Ended {
    /// Stopped for good (removed, its session ended, the gateway stops).
    Stopped,
    /// The user asked for a restart.
    Restart,
    /// No calls for its `idleTimeout`: the process is stopped, its tools stay.
    Idle,
    /// It failed; the reason in words.
    Failed(String),
    /// A remote server wants the user to sign in (again, or with more scope).
    NeedsSignIn(Challenge),
}

/// One run: start or reach the server, register its tools (or update those of `reg`, the
/// registration a lazy or idle server kept), run `first` (the call that started it), and
/// serve until it ends. `start` (the run's `mcp_server.start` span) is ended once it is
/// ready.
pub(crate) async fn run_once(
    core: &Arc<Core>,
    server: &Arc<Server>,
    roots: Vec<String>,
    start: &mut Option<OpenSpan>,
    reg: &mut Option<Registration>,
    first: Option<ToolCall>,
) -> Ended {
    let (notes_tx, mut notes) = mpsc::channel(MCP_NOTES_QUEUE);
    let tools_changed = Arc::new(tokio::sync::Notify::new());
    let in_flight = Arc::new(Mutex::new(InFlight::default()));
    let router = Router {
        core: core.clone(),
        server: server.spec.name.clone(),
        session: server.session_id.clone(),
        in_flight: in_flight.clone(),
    };
    let opened = tokio::select! {
        _ = server.stop.cancelled() => Err(None),
        opened = connect::open(core, server, notes_tx, tools_changed.clone(), roots, router) => opened.map_err(Some),
    };
    let mut conn = match opened {
        Ok(conn) => conn,
        Err(why) => {
            if let (Some(call), Some(reg)) = (first, reg.as_ref()) {
                let why = match &why {
                    None => "it is stopping".to_string(),
                    Some(Refused::Failed(why)) => why.clone(),
                    Some(Refused::SignIn(c)) => c.reason(false),
                };
                fail_call(
                    &reg.local.sender(),
                    call.id,
                    format!("MCP server '{}' could not start: {why}", server.spec.name),
                );
            }
            return match why {
                None => Ended::Stopped,
                Some(Refused::Failed(why)) => Ended::Failed(why),
                Some(Refused::SignIn(challenge)) => Ended::NeedsSignIn(challenge),
            };
        }
    };
    let ended = serve(
        core,
        server,
        &mut conn,
        &mut notes,
        &tools_changed,
        in_flight,
        start,
        reg,
        first,
    )
    .await;
    conn.close().await;
    ended
}

fn fail_call(reply: &LocalSender, id: String, why: String) {
    let _ = reply.send(&ProviderMessage::ToolResult(ToolResult {
        id,
        error: Some(why),
        error_code: Some(ErrorCode::Disconnected),
        retryable: Some(true),
        ..ToolResult::default()
    }));
}

#[allow(clippy::too_many_arguments)]
async fn serve(
    core: &Arc<Core>,
    server: &Arc<Server>,
    conn: &mut Connection,
    notes: &mut mpsc::Receiver<Note>,
    tools_changed: &tokio::sync::Notify,
    in_flight: Arc<Mutex<InFlight>>,
    start: &mut Option<OpenSpan>,
    reg_slot: &mut Option<Registration>,
    first: Option<ToolCall>,
) -> Ended {
    let peer = conn.service.peer().clone();
    let info = conn.service.peer_info().and_then(|i| {
        i.server_info
            .as_ref()
            .map(|s| format!("{} {}", s.name, s.version))
    });
    let fresh = match list(core, server, &peer).await {
        Ok(c) => c,
        Err(refused) => {
            // A list over the message limit closed the connection: that is the reason.
            let (why, ended) = match refused {
                Refused::SignIn(c) => (c.reason(false), Ended::NeedsSignIn(c)),
                Refused::Failed(why) => {
                    let why = conn.cut.reason().unwrap_or(why);
                    (why.clone(), Ended::Failed(why))
                }
            };
            if let (Some(call), Some(reg)) = (first, reg_slot.as_ref()) {
                fail_call(
                    &reg.local.sender(),
                    call.id,
                    format!("MCP server '{}' could not start: {why}", server.spec.name),
                );
            }
            return ended;
        }
    };
    super::tool_cache::save(&core.config.data_dir, server, &fresh);
    match reg_slot {
        Some(reg) => reg.update_tools(fresh),
        None => match Registration::register(core, server, fresh).await {
            Ok(reg) => *reg_slot = Some(reg),
            Err(why) => return Ended::Failed(why),
        },
    }
    let reg = reg_slot.as_mut().expect("registered");
    let provider_id = reg.provider_id.clone();
    let tools = reg.catalog.len();
    server.update(|s| {
        s.state = Some(McpServerState::Ready);
        s.sign_in_reason = None;
        s.challenge = None;
        s.provider_id = Some(provider_id.clone());
        s.server_info = info;
        s.tools = reg.catalog.session_names();
        s.tool_warnings = reg.catalog.refused.clone();
        s.ready_since = Some(crate::time::rfc3339(std::time::SystemTime::now()));
    });
    *server.pusher.lock().unwrap() = Some(reg.local.sender());
    super::life_spans::ready(start.take(), tools, conn.pid);
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    tracing::info!(target: LOG_TARGET, server = %server.spec.name, provider = %provider_id, tools, "MCP server ready");

    let offered = super::peers::register(core, server, &peer);
    // A call that finds the connection gone reports it here: the run has failed.
    let (gone_tx, mut gone) = mpsc::unbounded_channel::<Lost>();
    let cut = conn.cut.clone();
    let dropped = conn.dropped.take();
    let exited = async {
        match (conn.child.as_mut(), dropped) {
            (Some(child), _) => match child.wait().await {
                Ok(status) => format!("it exited ({status})"),
                Err(e) => format!("it could not be waited for: {e}"),
            },
            // A legacy SSE server's stream that drops ends the run now, not at its next call.
            (None, Some(dropped)) => match dropped.await {
                Ok(why) => why,
                Err(_) => std::future::pending().await,
            },
            (None, None) => std::future::pending().await,
        }
    };
    tokio::pin!(exited);
    // `idleTimeout`: the process stops once no call has run for that long.
    let idle = server.spec.idle_timeout;
    let last_call = Arc::new(Mutex::new(tokio::time::Instant::now()));
    if let Some(call) = first {
        let tool = reg.catalog.server_name(&call.tool);
        start_call(
            core, &peer, &reg.local, call, tool, &in_flight, &gone_tx, &cut, &last_call,
        );
    }
    let ended = loop {
        let idle_at = idle.map(|d| *last_call.lock().unwrap() + d);
        tokio::select! {
            _ = server.stop.cancelled() => break Ended::Stopped,
            _ = server.restart.notified() => break Ended::Restart,
            why = &mut exited => break Ended::Failed(why),
            why = cut.wait() => break Ended::Failed(why),
            // A call lost its connection: when the process is exiting, its exit status
            // says more than the closed pipe does.
            Some(lost) = gone.recv() => {
                if let Some(challenge) = lost.sign_in {
                    break Ended::NeedsSignIn(challenge);
                }
                let exit = tokio::time::timeout(MCP_EXIT_STATUS_WAIT, &mut exited).await;
                break Ended::Failed(exit.unwrap_or(lost.why));
            }
            _ = sleep_until(idle_at) => {
                // A call still running, or one that ended after the deadline was taken,
                // keeps it running.
                let busy = !in_flight.lock().unwrap().cancels.is_empty();
                let quiet = idle_at.is_some_and(|at| *last_call.lock().unwrap() + idle.unwrap_or_default() <= at);
                if !busy && quiet {
                    break Ended::Idle;
                }
                if busy {
                    *last_call.lock().unwrap() = tokio::time::Instant::now();
                }
            }
            msg = reg.local.recv() => match msg {
                None if core.stopping.is_cancelled() => break Ended::Stopped,
                None => break Ended::Failed("its provider connection was closed by the gateway".into()),
                Some(GatewayMessage::ToolCall(call)) => {
                    let tool = reg.catalog.server_name(&call.tool);
                    start_call(core, &peer, &reg.local, call, tool, &in_flight, &gone_tx, &cut, &last_call);
                }
                Some(GatewayMessage::ToolCancel(c)) => {
                    if let Some(token) = in_flight.lock().unwrap().cancels.get(&c.id) {
                        token.cancel();
                    }
                }
                Some(GatewayMessage::Error(e)) => {
                    tracing::warn!(target: LOG_TARGET, server = %server.spec.name, code = ?e.code, message = %e.message, "the gateway refused a message of the MCP server's provider");
                }
                Some(other) => {
                    reg.on_sessions(server, &other);
                }
            },
            _ = tools_changed.notified() => match list(core, server, &peer).await {
                Ok(fresh) => {
                    super::tool_cache::save(&core.config.data_dir, server, &fresh);
                    reg.update_tools(fresh);
                    server.update(|s| {
                        s.tools = reg.catalog.session_names();
                        s.tool_warnings = reg.catalog.refused.clone();
                    });
                    core.events.emit(crate::events::GatewayEvent::StatusChanged);
                }
                // Its token no longer lists them: it waits for the user.
                Err(Refused::SignIn(c)) => break Ended::NeedsSignIn(c),
                Err(Refused::Failed(why)) => tracing::warn!(target: LOG_TARGET, server = %server.spec.name, error = %why, "could not list the changed tools"),
            },
            Some(note) = notes.recv() => match note {
                Note::Log(entry) => log(server, entry.level, entry.logger.as_deref(), &entry.data),
            },
        }
    };
    // Whatever else noticed first (the exit it caused, a call's closed connection), an
    // oversized message is what the user needs to hear about.
    let ended = match (ended, cut.reason()) {
        (Ended::Failed(_), Some(why)) => Ended::Failed(why),
        (ended, _) => ended,
    };
    // Calls still in flight end now, each with one terminal result: the server is going
    // away, so they may be tried again once it is back.
    let pending: Vec<String> = in_flight.lock().unwrap().cancels.keys().cloned().collect();
    let reply = reg.local.sender();
    for id in pending {
        if let Some(result) = oversized(&cut, &id) {
            let _ = reply.send(&ProviderMessage::ToolResult(result));
            continue;
        }
        let why = match &ended {
            Ended::Failed(why) => format!(
                "MCP server '{}' failed during the call: {why}",
                server.spec.name
            ),
            Ended::NeedsSignIn(c) => {
                format!("MCP server '{}': {}", server.spec.name, c.reason(true))
            }
            _ => format!("MCP server '{}' stopped during the call", server.spec.name),
        };
        fail_call(&reply, id, why);
    }
    for token in in_flight.lock().unwrap().cancels.values() {
        token.cancel();
    }
    *server.pusher.lock().unwrap() = None;
    super::peers::unregister(core, offered);
    // Idle, its tools stay registered for the call that starts it again; otherwise they
    // leave the sessions now (a failed server's come back when it is ready again).
    if !matches!(ended, Ended::Idle) {
        *reg_slot = None;
    }
    ended
}

/// Waits until `at`, or forever without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The server's tools (every page), mapped to session names.
/// A server that answers `401`/`403` here (some let `initialize` through without a token)
/// wants a sign-in.
async fn list(core: &Core, server: &Server, peer: &Peer<RoleClient>) -> Result<Catalog, Refused> {
    let tools = match tokio::time::timeout(MCP_LIST_TIMEOUT, peer.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            return Err(match challenge::of_request(&e) {
                Some(c) => Refused::SignIn(c),
                None => Refused::Failed(format!("tools/list failed: {e}")),
            })
        }
        Err(_) => {
            return Err(Refused::Failed(format!(
                "it did not answer tools/list within {} s",
                MCP_LIST_TIMEOUT.as_secs()
            )))
        }
    };
    Ok(Catalog::build(&server.spec, &tools, &taken(core, server)))
}

/// Tool names held by other providers (or the gateway) in the sessions `server` is for.
fn taken(core: &Core, server: &Server) -> HashSet<String> {
    let me = super::registration::provider_name(server);
    let state = core.state();
    state
        .sessions
        .values()
        .filter(|s| server.session_id.as_ref().is_none_or(|id| *id == s.info.id))
        .flat_map(|s| s.tools.iter())
        .filter(|(_, entry)| *entry.provider_name != *me)
        .map(|(name, _)| name.clone())
        .collect()
}

/// A `notifications/message` entry, into the gateway's log under the server's name and
/// the sessions' `log` stream.
fn log(server: &Server, level: LoggingLevel, logger: Option<&str>, data: &Json) {
    let text = match data {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    let level_name = serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    server.push("log", &format!("[{level_name}] {text}"));
    let name = &server.spec.name;
    let logger = logger.unwrap_or("");
    match level {
        LoggingLevel::Debug => {
            tracing::debug!(target: LOG_TARGET, server = %name, logger, "{text}")
        }
        LoggingLevel::Info | LoggingLevel::Notice => {
            tracing::info!(target: LOG_TARGET, server = %name, logger, "{text}")
        }
        LoggingLevel::Warning => {
            tracing::warn!(target: LOG_TARGET, server = %name, logger, "{text}")
        }
        _ => tracing::error!(target: LOG_TARGET, server = %name, logger, "{text}"),
    }
}

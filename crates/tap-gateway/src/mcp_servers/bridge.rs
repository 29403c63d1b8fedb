//! One run of a server: it is reached and initialized, then it is an in-process provider
//! (`provider_protocol::local`) like any other: its tools go through `hello` and
//! `tools.update` into the sessions' tool maps, and the gateway's `tool.call`s come back
//! here to become MCP `tools/call`s. Hooks, gates, concurrency, timeouts and traces are
//! the call path's, unchanged: this is a translator, not a second path.

use super::catalog::Catalog;
use super::client::Note;
use super::connect::{self, Connection, LOG_TARGET};
use super::in_flight::{InFlight, Router};
use super::server::Server;
use crate::limits::{MCP_EXIT_STATUS_WAIT, MCP_LIST_TIMEOUT};
use crate::provider_protocol::local::LocalProvider;
use crate::state::Core;
use crate::trace::span::OpenSpan;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    LoggingLevel, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tap_protocol::mcp_servers::McpServerState;
use tap_protocol::provider::{
    GatewayMessage, LifecycleState, ProviderMessage, SessionInfo, SessionRef, ToolCall, ToolDef,
    ToolProgress, ToolResult, ToolsUpdate,
};
use tap_protocol::{ErrorCode, Json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How a run ended.
pub(crate) enum Ended {
    /// Stopped for good (removed, its session ended, the gateway stops).
    Stopped,
    /// The user asked for a restart.
    Restart,
    /// It failed; the reason in words.
    Failed(String),
}

/// One run; `start` (the run's `mcp_server.start` span) is ended once it is ready.
pub(crate) async fn run_once(
    core: &Arc<Core>,
    server: &Arc<Server>,
    roots: Vec<String>,
    start: &mut Option<OpenSpan>,
) -> Ended {
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let in_flight = Arc::new(Mutex::new(InFlight::default()));
    let router = Router {
        core: core.clone(),
        session: server.session_id.clone(),
        in_flight: in_flight.clone(),
    };
    let opened = tokio::select! {
        _ = server.stop.cancelled() => return Ended::Stopped,
        opened = connect::open(core, server, notes_tx, roots, router) => opened,
    };
    let mut conn = match opened {
        Ok(conn) => conn,
        Err(why) => return Ended::Failed(why),
    };
    let ended = serve(core, server, &mut conn, &mut notes, in_flight, start).await;
    conn.close().await;
    ended
}

async fn serve(
    core: &Arc<Core>,
    server: &Arc<Server>,
    conn: &mut Connection,
    notes: &mut mpsc::UnboundedReceiver<Note>,
    in_flight: Arc<Mutex<InFlight>>,
    start: &mut Option<OpenSpan>,
) -> Ended {
    let peer = conn.service.peer().clone();
    let info = conn.service.peer_info().and_then(|i| {
        i.server_info
            .as_ref()
            .map(|s| format!("{} {}", s.name, s.version))
    });
    let mut catalog = match list(core, server, &peer).await {
        Ok(c) => c,
        Err(why) => return Ended::Failed(why),
    };
    let mut local = crate::provider_protocol::local::connect(core);
    let provider_id = local.provider_id().to_string();
    let sessions_at_hello = match hello(server, &mut local, &catalog).await {
        Ok(sessions) => sessions,
        Err(why) => return Ended::Failed(why),
    };
    server.update(|s| {
        s.state = Some(McpServerState::Ready);
        s.provider_id = Some(provider_id.clone());
        s.server_info = info;
        s.tools = catalog.session_names();
        s.warnings
            .retain(|w| !w.contains("' offers ") && !w.contains("like an earlier tool"));
        s.warnings.extend(catalog.refused.iter().cloned());
        s.ready_since = Some(crate::time::rfc3339(std::time::SystemTime::now()));
    });
    *server.pusher.lock().unwrap() = Some(local.sender());
    super::lifecycle::ready(start.take(), catalog.len(), conn.pid);
    core.events.emit(crate::events::GatewayEvent::StatusChanged);
    tracing::info!(target: LOG_TARGET, server = %server.spec.name, provider = %provider_id, tools = catalog.len(), "MCP server ready");

    // `sessions` in the entry: the sessions (ids or labels) that see a user server. It
    // binds to "all", so it leaves the others: at once for those live now, by not
    // declaring itself ready for later ones.
    let filter = server.spec.sessions.clone();
    let sees = |s: &SessionInfo| {
        filter.as_ref().is_none_or(|l| {
            l.iter()
                .any(|x| *x == s.id || s.label.as_deref() == Some(x.as_str()))
        })
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut readied: HashSet<String> = HashSet::new();
    for s in sessions_at_hello {
        if sees(&s) {
            readied.insert(s.id.clone());
        } else {
            let _ = local.send(&tools_update(Some(s.id.clone()), Vec::new()));
        }
        seen.insert(s.id);
    }
    let mut changed_since_hello = false;
    // A call that finds the connection gone reports it here: the run has failed.
    let (gone_tx, mut gone) = mpsc::unbounded_channel::<String>();
    let catalog_shared = Arc::new(Mutex::new(catalog.clone()));
    let exited = async {
        match conn.child.as_mut() {
            Some(child) => match child.wait().await {
                Ok(status) => format!("it exited ({status})"),
                Err(e) => format!("it could not be waited for: {e}"),
            },
            None => std::future::pending().await,
        }
    };
    tokio::pin!(exited);
    let ended = loop {
        tokio::select! {
            _ = server.stop.cancelled() => break Ended::Stopped,
            _ = server.restart.notified() => break Ended::Restart,
            why = &mut exited => break Ended::Failed(why),
            // A call lost its connection: when the process is exiting, its exit status
            // says more than the closed pipe does.
            Some(why) = gone.recv() => {
                let exit = tokio::time::timeout(MCP_EXIT_STATUS_WAIT, &mut exited).await;
                break Ended::Failed(exit.unwrap_or(why));
            }
            msg = local.recv() => match msg {
                None if core.stopping.is_cancelled() => break Ended::Stopped,
                None => break Ended::Failed("its provider connection was closed by the gateway".into()),
                Some(GatewayMessage::ToolCall(call)) => {
                    let tool = catalog_shared.lock().unwrap().server_name(&call.tool);
                    start_call(core, &peer, &local, call, tool, &in_flight, &gone_tx);
                }
                Some(GatewayMessage::ToolCancel(c)) => {
                    if let Some(token) = in_flight.lock().unwrap().cancels.get(&c.id) {
                        token.cancel();
                    }
                }
                // A user server binds to "all": a session that opens later gets its
                // tools once it is declared ready, and an ending one is let go at once.
                Some(GatewayMessage::SessionsUpdated(list)) if server.session_id.is_none() => {
                    for s in list.active {
                        if !seen.insert(s.id.clone()) || !sees(&s) {
                            continue;
                        }
                        readied.insert(s.id.clone());
                        let _ = local.send(&ProviderMessage::SessionReady(SessionRef { session_id: s.id.clone() }));
                        // Ready registers hello's tools; per-session updates since then
                        // are this session's only if sent again.
                        if filter.is_some() && changed_since_hello {
                            let _ = local.send(&tools_update(Some(s.id), catalog.defs.clone()));
                        }
                    }
                }
                Some(GatewayMessage::SessionLifecycle(l)) if l.state == LifecycleState::ShutdownPending => {
                    seen.remove(&l.session_id);
                    readied.remove(&l.session_id);
                    let _ = local.send(&ProviderMessage::ShutdownReady(SessionRef { session_id: l.session_id }));
                }
                Some(GatewayMessage::Error(e)) => {
                    tracing::warn!(target: LOG_TARGET, server = %server.spec.name, code = ?e.code, message = %e.message, "the gateway refused a message of the MCP server's provider");
                }
                Some(_) => {}
            },
            Some(note) = notes.recv() => match note {
                Note::ToolsChanged => match list(core, server, &peer).await {
                    Ok(fresh) => {
                        catalog = fresh;
                        *catalog_shared.lock().unwrap() = catalog.clone();
                        changed_since_hello = true;
                        match &filter {
                            None => {
                                let _ = local.send(&tools_update(None, catalog.defs.clone()));
                            }
                            Some(_) => {
                                for id in &readied {
                                    let _ = local.send(&tools_update(Some(id.clone()), catalog.defs.clone()));
                                }
                            }
                        }
                        server.update(|s| {
                            s.tools = catalog.session_names();
                            s.tool_warnings = catalog.refused.clone();
                        });
                        core.events.emit(crate::events::GatewayEvent::StatusChanged);
                    }
                    Err(why) => tracing::warn!(target: LOG_TARGET, server = %server.spec.name, error = %why, "could not list the changed tools"),
                },
                Note::Progress(p) => {
                    let id = in_flight.lock().unwrap().progress.get(&p.progress_token).cloned();
                    if let Some(id) = id {
                        let message = match (p.message, p.total) {
                            (Some(m), _) => m,
                            (None, Some(total)) => format!("{} of {total}", p.progress),
                            (None, None) => format!("{}", p.progress),
                        };
                        let _ = local.send(&ProviderMessage::ToolProgress(ToolProgress { id, message }));
                    }
                }
                Note::Log(entry) => log(server, entry.level, entry.logger.as_deref(), &entry.data),
            },
        }
    };
    // Calls still in flight end now, each with one terminal result: the server is going
    // away, so they may be tried again once it is back.
    let pending: Vec<String> = in_flight.lock().unwrap().cancels.keys().cloned().collect();
    for id in pending {
        let why = match &ended {
            Ended::Failed(why) => format!(
                "MCP server '{}' failed during the call: {why}",
                server.spec.name
            ),
            _ => format!("MCP server '{}' stopped during the call", server.spec.name),
        };
        let _ = local.send(&ProviderMessage::ToolResult(ToolResult {
            id,
            error: Some(why),
            error_code: Some(ErrorCode::Disconnected),
            retryable: Some(true),
            ..ToolResult::default()
        }));
    }
    for token in in_flight.lock().unwrap().cancels.values() {
        token.cancel();
    }
    *server.pusher.lock().unwrap() = None;
    drop(local);
    ended
}

/// A `tools.update` replacing the tool list (of one session, or of every session).
fn tools_update(session_id: Option<String>, tools: Vec<ToolDef>) -> ProviderMessage {
    ProviderMessage::ToolsUpdate(ToolsUpdate {
        request_id: Some(crate::ids::short("tools")),
        session_id,
        tools,
        remove: None,
    })
}

/// The server's tools (every page), mapped to session names.
async fn list(core: &Core, server: &Server, peer: &Peer<RoleClient>) -> Result<Catalog, String> {
    let tools = match tokio::time::timeout(MCP_LIST_TIMEOUT, peer.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => return Err(format!("tools/list failed: {e}")),
        Err(_) => {
            return Err(format!(
                "it did not answer tools/list within {} s",
                MCP_LIST_TIMEOUT.as_secs()
            ))
        }
    };
    Ok(Catalog::build(&server.spec, &tools, &taken(core, server)))
}

/// Tool names held by other providers (or the gateway) in the sessions `server` is for.
fn taken(core: &Core, server: &Server) -> HashSet<String> {
    let me = provider_name(server);
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

/// The provider name a server's tools are offered under.
fn provider_name(server: &Server) -> String {
    format!("mcp-{}", server.spec.name)
}

/// Registers the tools: `hello`, bound to every session (a user server) or to its
/// session (a project server).
/// The sessions live at `hello` (registered by it).
async fn hello(
    server: &Server,
    local: &mut LocalProvider,
    catalog: &Catalog,
) -> Result<Vec<SessionInfo>, String> {
    // The first message of a local connection is `sessions`.
    let live = match local.recv().await {
        Some(GatewayMessage::Sessions(s)) => s.active,
        _ => Vec::new(),
    };
    let session = server.session_id.clone().unwrap_or_else(|| "all".into());
    let hello = json!({
        "type": "hello",
        "name": provider_name(server),
        "protocolVersion": tap_protocol::PROTOCOL_VERSION,
        "session": session,
        "metadata": {"mcpServer": server.spec.name, "transport": server.spec.transport.kind()},
        "tools": catalog.defs,
    });
    local
        .send_json(&hello)
        .map_err(|_| "the gateway closed its provider connection".to_string())?;
    loop {
        match local.recv().await {
            None => return Err("the gateway closed its provider connection".into()),
            Some(GatewayMessage::HelloAck(_)) => return Ok(live),
            Some(GatewayMessage::Error(e)) => {
                return Err(format!("the gateway refused its tools: {}", e.message))
            }
            Some(_) => {}
        }
    }
}

fn start_call(
    core: &Arc<Core>,
    peer: &Peer<RoleClient>,
    local: &LocalProvider,
    call: ToolCall,
    tool: Option<String>,
    in_flight: &Arc<Mutex<InFlight>>,
    gone: &mpsc::UnboundedSender<String>,
) {
    let reply = local.sender();
    let Some(tool) = tool else {
        let _ = reply.send(&ProviderMessage::ToolResult(ToolResult {
            id: call.id,
            error: Some(format!("no tool '{}' on this MCP server", call.tool)),
            error_code: Some(ErrorCode::NotFound),
            ..ToolResult::default()
        }));
        return;
    };
    let cancel = CancellationToken::new();
    {
        let mut table = in_flight.lock().unwrap();
        table.cancels.insert(call.id.clone(), cancel.clone());
        table
            .sessions
            .push((call.id.clone(), call.session_id.clone()));
    }
    let peer = peer.clone();
    let in_flight = in_flight.clone();
    let gone = gone.clone();
    core.tasks.spawn(async move {
        let id = call.id.clone();
        let result = call_tool(&peer, call, tool, cancel, &in_flight).await;
        // Absent: the run ended and already answered the call.
        if !in_flight.lock().unwrap().finish(&id) {
            return;
        }
        let result = match result {
            Ok(result) => result,
            Err(Lost(why)) => {
                let _ = gone.send(why.clone());
                ToolResult {
                    id: id.clone(),
                    error: Some(why),
                    error_code: Some(ErrorCode::Disconnected),
                    retryable: Some(true),
                    ..ToolResult::default()
                }
            }
        };
        let _ = reply.send(&ProviderMessage::ToolResult(result));
    });
}

/// The connection to the server was lost during a call.
struct Lost(String);

async fn call_tool(
    peer: &Peer<RoleClient>,
    call: ToolCall,
    tool: String,
    cancel: CancellationToken,
    in_flight: &Mutex<InFlight>,
) -> Result<ToolResult, Lost> {
    let mut params = CallToolRequestParams::new(tool);
    if let Json::Object(args) = call.args {
        params = params.with_arguments(args);
    }
    let mut meta = RequestMetaObject::new();
    if let Some(tp) = &call.traceparent {
        meta.insert("traceparent".into(), Json::String(tp.clone()));
    }
    let options = PeerRequestOptions::no_options().with_meta(meta);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = match peer.send_cancellable_request(request, options).await {
        Ok(h) => h,
        Err(e) => return Err(Lost(format!("the call could not be sent: {e}"))),
    };
    in_flight
        .lock()
        .unwrap()
        .progress
        .insert(handle.progress_token.clone(), call.id.clone());
    let request_id = handle.id.clone();
    let answer = tokio::select! {
        answer = handle.await_response() => answer,
        _ = cancel.cancelled() => {
            let note = CancelledNotificationParam::new(Some(request_id), Some("cancelled by the gateway".into()));
            let _ = peer.notify_cancelled(note).await;
            return Ok(ToolResult {
                id: call.id,
                error: Some("Cancelled".into()),
                error_code: Some(ErrorCode::Cancelled),
                ..ToolResult::default()
            });
        }
    };
    let failure = |code: ErrorCode, message: String| ToolResult {
        id: call.id.clone(),
        error: Some(message),
        error_code: Some(code),
        ..ToolResult::default()
    };
    Ok(match answer {
        Ok(ServerResult::CallToolResult(result)) => match serde_json::to_value(&result) {
            Ok(data) => ToolResult {
                id: call.id.clone(),
                data: Some(data),
                ..ToolResult::default()
            },
            Err(e) => failure(
                ErrorCode::Internal,
                format!("its result could not be read: {e}"),
            ),
        },
        Ok(other) => failure(
            ErrorCode::Internal,
            format!(
                "it answered tools/call with something else: {:?}",
                kind_of(&other)
            ),
        ),
        Err(ServiceError::McpError(e)) => failure(
            ErrorCode::Other("MCP_ERROR".into()),
            format!("{} ({})", e.message, e.code.0),
        ),
        Err(ServiceError::TransportClosed) | Err(ServiceError::TransportSend(_)) => {
            return Err(Lost(
                "the connection to the server closed during the call".into(),
            ))
        }
        Err(e) => failure(ErrorCode::Internal, e.to_string()),
    })
}

fn kind_of(result: &ServerResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
        })
        .unwrap_or_default()
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

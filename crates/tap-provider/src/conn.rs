//! The provider's connection: bind (auth, pick a session, hello), then one task that
//! answers calls, sends pushes and updates, and reconnects with the reconnect token when
//! the socket drops.

use crate::discovery::{discover, Endpoint, ProcessEnv};
use crate::tool::{CallContext, Tool, ToolError};
use crate::types::{Config, ConnectError, Event, PushOptions, SessionChoice};
use futures_util::{SinkExt, StreamExt};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tap_protocol::provider::{
    Auth, GatewayMessage, Goodbye, Hello, LifecycleState, ProviderMessage, Push, PushLevel,
    SessionInfo, SessionRef, ToolProgress, ToolResult, ToolsUpdate,
};
use tap_protocol::ErrorCode;
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What the handle and the connection task share.
pub(crate) struct Shared {
    pub tools: Mutex<HashMap<String, Tool>>,
    pub events: broadcast::Sender<Event>,
}

/// From the handle to the connection task.
pub(crate) enum Command {
    Push {
        level: PushLevel,
        event: String,
        options: PushOptions,
    },
    SetTools {
        tools: Vec<Tool>,
        done: oneshot::Sender<Result<(), ConnectError>>,
    },
    Close,
}

/// A bound connection.
pub(crate) struct Bound {
    ws: Ws,
    pub provider_id: String,
    session_id: String,
    reconnect_token: Option<String>,
}

fn unreachable(url: &str, why: impl std::fmt::Display) -> ConnectError {
    ConnectError::Unreachable {
        url: url.to_string(),
        why: why.to_string(),
    }
}

async fn send(
    ws: &mut Ws,
    msg: &ProviderMessage,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    let text = serde_json::to_string(msg).expect("protocol messages serialize");
    ws.send(Message::text(text)).await
}

/// The next gateway message; `None` when the socket ended.
async fn recv(ws: &mut Ws) -> Option<GatewayMessage> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => {
                match tap_protocol::decode::<GatewayMessage>(t.as_bytes(), GatewayMessage::TYPES) {
                    Ok(m) => return Some(m),
                    // A message this SDK does not know: a newer gateway; skip it.
                    Err(e) => tracing::debug!(error = %e.message(), "gateway message skipped"),
                }
            }
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

fn choose(choice: &SessionChoice, sessions: &[SessionInfo]) -> Option<String> {
    match choice {
        SessionChoice::All => Some("all".into()),
        SessionChoice::Foreground => sessions
            .iter()
            .find(|s| s.foreground == Some(true))
            .or(sessions.first().filter(|_| sessions.len() == 1))
            .map(|s| s.id.clone()),
        SessionChoice::Named(name) => sessions
            .iter()
            .find(|s| &s.id == name || s.label.as_deref() == Some(name))
            .map(|s| s.id.clone()),
        SessionChoice::Chooser(f) => f(sessions),
    }
}

fn refused(code: ErrorCode, message: String) -> ConnectError {
    ConnectError::Refused { code, message }
}

/// Connects, authenticates, picks the session (waiting for one) and binds. With
/// `reconnect`, asks for the previous binding back (`session`, `reconnect_token`).
pub(crate) async fn bind(
    b: &Config,
    ep: &Endpoint,
    shared: &Shared,
    reconnect: Option<(&str, &str)>,
) -> Result<(Bound, String), ConnectError> {
    let (mut ws, _) = tokio_tungstenite::connect_async(ep.url.as_str())
        .await
        .map_err(|e| unreachable(&ep.url, e))?;
    let auth = ProviderMessage::Auth(Auth {
        token: Some(ep.token.clone()),
        mode: None,
        name: None,
        metadata: None,
    });
    send(&mut ws, &auth)
        .await
        .map_err(|e| unreachable(&ep.url, e))?;
    let mut sessions = loop {
        match recv(&mut ws).await {
            Some(GatewayMessage::Sessions(s)) => break s.active,
            Some(GatewayMessage::Error(e)) => return Err(refused(e.code, e.message)),
            Some(_) => continue,
            None => return Err(unreachable(&ep.url, "the gateway closed the connection")),
        }
    };
    let session = match reconnect {
        Some((session, _)) => session.to_string(),
        None => loop {
            if let Some(id) = choose(&b.session, &sessions) {
                break id;
            }
            match recv(&mut ws).await {
                Some(GatewayMessage::SessionsUpdated(s)) => sessions = s.active,
                Some(_) => continue,
                None => return Err(unreachable(&ep.url, "the gateway closed the connection")),
            }
        },
    };
    let tools = shared
        .tools
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .map(|t| t.def.clone())
        .collect();
    let hello = ProviderMessage::Hello(Box::new(Hello {
        name: b.name.clone(),
        protocol_version: 2,
        session: Some(session.clone()),
        instance: b.instance.clone(),
        reconnect_token: reconnect.map(|(_, t)| t.to_string()),
        tools: Some(tools),
        hooks: b.hooks.clone(),
        subscribe: (!b.subscribe.is_empty()).then(|| b.subscribe.clone()),
        context: b.context.clone(),
        ..Default::default()
    }));
    send(&mut ws, &hello)
        .await
        .map_err(|e| unreachable(&ep.url, e))?;
    loop {
        match recv(&mut ws).await {
            Some(GatewayMessage::HelloAck(ack)) => {
                let session_id = ack.session_id.clone().unwrap_or(session);
                let bound = Bound {
                    ws,
                    provider_id: ack.provider_id,
                    session_id: session_id.clone(),
                    reconnect_token: ack.reconnect_token,
                };
                return Ok((bound, session_id));
            }
            Some(GatewayMessage::Error(e)) => return Err(refused(e.code, e.message)),
            Some(_) => continue,
            None => return Err(unreachable(&ep.url, "the gateway closed the connection")),
        }
    }
}

/// How the connection task goes on after a frame.
enum Next {
    Go,
    Dropped,
    Ended(String),
}

struct Task {
    shared: Arc<Shared>,
    progress: mpsc::UnboundedSender<(String, String)>,
    results: mpsc::UnboundedSender<ToolResult>,
    calls: HashMap<String, CancellationToken>,
    updates: HashMap<String, oneshot::Sender<Result<(), ConnectError>>>,
    next_request: u64,
}

/// Serves the bound connection until the provider ends.
pub(crate) async fn run(
    b: Config,
    endpoint: Endpoint,
    shared: Arc<Shared>,
    mut bound: Bound,
    mut commands: mpsc::UnboundedReceiver<Command>,
    ended: watch::Sender<Option<String>>,
) {
    let (progress, mut progress_rx) = mpsc::unbounded_channel();
    let (results, mut results_rx) = mpsc::unbounded_channel();
    let mut t = Task {
        shared: shared.clone(),
        progress,
        results,
        calls: HashMap::new(),
        updates: HashMap::new(),
        next_request: 0,
    };
    let mut held: VecDeque<Command> = VecDeque::new();
    let mut endpoint = endpoint;
    loop {
        let next = tokio::select! {
            // Progress before results: a handler's progress sent just before it returned
            // must leave first (the gateway drops progress for a finished call).
            biased;
            Some((id, message)) = progress_rx.recv() => {
                let m = ProviderMessage::ToolProgress(ToolProgress { id, message });
                if send(&mut bound.ws, &m).await.is_err() { Next::Dropped } else { Next::Go }
            }
            Some(result) = results_rx.recv() => {
                t.calls.remove(&result.id);
                if send(&mut bound.ws, &ProviderMessage::ToolResult(result)).await.is_err() { Next::Dropped } else { Next::Go }
            }
            cmd = async { match held.pop_front() { Some(c) => Some(c), None => commands.recv().await } } => match cmd {
                Some(Command::Close) | None => {
                    let bye = ProviderMessage::Goodbye(Goodbye { reason: Some("closed".into()) });
                    let _ = send(&mut bound.ws, &bye).await;
                    let _ = bound.ws.close(None).await;
                    Next::Ended("closed".into())
                }
                Some(cmd) => t.command(&mut bound, cmd).await,
            },
            msg = recv(&mut bound.ws) => match msg {
                Some(m) => t.gateway(&mut bound, m).await,
                None => Next::Dropped,
            },
        };
        match next {
            Next::Go => {}
            Next::Ended(why) => {
                let _ = ended.send(Some(why));
                return;
            }
            Next::Dropped => {
                let _ = shared.events.send(Event::Disconnected);
                // Calls in flight cannot be answered on a new socket: the gateway failed them.
                for (_, c) in t.calls.drain() {
                    c.cancel();
                }
                match reconnect(&b, &mut endpoint, &shared, &bound, &mut commands, &mut held).await
                {
                    Some((new, restored)) => {
                        bound = new;
                        let _ = shared.events.send(Event::Reconnected { restored });
                    }
                    None => {
                        let _ = ended.send(Some("closed while reconnecting".into()));
                        return;
                    }
                }
            }
        }
    }
}

impl Task {
    async fn command(&mut self, bound: &mut Bound, cmd: Command) -> Next {
        let msg = match cmd {
            Command::Push {
                level,
                event,
                options,
            } => ProviderMessage::Push(Push {
                level,
                event: Some(event),
                prompt: options.prompt,
                stream: options.stream,
                session_id: None,
                broadcast: false,
                metadata: options.metadata,
            }),
            Command::SetTools { tools, done } => {
                self.next_request += 1;
                let request_id = format!("tools-{}", self.next_request);
                let defs = tools.iter().map(|t| t.def.clone()).collect();
                *self.shared.tools.lock().unwrap_or_else(|e| e.into_inner()) =
                    tools.into_iter().map(|t| (t.def.name.clone(), t)).collect();
                self.updates.insert(request_id.clone(), done);
                ProviderMessage::ToolsUpdate(ToolsUpdate {
                    request_id: Some(request_id),
                    session_id: None,
                    tools: defs,
                    remove: None,
                })
            }
            Command::Close => unreachable!("handled by the loop"),
        };
        match send(&mut bound.ws, &msg).await {
            Ok(()) => Next::Go,
            Err(_) => Next::Dropped,
        }
    }

    async fn gateway(&mut self, bound: &mut Bound, msg: GatewayMessage) -> Next {
        let events = &self.shared.events;
        match msg {
            GatewayMessage::ToolCall(c) => self.start_call(c),
            GatewayMessage::ToolCancel(c) => {
                if let Some(token) = self.calls.get(&c.id) {
                    token.cancel();
                }
            }
            GatewayMessage::SessionLifecycle(l) => match l.state {
                LifecycleState::ShutdownPending if bound.session_id == "all" => {
                    // Bound to every session: only that one ends for this provider.
                    let ready = ProviderMessage::ShutdownReady(SessionRef {
                        session_id: l.session_id,
                    });
                    if send(&mut bound.ws, &ready).await.is_err() {
                        return Next::Dropped;
                    }
                }
                LifecycleState::ShutdownPending => {
                    let reason = format!("session {} ended", l.session_id);
                    let bye = ProviderMessage::Goodbye(Goodbye {
                        reason: Some(reason.clone()),
                    });
                    let _ = send(&mut bound.ws, &bye).await;
                    let _ = bound.ws.close(None).await;
                    return Next::Ended(reason);
                }
                LifecycleState::Idle => {
                    let _ = events.send(Event::Idle(l.session_id));
                }
                LifecycleState::Started => {}
            },
            GatewayMessage::SessionEvent(e) => {
                let _ = events.send(Event::Session {
                    session_id: e.session_id,
                    event: e.event,
                    data: e.data,
                });
            }
            GatewayMessage::Ack(a) => {
                if let Some(done) = self.updates.remove(&a.request_id) {
                    let _ = done.send(Ok(()));
                }
            }
            GatewayMessage::Error(e) => {
                match e.request_id.as_ref().and_then(|r| self.updates.remove(r)) {
                    Some(done) => {
                        let _ = done.send(Err(refused(e.code, e.message)));
                    }
                    None => {
                        let _ = events.send(Event::Error {
                            code: e.code,
                            message: e.message,
                            reply_to: e.reply_to,
                        });
                    }
                }
            }
            _ => {}
        }
        Next::Go
    }

    /// Runs a call's handler in a task of its own: a panic or a slow handler never stops
    /// the connection.
    fn start_call(&mut self, c: tap_protocol::provider::ToolCall) {
        let tool = self
            .shared
            .tools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&c.tool)
            .cloned();
        let results = self.results.clone();
        let fail = |e: ToolError| ToolResult {
            id: c.id.clone(),
            error: Some(e.message),
            error_code: Some(e.code),
            retryable: e.retryable.then_some(true),
            ..Default::default()
        };
        let Some(tool) = tool else {
            let _ = results.send(fail(ToolError::new(
                "NOT_FOUND",
                format!("No tool '{}'", c.tool),
            )));
            return;
        };
        if let Err(e) = tool.check(&c.args) {
            let _ = results.send(fail(e));
            return;
        }
        let cancelled = CancellationToken::new();
        self.calls.insert(c.id.clone(), cancelled.clone());
        let ctx = CallContext {
            call_id: c.id.clone(),
            session_id: c.session_id.clone(),
            cancelled: cancelled.clone(),
            progress: self.progress.clone(),
        };
        let timeout = tool.def.timeout.map(Duration::from_millis);
        let handler = tokio::spawn((tool.handler)(c.args, ctx));
        let abort = handler.abort_handle();
        tokio::spawn(async move {
            let deadline = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            let outcome = tokio::select! {
                joined = handler => match joined {
                    Ok(r) => r,
                    Err(e) if e.is_panic() => Err(ToolError::internal(panic_message(e.into_panic()))),
                    Err(_) => Err(ToolError::new("CANCELLED", "The call was cancelled")),
                },
                _ = cancelled.cancelled() => {
                    abort.abort();
                    Err(ToolError::new("CANCELLED", "The call was cancelled"))
                }
                _ = deadline => {
                    cancelled.cancel();
                    abort.abort();
                    Err(ToolError::new("TIMEOUT", "The handler did not finish within the tool's timeout"))
                }
            };
            let result = match outcome {
                Ok(data) => ToolResult {
                    id: c.id,
                    data: Some(data),
                    ..Default::default()
                },
                Err(e) => ToolResult {
                    id: c.id,
                    error: Some(e.message),
                    error_code: Some(e.code),
                    retryable: e.retryable.then_some(true),
                    ..Default::default()
                },
            };
            let _ = results.send(result);
        });
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown".into());
    format!("The handler panicked: {what}")
}

/// Binds again after a drop: with the reconnect token while it is valid (the binding comes
/// back), fresh after. Backs off between attempts; `None` if the handle asked to close.
async fn reconnect(
    b: &Config,
    endpoint: &mut Endpoint,
    shared: &Shared,
    old: &Bound,
    commands: &mut mpsc::UnboundedReceiver<Command>,
    held: &mut VecDeque<Command>,
) -> Option<(Bound, bool)> {
    let window_ends = Instant::now() + crate::RECONNECT_WINDOW;
    let mut backoff = crate::RECONNECT_FIRST_BACKOFF;
    loop {
        // The gateway may have restarted with a new token (or port): look again, unless
        // the endpoint was given.
        if b.endpoint.is_none() {
            if let Ok(e) = discover(&ProcessEnv) {
                *endpoint = e;
            }
        }
        let restore = Instant::now() < window_ends;
        let previous = old
            .reconnect_token
            .as_deref()
            .filter(|_| restore)
            .map(|t| (old.session_id.as_str(), t));
        match bind(b, endpoint, shared, previous).await {
            Ok((bound, _)) => return Some((bound, previous.is_some())),
            Err(e) => tracing::debug!(error = %e, "reconnect failed; retrying"),
        }
        let wait = tokio::time::sleep(backoff);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                _ = &mut wait => break,
                cmd = commands.recv() => match cmd {
                    Some(Command::Close) | None => return None,
                    // Pushes and updates wait for the new socket.
                    Some(c) => held.push_back(c),
                },
            }
        }
        backoff = (backoff * 2).min(crate::RECONNECT_MAX_BACKOFF);
    }
}

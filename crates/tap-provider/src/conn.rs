//! The connection task: one per provider. It owns the socket, sends what the handle and the
//! handlers' tasks ask, hands the gateway's messages to whoever waits for them, and when the
//! socket drops binds again (with the reconnect token within 30 s, afresh after).

use crate::bind::{self, recv, send, Bound, Previous, Ws};
use crate::discovery::{discover, Endpoint, ProcessEnv};
use crate::dispatch::{self, Answer};
use crate::outbox::Outgoing;
use crate::requests::{History, Waiters};
use crate::state::{Binding, Shared};
use crate::types::{Error, Event};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tap_protocol::provider::{
    FilterSet, GatewayMessage, Goodbye, LifecycleState, ProviderMessage, Push, SessionRef,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// From the handle to the connection task.
pub(crate) enum Command {
    Push {
        push: Push,
        done: oneshot::Sender<Result<(), Error>>,
    },
    /// An update (`tools.update`, `hooks.update`, `context.update`, `filter.set`); the task
    /// gives it its request id.
    Update {
        msg: ProviderMessage,
        done: oneshot::Sender<Result<u64, Error>>,
    },
    Query {
        streams: Option<Vec<String>>,
        last: Option<usize>,
        done: oneshot::Sender<Result<History, Error>>,
    },
    Close,
}

/// How the connection task goes on after a frame.
enum Next {
    Go,
    Dropped,
    Ended(String),
}

struct Task {
    shared: Arc<Shared>,
    ws: Ws,
    /// Counts binds: answers stamped with an older one are not sent.
    generation: u64,
    outbox: mpsc::UnboundedSender<Outgoing>,
    calls: HashMap<String, CancellationToken>,
    waiters: Waiters,
    previous: Previous,
    /// Set by each bind, cleared once its filters are sent.
    filters_due: bool,
}

/// Serves the bound connection until the provider ends.
pub(crate) async fn run(
    shared: Arc<Shared>,
    mut endpoint: Endpoint,
    bound: Bound,
    mut commands: mpsc::UnboundedReceiver<Command>,
    ended: watch::Sender<Option<String>>,
) {
    let (outbox, mut outgoing) = mpsc::unbounded_channel();
    let mut t = Task {
        shared: shared.clone(),
        ws: bound.ws,
        generation: 0,
        outbox,
        calls: HashMap::new(),
        waiters: Waiters::default(),
        previous: Previous {
            session_id: String::new(),
            provider_id: String::new(),
            token: None,
        },
        filters_due: false,
    };
    t.bound(
        bound.provider_id,
        bound.session_id,
        bound.reconnect_token,
        bound.persist_dir,
    );
    let mut held: VecDeque<Command> = VecDeque::new();
    loop {
        let mut next = t.refilter().await;
        if matches!(next, Next::Go) {
            next = tokio::select! {
                // Handlers' frames first, in the order they were queued: a call's progress
                // leaves before its result (the gateway drops progress for a finished call).
                biased;
                Some(out) = outgoing.recv() => t.outgoing(out).await,
                cmd = async { match held.pop_front() { Some(c) => Some(c), None => commands.recv().await } } => match cmd {
                    Some(Command::Close) | None => {
                        let bye = ProviderMessage::Goodbye(Goodbye { reason: Some("closed".into()) });
                        let _ = send(&mut t.ws, &bye).await;
                        let _ = t.ws.close(None).await;
                        Next::Ended("closed".into())
                    }
                    Some(cmd) => t.command(cmd).await,
                },
                msg = recv(&mut t.ws) => match msg {
                    Some(m) => t.gateway(m).await,
                    None => Next::Dropped,
                },
            };
        }
        match next {
            Next::Go => {}
            Next::Ended(why) => {
                t.waiters.disconnected();
                let _ = ended.send(Some(why));
                return;
            }
            Next::Dropped => {
                shared.emit(Event::Disconnected);
                // Calls in flight cannot be answered on a new socket: the gateway failed them.
                for (_, c) in t.calls.drain() {
                    c.cancel();
                }
                t.waiters.disconnected();
                let previous = t.previous.clone();
                match reconnect(&shared, &mut endpoint, previous, &mut commands, &mut held).await {
                    Some(b) => {
                        t.ws = b.ws;
                        t.bound(
                            b.provider_id,
                            b.session_id,
                            b.reconnect_token,
                            b.persist_dir,
                        );
                        shared.emit(Event::Reconnected {
                            restored: b.restored,
                        });
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
    /// A new binding: what the handle reports, what the next reconnect asks back.
    fn bound(
        &mut self,
        provider_id: String,
        session_id: String,
        token: Option<String>,
        persist_dir: Option<std::path::PathBuf>,
    ) {
        self.generation += 1;
        self.filters_due = true;
        self.previous = Previous {
            session_id: session_id.clone(),
            provider_id: provider_id.clone(),
            token,
        };
        *self.shared.binding() = Binding {
            provider_id,
            session_id,
            persist_dir,
        };
    }

    /// Sets the declared stream filters after a bind (the gateway starts every binding
    /// without any); nothing on later turns.
    async fn refilter(&mut self) -> Next {
        if !std::mem::take(&mut self.filters_due) {
            return Next::Go;
        }
        let filters: Vec<_> = self.shared.decl().filters.clone().into_iter().collect();
        for (stream, rules) in filters {
            let msg = self
                .waiters
                .unanswered(ProviderMessage::FilterSet(FilterSet {
                    request_id: None,
                    session_id: None,
                    stream,
                    rules,
                }));
            if let Next::Dropped = self.send(&msg).await {
                return Next::Dropped;
            }
        }
        Next::Go
    }

    async fn outgoing(&mut self, out: Outgoing) -> Next {
        if out.generation != self.generation {
            return Next::Go;
        }
        if let ProviderMessage::ToolResult(r) = &out.msg {
            self.calls.remove(&r.id);
        }
        self.send(&out.msg).await
    }

    async fn send(&mut self, msg: &ProviderMessage) -> Next {
        match send(&mut self.ws, msg).await {
            Ok(()) => Next::Go,
            Err(_) => Next::Dropped,
        }
    }

    async fn command(&mut self, cmd: Command) -> Next {
        match cmd {
            Command::Push { push, done } => {
                let barrier = self.waiters.push(done);
                match self.send(&ProviderMessage::Push(push)).await {
                    Next::Go => self.send(&barrier).await,
                    other => other,
                }
            }
            Command::Update { msg, done } => {
                let msg = self.waiters.update(msg, done);
                self.send(&msg).await
            }
            Command::Query {
                streams,
                last,
                done,
            } => {
                let msg = self.waiters.read(streams, last, done);
                self.send(&msg).await
            }
            Command::Close => unreachable!("handled by the loop"),
        }
    }

    fn answer(&self) -> Answer {
        Answer {
            shared: self.shared.clone(),
            outbox: self.outbox.clone(),
            generation: self.generation,
        }
    }

    async fn gateway(&mut self, msg: GatewayMessage) -> Next {
        match msg {
            GatewayMessage::ToolCall(c) => {
                let id = c.id.clone();
                if let Some(token) = dispatch::call(self.answer(), c) {
                    self.calls.insert(id, token);
                }
            }
            GatewayMessage::ToolCancel(c) => {
                if let Some(token) = self.calls.get(&c.id) {
                    token.cancel();
                }
            }
            GatewayMessage::GateCheck(c) => dispatch::gate(self.answer(), c),
            GatewayMessage::TransformRequest(r) => dispatch::transform(self.answer(), r),
            GatewayMessage::SessionLifecycle(l) => return self.lifecycle(l).await,
            GatewayMessage::SessionEvent(e) => self.shared.emit(Event::Session {
                session_id: e.session_id,
                event: e.event,
                data: e.data,
            }),
            GatewayMessage::Ack(a) => self.waiters.ack(a),
            GatewayMessage::StreamHistory(h) => self.waiters.history(h),
            GatewayMessage::Error(e) => {
                if let Some(e) = self.waiters.error(e) {
                    self.shared.emit(Event::Error {
                        code: e.code,
                        message: e.message,
                        reply_to: e.reply_to,
                    });
                }
            }
            _ => {}
        }
        Next::Go
    }

    async fn lifecycle(&mut self, l: tap_protocol::provider::SessionLifecycle) -> Next {
        match l.state {
            LifecycleState::ShutdownPending if self.previous.session_id == "all" => {
                // Bound to every session: only that one ends for this provider.
                let ready = ProviderMessage::ShutdownReady(SessionRef {
                    session_id: l.session_id,
                });
                self.send(&ready).await
            }
            LifecycleState::ShutdownPending => {
                let reason = format!("session {} ended", l.session_id);
                let bye = ProviderMessage::Goodbye(Goodbye {
                    reason: Some(reason.clone()),
                });
                let _ = send(&mut self.ws, &bye).await;
                let _ = self.ws.close(None).await;
                Next::Ended(reason)
            }
            LifecycleState::Idle => {
                self.shared.emit(Event::Idle(l.session_id));
                Next::Go
            }
            LifecycleState::Started => Next::Go,
        }
    }
}

/// Binds again after a drop: asking the previous binding back with its reconnect token
/// while that is valid, afresh after. Backs off between attempts; `None` if the handle
/// asked to close meanwhile. Pushes and updates asked meanwhile wait in `held`.
async fn reconnect(
    shared: &Shared,
    endpoint: &mut Endpoint,
    mut previous: Previous,
    commands: &mut mpsc::UnboundedReceiver<Command>,
    held: &mut VecDeque<Command>,
) -> Option<Bound> {
    let window_ends = Instant::now() + crate::RECONNECT_WINDOW;
    let mut backoff = crate::RECONNECT_FIRST_BACKOFF;
    loop {
        // The gateway may have restarted with a new token (or port): look again, unless
        // the endpoint was given.
        if shared.config.endpoint.is_none() {
            if let Ok(e) = discover(&ProcessEnv) {
                *endpoint = e;
            }
        }
        if Instant::now() >= window_ends {
            previous.token = None;
        }
        let attempt = bind::bind(shared, endpoint, Some(previous.clone()));
        match holding(attempt, commands, held).await? {
            Ok(bound) => return Some(bound),
            Err(e) => tracing::debug!(error = %e, "reconnect failed; retrying"),
        }
        holding(tokio::time::sleep(backoff), commands, held).await?;
        backoff = (backoff * 2).min(crate::RECONNECT_MAX_BACKOFF);
    }
}

/// Runs `fut` while the handle's commands wait in `held`; `None` as soon as the handle
/// closes (a bind may wait long for its session, and a close must not wait for it).
async fn holding<T>(
    fut: impl std::future::Future<Output = T>,
    commands: &mut mpsc::UnboundedReceiver<Command>,
    held: &mut VecDeque<Command>,
) -> Option<T> {
    tokio::pin!(fut);
    loop {
        tokio::select! {
            out = &mut fut => return Some(out),
            cmd = commands.recv() => match cmd {
                Some(Command::Close) | None => return None,
                Some(c) => held.push_back(c),
            },
        }
    }
}

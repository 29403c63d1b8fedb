//! The one connection loop every protocol runs on (provider, session host, control).
//!
//! The loop alone reads and writes its WebSocket. Everything else reaches the peer by
//! pushing ready-made frames into the connection's outbound queue, which the loop writes in
//! order and in batches, so frames leave in the order they were produced and a slow or
//! hostile peer only ever stalls its own task. That queue is bounded (`socket::outbound`)
//! and every batch must be taken within the kind's write timeout: a peer that stops
//! reading is dropped, not buffered for. The loop owns what every protocol needs the
//! same way: the auth deadline, the pre-auth byte budget (lifted once the handler says the
//! peer authenticated), the hard frame cap, closing on the gateway's stop or the handler's
//! kill token, the bounded final flush and close frame, and a tracing span per connection.
//! What the frames mean is the [`Handler`]'s business.

use super::kind::Kind;
use super::outbound::OutReceiver;
use super::upgrade::WsStream;
use crate::diagnostics::recorder::Recorder;
use crate::diagnostics::Limit;
use crate::limits::SOCKET_WRITE_BATCH;
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tap_protocol::limits::{AUTH_TIMEOUT, CLOSE_HANDSHAKE_TIMEOUT};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// What a peer that did not authenticate in time is told, whatever its protocol.
pub(crate) fn auth_timeout_message() -> String {
    format!("No 'auth' within {} seconds", AUTH_TIMEOUT.as_secs())
}

/// What the loop does after the handler saw a frame (or an event of its own).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Continue,
    /// The peer authenticated: the auth deadline and the pre-auth byte budget are lifted.
    Authed,
    /// Still unauthenticated, but waiting for the user (a pairing code) until this instant,
    /// which replaces the auth deadline.
    WaitUntil(Instant),
    /// Write what is queued, send a close frame with this code and reason, and end.
    Close(CloseCode, &'static str),
    /// The handler holds work it could not hand on (the ledger's queue is full): the loop
    /// awaits [`Handler::relieve`] before it reads the next frame, so the peer is slowed
    /// instead of the gateway buffering without bound.
    Backpressure,
}

/// One protocol on the connection loop.
pub(crate) trait Handler: Send {
    /// An incoming data frame (text or binary).
    fn on_frame(&mut self, bytes: &[u8]) -> Step;

    /// The peer did not authenticate in time (or its pairing code expired): count it and
    /// queue the refusal. The connection then closes with `Policy`.
    fn on_auth_deadline(&mut self);

    /// Something else this protocol waits for (the control plane's engine events). Polled
    /// only while nothing is queued for the peer, so a peer that does not read is not
    /// sent more than it takes.
    fn background(&mut self) -> impl Future<Output = Step> + Send {
        std::future::pending()
    }

    /// Hands on what [`Step::Backpressure`] said is held, waiting as long as it takes.
    fn relieve(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// The connection is over; called before the final flush.
    fn closing(&mut self) {}

    /// After the final flush: `unsent` holds the frames queued but never written.
    fn closed(self, _unsent: Vec<Message>)
    where
        Self: Sized,
    {
    }
}

/// The parts of a connection the loop owns besides the handler.
pub(crate) struct Socket {
    pub ws: WsStream,
    pub kind: Kind,
    pub remote: SocketAddr,
    /// The outbound queue's receiving end; its senders live wherever the protocol keeps them.
    /// An overflow cancels `kill`.
    pub out: OutReceiver,
    /// Closes this connection (a revoke, a deny, a session host resumed elsewhere); a child
    /// of the gateway's `stopping`, so one branch of the loop watches both (each watched
    /// token costs a waiter registration on every turn of a busy loop).
    pub kill: CancellationToken,
    /// The gateway's stop: not watched (the kill token is its child), only read to say in
    /// the close frame why the connection ends.
    pub stopping: CancellationToken,
    /// A batch the peer does not take within this long ends the connection.
    pub write_timeout: Duration,
    pub diagnostics: Recorder,
    /// Authenticated before the upgrade (an HTTP header): no auth deadline, no budget.
    pub authed: bool,
}

/// Runs `handler` on `socket` until either side ends the connection.
///
/// Not an `async fn`, and neither is [`serve`]: an async fn keeps each argument twice (as
/// its capture and as the local it is moved into), and every layer of them between the
/// socket's task and this loop kept another copy of the socket and the handler. Built
/// this way the loop's future holds one of each, as long as the connection lives
/// (docs/performance-log.md, run 33).
pub(crate) fn run<H: Handler>(socket: Socket, handler: H) -> impl Future<Output = ()> + Send {
    let span = tracing::info_span!("conn", kind = socket.kind.name(), remote = %socket.remote);
    serve(socket, handler).instrument(span)
}

#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep the socket and the handler twice (see `run`)"
)]
fn serve<H: Handler>(mut socket: Socket, mut handler: H) -> impl Future<Output = ()> + Send {
    async move {
        // Borrowed in place: moving the fields out would be a second copy of the socket.
        let Socket {
            ws,
            kind,
            out,
            kill,
            stopping,
            write_timeout,
            diagnostics,
            authed,
            ..
        } = &mut socket;
        let (kind, write_timeout) = (*kind, *write_timeout);
        let mut authed = *authed;
        if authed {
            ws.get_mut().lift_budget();
        }
        let deadline = tokio::time::sleep(AUTH_TIMEOUT);
        tokio::pin!(deadline);
        let overflow = out.overflow();
        let end = loop {
            let step = tokio::select! {
                biased;
                Some(msg) = out.recv() => {
                    // A peer that stopped reading blocks this write; its queue overflowing
                    // meanwhile ends the wait at once. The write is polled first: one the
                    // socket takes at once (the common case) registers no waiter on the
                    // overflow token, and an overflow it raced is caught just after.
                    let written = tokio::select! {
                        biased;
                        r = write_batch(ws, msg, out, write_timeout) => r,
                        _ = overflow.cancelled() => Err(Stall::Overflow),
                    };
                    match written {
                        Ok(()) if out.overflowed() => break End::Dropped(Stall::Overflow),
                        Ok(()) => Step::Continue,
                        Err(Stall::Failed) => break End::Gone,
                        Err(stall) => break End::Dropped(stall),
                    }
                },
                _ = kill.cancelled() => break if out.overflowed() {
                    End::Dropped(Stall::Overflow)
                } else {
                    End::Close(
                        CloseCode::Away,
                        if stopping.is_cancelled() { "gateway stopping" } else { "closed by the gateway" },
                    )
                },
                _ = &mut deadline, if !authed => {
                    handler.on_auth_deadline();
                    break End::Close(CloseCode::Policy, "no auth in time");
                }
                incoming = ws.next() => match incoming {
                    Some(Ok(Message::Text(t))) => handler.on_frame(t.as_bytes()),
                    Some(Ok(Message::Binary(b))) => handler.on_frame(&b),
                    // The peer closes: tungstenite has queued the answering close frame (the
                    // peer's own code); it still has to be written.
                    Some(Ok(Message::Close(_))) => break End::PeerClosed,
                    None => break End::Gone,
                    // Ping and pong are answered by tungstenite.
                    Some(Ok(_)) => Step::Continue,
                    Some(Err(tungstenite::Error::Capacity(e))) => {
                        tracing::info!(error = %e, "frame above the hard cap; closing");
                        diagnostics.limit_hit(Limit::FrameCap);
                        break End::Close(CloseCode::Size, "frame too large");
                    }
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "socket error");
                        break End::Gone;
                    }
                },
                step = handler.background(), if out.is_empty() => step,
            };
            match step {
                Step::Continue => {}
                Step::Authed => {
                    authed = true;
                    ws.get_mut().lift_budget();
                }
                Step::WaitUntil(until) => {
                    deadline.as_mut().reset(until);
                    ws.get_mut().keep_slot();
                }
                Step::Close(code, reason) => break End::Close(code, reason),
                Step::Backpressure => {
                    // Still stoppable while waiting: the wait ends when the writer takes it.
                    tokio::select! {
                        _ = handler.relieve() => {}
                        _ = kill.cancelled() => break if out.overflowed() {
                            End::Dropped(Stall::Overflow)
                        } else {
                            End::Close(CloseCode::Away, "gateway stopping")
                        },
                    }
                }
            }
        };
        if let End::Dropped(stall) = &end {
            let (bytes, messages) = out.queued();
            tracing::warn!(
                kind = kind.name(),
                reason = stall.reason(),
                queued_bytes = bytes,
                queued_messages = messages,
                "peer is not reading; dropping its connection"
            );
            diagnostics.limit_hit(Limit::SlowConsumer);
        }
        handler.closing();
        // Best effort, bounded: the peer may be the reason we are closing.
        let _ = tokio::time::timeout(CLOSE_HANDSHAKE_TIMEOUT, async {
            match end {
                End::Close(code, reason) => {
                    tracing::debug!(%code, reason, "closing");
                    while let Some(msg) = out.try_recv() {
                        ws.feed(msg).await?;
                    }
                    ws.close(Some(CloseFrame {
                        code,
                        reason: reason.into(),
                    }))
                    .await
                }
                // Completes the close handshake: without it the peer sees 1006 (abnormal
                // closure) instead of its own code. Nothing else may be sent after a close.
                End::PeerClosed => ws.flush().await,
                // The peer is not reading: anything more would wait behind what it has not
                // taken, so the socket is dropped without a close frame (the peer sees 1006).
                End::Gone | End::Dropped(_) => Ok(()),
            }
        })
        .await;
        let mut unsent = Vec::new();
        while let Some(msg) = out.try_recv() {
            unsent.push(msg);
        }
        handler.closed(unsent);
    }
}

/// How the loop ended.
enum End {
    /// The gateway ends the connection: queued frames, then a close frame.
    Close(CloseCode, &'static str),
    /// The peer sent a close frame; the answer is written.
    PeerClosed,
    /// The socket failed or the peer went away without a close frame.
    Gone,
    /// The peer stopped reading; the gateway drops it.
    Dropped(Stall),
}

/// Why a peer that stopped reading is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stall {
    /// Its outbound queue went past its limits.
    Overflow,
    /// It did not take a batch within the write timeout.
    WriteTimeout,
    /// Writing failed: the socket broke, which is not the peer being slow.
    Failed,
}

impl Stall {
    fn reason(self) -> &'static str {
        match self {
            Stall::Overflow => "outbound queue full",
            Stall::WriteTimeout => "write timed out",
            Stall::Failed => "write failed",
        }
    }
}

/// Writes `first` and up to [`SOCKET_WRITE_BATCH`] more queued frames, then flushes.
async fn write_batch<W>(
    ws: &mut W,
    first: Message,
    out: &mut OutReceiver,
    timeout: Duration,
) -> Result<(), Stall>
where
    W: futures_util::Sink<Message, Error = tungstenite::Error> + Unpin,
{
    let write = async {
        ws.feed(first).await?;
        for _ in 1..SOCKET_WRITE_BATCH {
            match out.try_recv() {
                Some(m) => ws.feed(m).await?,
                None => break,
            }
        }
        ws.flush().await
    };
    match tokio::time::timeout(timeout, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Stall::Failed),
        Err(_) => Err(Stall::WriteTimeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OutboundLimits;
    use crate::socket::outbound::channel;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A peer that never takes a byte: the sink is never ready.
    struct Stuck;

    impl futures_util::Sink<Message> for Stuck {
        type Error = tungstenite::Error;
        fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Pending
        }
        fn start_send(self: Pin<&mut Self>, _: Message) -> Result<(), Self::Error> {
            unreachable!("never ready")
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Pending
        }
        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Pending
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_the_peer_does_not_take_ends_exactly_at_the_write_timeout() {
        let limits = OutboundLimits::default();
        let (_tx, mut rx) = channel(limits, CancellationToken::new(), Default::default());
        let start = Instant::now();
        let r = write_batch(
            &mut Stuck,
            Message::text("x"),
            &mut rx,
            limits.peer_write_timeout,
        )
        .await;
        assert_eq!(r, Err(Stall::WriteTimeout));
        assert_eq!(start.elapsed(), tap_protocol::limits::PEER_WRITE_TIMEOUT);
    }
}

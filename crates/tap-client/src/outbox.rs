//! The sending side of a client's socket: frames are written from the caller's own task
//! when the socket takes them at once, and through a writer task only when it does not.
//!
//! A writer task fed by a queue costs every request a hand-off between tasks, and on a
//! multi-thread runtime that hand-off often wakes a parked worker thread: two context
//! switches per request (docs/performance-log.md, run 26). So `send` tries first to write
//! and flush the frame itself, without waiting: it takes the sink only if nobody holds it
//! and nothing is queued ahead (frames leave in the order they were sent), and polls it
//! once. Whatever the socket does not take at once (a full send buffer, a busy sink, frames
//! already queued) goes to the queue, and the writer task finishes it, waiting as long as
//! the socket needs.

use futures_util::stream::SplitSink;
use futures_util::{Sink, SinkExt};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type WsSink = SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>;

/// The socket is closed (or failed): nothing more can be sent.
#[derive(Debug)]
pub(crate) struct Closed;

struct Shared {
    sink: tokio::sync::Mutex<WsSink>,
    /// Frames waiting for the writer task, oldest first. Only taken while holding `sink`,
    /// so a frame written directly never overtakes one queued before it.
    queue: Mutex<VecDeque<Message>>,
    closed: AtomicBool,
    wake_writer: Notify,
}

/// The sending end; dropping it lets the writer finish what is queued and close the
/// socket.
pub(crate) struct Outbox {
    shared: Arc<Shared>,
}

impl Outbox {
    /// Starts the writer task for `sink`.
    pub fn start(sink: WsSink) -> Self {
        let shared = Arc::new(Shared {
            sink: tokio::sync::Mutex::new(sink),
            queue: Mutex::default(),
            closed: AtomicBool::new(false),
            wake_writer: Notify::new(),
        });
        tokio::spawn(writer(shared.clone()));
        Self { shared }
    }

    /// Sends `msg`, from this task when the socket takes it at once, else through the
    /// writer task. Never waits.
    pub fn send(&self, msg: Message) -> Result<(), Closed> {
        let s = &*self.shared;
        if s.closed.load(Ordering::Acquire) {
            return Err(Closed);
        }
        let msg = match s.sink.try_lock() {
            Ok(mut sink) if s.queue.lock().unwrap().is_empty() => match write_now(&mut sink, msg) {
                Now::Flushed => return Ok(()),
                Now::Unflushed => {
                    // The writer flushes whenever it is woken, queue or not.
                    drop(sink);
                    s.wake_writer.notify_one();
                    return Ok(());
                }
                Now::Failed => {
                    s.closed.store(true, Ordering::Release);
                    return Err(Closed);
                }
                Now::NotReady(msg) => msg,
            },
            _ => msg,
        };
        s.queue.lock().unwrap().push_back(msg);
        s.wake_writer.notify_one();
        Ok(())
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake_writer.notify_one();
    }
}

enum Now {
    Flushed,
    /// Taken into the sink's buffer, not all written yet.
    Unflushed,
    Failed,
    /// The sink cannot take a frame now; handed back.
    NotReady(Message),
}

/// One non-waiting attempt to write and flush `msg`. The no-op waker is fine: whatever
/// this leaves undone is handed to the writer task, which polls with its own waker.
fn write_now(sink: &mut WsSink, msg: Message) -> Now {
    let mut cx = Context::from_waker(Waker::noop());
    let mut sink = Pin::new(sink);
    match sink.as_mut().poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(_)) => return Now::Failed,
        Poll::Pending => return Now::NotReady(msg),
    }
    if sink.as_mut().start_send(msg).is_err() {
        return Now::Failed;
    }
    match sink.poll_flush(&mut cx) {
        Poll::Ready(Ok(())) => Now::Flushed,
        Poll::Ready(Err(_)) => Now::Failed,
        Poll::Pending => Now::Unflushed,
    }
}

/// Writes what is queued and flushes what direct writes left, until the socket fails or
/// the [`Outbox`] is dropped (then it writes what is left and closes the socket).
async fn writer(s: Arc<Shared>) {
    loop {
        s.wake_writer.notified().await;
        let mut sink = s.sink.lock().await;
        let ok = drain(&s, &mut sink).await;
        if !ok {
            s.closed.store(true, Ordering::Release);
            return;
        }
        if s.closed.load(Ordering::Acquire) {
            let _ = sink.close().await;
            return;
        }
    }
}

/// Feeds every queued frame and flushes (also what a direct write left unflushed); `false`
/// when the socket failed.
async fn drain(s: &Shared, sink: &mut WsSink) -> bool {
    loop {
        let next = s.queue.lock().unwrap().pop_front();
        let Some(msg) = next else { break };
        if sink.feed(msg).await.is_err() {
            return false;
        }
    }
    sink.flush().await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use tokio::net::TcpListener;
    use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

    /// A client socket's sink, and the server's end of the same connection (real sockets on
    /// 127.0.0.1). The server's read buffer is small, so a peer that is not read fills up.
    async fn pair() -> (
        WsSink,
        WebSocketStream<TcpStream>,
        futures_util::stream::SplitStream<WebSocketStream<MaybeTlsStream<TcpStream>>>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let config = WebSocketConfig::default().max_message_size(Some(1 << 20));
            tokio_tungstenite::accept_async_with_config(tcp, Some(config))
                .await
                .unwrap()
        });
        let (client, _) = tokio_tungstenite::connect_async(format!("ws://{addr}"))
            .await
            .unwrap();
        let (sink, stream) = client.split();
        (sink, server.await.unwrap(), stream)
    }

    fn frame(task: usize, i: usize) -> Message {
        // 1 KiB each: a few thousand fill the socket's buffers while nobody reads.
        Message::text(format!("{task}:{i}:{}", "x".repeat(1000)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn frames_keep_each_senders_order_while_the_socket_fills_and_drains() {
        let (sink, mut server, _stream) = pair().await;
        let out = Arc::new(Outbox::start(sink));
        const TASKS: usize = 4;
        const EACH: usize = 5_000;
        // Nobody reads at first, so frames stop being written at once and wait in the
        // queue (`send` still returns at once). Once the queue holds some, the peer starts
        // reading while the senders go on: direct writes and the writer task interleave.
        let filled = Arc::new(Notify::new());
        let reader = {
            let filled = filled.clone();
            tokio::spawn(async move {
                filled.notified().await;
                let mut next = [0usize; TASKS];
                for _ in 0..TASKS * EACH {
                    let msg = server.next().await.unwrap().unwrap();
                    let text = msg.into_text().unwrap();
                    let mut parts = text.split(':');
                    let t: usize = parts.next().unwrap().parse().unwrap();
                    let i: usize = parts.next().unwrap().parse().unwrap();
                    assert_eq!(i, next[t], "sender {t}'s frames out of order");
                    next[t] += 1;
                }
                next
            })
        };
        let senders: Vec<_> = (0..TASKS)
            .map(|t| {
                let (out, filled) = (out.clone(), filled.clone());
                tokio::spawn(async move {
                    let mut queued = false;
                    for i in 0..EACH {
                        out.send(frame(t, i)).unwrap();
                        if !queued && !out.shared.queue.lock().unwrap().is_empty() {
                            queued = true;
                            filled.notify_one();
                        }
                        if i % 64 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                    queued
                })
            })
            .collect();
        let mut any_queued = false;
        for s in senders {
            any_queued |= s.await.unwrap();
        }
        assert!(
            any_queued,
            "the socket never filled: the queue was not exercised"
        );
        assert_eq!(reader.await.unwrap(), [EACH; TASKS]);
    }

    #[tokio::test]
    async fn dropping_it_writes_what_is_queued_then_closes_the_socket() {
        let (sink, mut server, _stream) = pair().await;
        let out = Outbox::start(sink);
        for i in 0..3_000 {
            out.send(frame(0, i)).unwrap();
        }
        drop(out);
        for i in 0..3_000 {
            let text = server.next().await.unwrap().unwrap().into_text().unwrap();
            assert!(text.starts_with(&format!("0:{i}:")), "frame {i}");
        }
        assert!(matches!(
            server.next().await,
            Some(Ok(Message::Close(_))) | None
        ));
    }

    #[tokio::test]
    async fn a_closed_socket_refuses_frames() {
        let (sink, server, _stream) = pair().await;
        let out = Outbox::start(sink);
        drop(server);
        // The peer is gone: sending fails within a few frames (the first ones may still
        // reach the kernel's buffer before the reset is seen).
        let mut refused = false;
        for i in 0..10_000 {
            if out.send(frame(0, i)).is_err() {
                refused = true;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(refused, "sends to a closed socket kept succeeding");
    }
}

//! The socket plumbing both clients share: an [`Outbox`] that writes from the caller's task
//! when it can, and a reader task that hands each answer to the request waiting for it and
//! everything else to an event queue. When the socket closes, every request still waiting
//! is woken (its sender drops).

use crate::outbox::Outbox;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Requests waiting for their answer, by correlation id.
pub(crate) type Waiters<A> = Arc<Mutex<HashMap<String, oneshot::Sender<A>>>>;

/// What the reader makes of one text frame.
pub(crate) enum Frame<A, E> {
    /// An answer for the request with this id. `unclaimed` is what to put on the event
    /// queue when no request waits for it (or `None` to drop it).
    Answer {
        key: String,
        answer: A,
        unclaimed: fn(A) -> Option<E>,
    },
    /// Something the gateway sent on its own.
    Event(E),
}

/// The running plumbing: the sending end and the waiters.
pub(crate) struct Mux<A> {
    pub out: Outbox,
    pub waiters: Waiters<A>,
}

/// Starts the outbox and the reader task. `classify` turns a text frame into a [`Frame`]
/// (`None` skips it: a frame from a newer gateway is not fatal). The tasks end when the
/// socket closes or the returned [`Mux`] is dropped.
pub(crate) fn start<A, E>(
    sink: SplitSink<Ws, Message>,
    mut stream: SplitStream<Ws>,
    classify: fn(&str) -> Option<Frame<A, E>>,
) -> (Mux<A>, mpsc::UnboundedReceiver<E>)
where
    A: Send + 'static,
    E: Send + 'static,
{
    let out = Outbox::start(sink);
    let (ev_tx, events) = mpsc::unbounded_channel();
    let waiters: Waiters<A> = Arc::default();
    let w = waiters.clone();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            let Message::Text(t) = msg else { continue };
            match classify(&t) {
                Some(Frame::Answer {
                    key,
                    answer,
                    unclaimed,
                }) => {
                    let waiter = w.lock().unwrap().remove(&key);
                    match waiter {
                        Some(tx) => {
                            let _ = tx.send(answer);
                        }
                        None => {
                            if let Some(e) = unclaimed(answer) {
                                let _ = ev_tx.send(e);
                            }
                        }
                    }
                }
                Some(Frame::Event(e)) => {
                    let _ = ev_tx.send(e);
                }
                None => {}
            }
        }
        // Dropping the waiters wakes every pending request with `Closed`.
        w.lock().unwrap().clear();
    });
    (Mux { out, waiters }, events)
}

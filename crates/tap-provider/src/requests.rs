//! Requests the gateway answers, and who waits for each answer: updates (`ack` or `error`
//! by `requestId`), stream queries (`stream.history` by `queryId`), and pushes.
//!
//! A push has no answer when accepted. The gateway handles a connection's messages in order,
//! so the SDK follows each push with an empty `stream.query` (the barrier): a refusal of the
//! push (`error`, `replyTo: "push"`, no id) arrives before the barrier's `stream.history`,
//! and belongs to the oldest push whose barrier is unanswered. The barrier's answer settles
//! the push: refused if an error came, accepted otherwise.

use crate::bind::refused;
use crate::types::Error;
use std::collections::{BTreeMap, HashMap, VecDeque};
use tap_protocol::provider::{
    Ack, ErrorMessage, ProviderMessage, StreamEntry, StreamHistory, StreamQuery,
};
use tokio::sync::oneshot;

/// A stream query's answer: `stream@provider` → newest-first events.
pub type History = BTreeMap<String, Vec<StreamEntry>>;

enum Query {
    /// A push's barrier; `refused` once its error came.
    Push {
        done: oneshot::Sender<Result<(), Error>>,
        refused: Option<Error>,
    },
    Read(oneshot::Sender<Result<History, Error>>),
}

#[derive(Default)]
pub(crate) struct Waiters {
    next: u64,
    updates: HashMap<String, oneshot::Sender<Result<u64, Error>>>,
    /// In the order sent, which is the order the gateway answers them.
    queries: VecDeque<(String, Query)>,
}

impl Waiters {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}-{}", self.next)
    }

    /// Gives `msg` (an update) a request id and waits for its answer.
    pub fn update(
        &mut self,
        mut msg: ProviderMessage,
        done: oneshot::Sender<Result<u64, Error>>,
    ) -> ProviderMessage {
        let id = self.id("r");
        set_request_id(&mut msg, id.clone());
        // An abandoned wait (the handle timed out) is dropped here rather than kept forever.
        self.updates.retain(|_, d| !d.is_closed());
        self.updates.insert(id, done);
        msg
    }

    /// An update nobody waits for (filters set again after a bind); refusals become events.
    pub fn unanswered(&mut self, mut msg: ProviderMessage) -> ProviderMessage {
        set_request_id(&mut msg, self.id("again"));
        msg
    }

    /// The barrier to send right after a push.
    pub fn push(&mut self, done: oneshot::Sender<Result<(), Error>>) -> ProviderMessage {
        let id = self.id("push");
        self.queries.push_back((
            id.clone(),
            Query::Push {
                done,
                refused: None,
            },
        ));
        ProviderMessage::StreamQuery(StreamQuery {
            query_id: id,
            session_id: None,
            streams: Some(Vec::new()),
            last: Some(1),
        })
    }

    /// A `stream.query` of `streams` (all own ones when `None`).
    pub fn read(
        &mut self,
        streams: Option<Vec<String>>,
        last: Option<usize>,
        done: oneshot::Sender<Result<History, Error>>,
    ) -> ProviderMessage {
        let id = self.id("q");
        self.queries.push_back((id.clone(), Query::Read(done)));
        ProviderMessage::StreamQuery(StreamQuery {
            query_id: id,
            session_id: None,
            streams,
            last,
        })
    }

    pub fn ack(&mut self, ack: Ack) {
        if let Some(done) = self.updates.remove(&ack.request_id) {
            let _ = done.send(Ok(ack.revision));
        }
    }

    pub fn history(&mut self, h: StreamHistory) {
        let Some(at) = self.queries.iter().position(|(id, _)| *id == h.query_id) else {
            return;
        };
        // Answered in order: any older query left was answered too (never, in practice).
        let mut answered: Vec<_> = self.queries.drain(..=at).collect();
        let (_, last) = answered.pop().expect("drained up to it");
        for (_, q) in answered {
            settle(q, Err(Error::Disconnected));
        }
        settle(last, Ok(h.streams));
    }

    /// Gives `e` to whoever waits for it; returns it when nobody does.
    pub fn error(&mut self, e: ErrorMessage) -> Option<ErrorMessage> {
        if let Some(done) = e.request_id.as_ref().and_then(|r| self.updates.remove(r)) {
            let _ = done.send(Err(refused(e.code, e.message)));
            return None;
        }
        match e.reply_to.as_deref() {
            Some("push") => {
                let pending = self.queries.iter_mut().find_map(|(_, q)| match q {
                    Query::Push { done, refused: r } if r.is_none() => Some((done, r)),
                    _ => None,
                });
                let (done, slot) = pending?;
                let unheard = done.is_closed();
                *slot = Some(refused(e.code.clone(), e.message.clone()));
                // A dropped `Pushed` cannot hear it: an event instead.
                unheard.then_some(e)
            }
            Some("stream.query") if !self.queries.is_empty() => {
                let (_, q) = self.queries.pop_front().expect("not empty");
                settle(q, Err(refused(e.code, e.message)));
                None
            }
            _ => Some(e),
        }
    }

    /// The socket dropped: nothing sent on it will be answered.
    pub fn disconnected(&mut self) {
        for (_, done) in self.updates.drain() {
            let _ = done.send(Err(Error::Disconnected));
        }
        for (_, q) in self.queries.drain(..) {
            settle(q, Err(Error::Disconnected));
        }
    }
}

/// Answers a query's waiter. A push's verdict is its own refusal if one came; a barrier
/// that was itself answered (or refused) otherwise means the push was accepted.
fn settle(q: Query, answer: Result<History, Error>) {
    match q {
        Query::Push { done, refused: r } => {
            let verdict = match (r, answer) {
                (Some(e), _) => Err(e),
                (None, Err(Error::Disconnected)) => Err(Error::Disconnected),
                (None, _) => Ok(()),
            };
            let _ = done.send(verdict);
        }
        Query::Read(done) => {
            let _ = done.send(answer);
        }
    }
}

fn set_request_id(msg: &mut ProviderMessage, id: String) {
    let slot = match msg {
        ProviderMessage::ToolsUpdate(u) => &mut u.request_id,
        ProviderMessage::HooksUpdate(u) => &mut u.request_id,
        ProviderMessage::ContextUpdate(u) => &mut u.request_id,
        ProviderMessage::FilterSet(u) => &mut u.request_id,
        _ => return,
    };
    *slot = Some(id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tap_protocol::ErrorCode;

    fn rate_limited() -> ErrorMessage {
        ErrorMessage {
            reply_to: Some("push".into()),
            ..ErrorMessage::new(ErrorCode::RateLimited, "over budget")
        }
    }

    fn answered(q: &ProviderMessage) -> StreamHistory {
        let ProviderMessage::StreamQuery(q) = q else {
            panic!("a barrier")
        };
        StreamHistory {
            query_id: q.query_id.clone(),
            streams: BTreeMap::new(),
        }
    }

    #[test]
    fn a_refusal_belongs_to_the_oldest_push_whose_barrier_is_unanswered() {
        let mut w = Waiters::default();
        let (a, mut a_rx) = oneshot::channel();
        let (b, mut b_rx) = oneshot::channel();
        let (c, mut c_rx) = oneshot::channel();
        let qa = w.push(a);
        let qb = w.push(b);
        let qc = w.push(c);
        w.history(answered(&qa));
        assert!(w.error(rate_limited()).is_none(), "b waits for it");
        w.history(answered(&qb));
        w.history(answered(&qc));
        assert!(a_rx.try_recv().unwrap().is_ok());
        assert!(b_rx.try_recv().unwrap().unwrap_err().is_rate_limited());
        assert!(c_rx.try_recv().unwrap().is_ok());
    }

    #[test]
    fn a_refusal_nobody_awaits_is_handed_back_and_drops_fail_the_rest() {
        let mut w = Waiters::default();
        let (a, a_rx) = oneshot::channel();
        drop(a_rx);
        w.push(a);
        assert!(w.error(rate_limited()).is_some());
        let (b, mut b_rx) = oneshot::channel();
        w.push(b);
        let (u, mut u_rx) = oneshot::channel();
        w.update(
            ProviderMessage::ContextUpdate(tap_protocol::provider::ContextUpdate {
                request_id: None,
                session_id: None,
                context: None,
            }),
            u,
        );
        w.disconnected();
        assert!(matches!(b_rx.try_recv().unwrap(), Err(Error::Disconnected)));
        assert!(matches!(u_rx.try_recv().unwrap(), Err(Error::Disconnected)));
    }
}

use crate::request::CallError;
use std::collections::HashMap;
use std::sync::Mutex;
use tap_protocol::ErrorCode;
use tap_protocol::Json;
use tokio::sync::oneshot;

/// A call sent to a provider and not yet answered.
pub(crate) struct PendingCall {
    pub session_id: String,
    pub done: oneshot::Sender<Result<Json, CallError>>,
    pub progress: Option<crate::request::ProgressSink>,
}

/// The calls in flight on one provider connection.
///
/// Invariant: every call leaves this table exactly once, and whoever removes it delivers
/// its one terminal outcome. That is the whole of "first terminal message wins": a late
/// `tool.result`, a timeout that lost the race, a second cancel all find the entry gone.
/// Once `close` runs the table refuses new calls, so a call racing a disconnect fails
/// with `DISCONNECTED` instead of waiting for its timeout.
#[derive(Default)]
pub(crate) struct CallTable {
    // std Mutex: held only for map operations, never across an await.
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    closed: bool,
    calls: HashMap<String, PendingCall>,
}

impl CallTable {
    /// Adds a call; gives it back if the connection is already gone.
    pub fn insert(&self, id: String, call: PendingCall) -> Result<(), PendingCall> {
        let mut inner = self.inner.lock().unwrap();
        if inner.closed {
            return Err(call);
        }
        inner.calls.insert(id, call);
        Ok(())
    }

    /// Takes a call out, if it is still pending.
    pub fn take(&self, id: &str) -> Option<PendingCall> {
        self.inner.lock().unwrap().calls.remove(id)
    }

    /// Delivers a terminal outcome; `false` when the call had already ended (ignored).
    pub fn complete(&self, id: &str, outcome: Result<Json, CallError>) -> bool {
        match self.take(id) {
            Some(call) => {
                // The caller may have given up (its task ended); nothing to do then.
                let _ = call.done.send(outcome);
                true
            }
            None => false,
        }
    }

    /// Forwards a progress message to the caller, if it still waits and listens.
    pub fn progress(&self, id: &str, message: String) -> bool {
        let inner = self.inner.lock().unwrap();
        match inner.calls.get(id) {
            Some(call) => {
                if let Some(sink) = &call.progress {
                    sink.offer(message);
                }
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().unwrap().calls.len()
    }

    /// Ids of the calls in flight (for the malformed-result rule).
    pub fn ids(&self) -> Vec<String> {
        self.inner.lock().unwrap().calls.keys().cloned().collect()
    }

    /// Ends every call of one session with `code`, returning their ids so the provider can
    /// be sent `tool.cancel` for each.
    pub fn fail_session(&self, session_id: &str, code: ErrorCode, message: &str) -> Vec<String> {
        let taken: Vec<(String, PendingCall)> = {
            let mut inner = self.inner.lock().unwrap();
            let ids: Vec<String> = inner
                .calls
                .iter()
                .filter(|(_, c)| c.session_id == session_id)
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| inner.calls.remove(&id).map(|c| (id, c)))
                .collect()
        };
        taken
            .into_iter()
            .map(|(id, call)| {
                let _ = call.done.send(Err(CallError::new(code.clone(), message)));
                id
            })
            .collect()
    }

    /// Refuses new calls and fails every pending one with `DISCONNECTED`.
    pub fn close(&self, message: &str) {
        let calls = {
            let mut inner = self.inner.lock().unwrap();
            inner.closed = true;
            std::mem::take(&mut inner.calls)
        };
        for (_, call) in calls {
            let _ = call
                .done
                .send(Err(CallError::new(ErrorCode::Disconnected, message)));
        }
    }
}

//! `gate.check` round trips pending on one provider connection.

use std::collections::HashMap;
use std::sync::Mutex;
use tap_protocol::provider::GateResult;
use tokio::sync::oneshot;

/// Pending gate checks of one provider link, by `callId`. Closing the table (the provider
/// disconnected) drops every waiter, which the waiting precheck reads as a deny.
#[derive(Default)]
pub(crate) struct GateTable {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    pending: HashMap<String, oneshot::Sender<GateResult>>,
    closed: bool,
}

impl GateTable {
    /// Registers a pending check; `None` when the provider is already gone.
    pub fn insert(&self, call_id: String) -> Option<oneshot::Receiver<GateResult>> {
        let mut inner = self.inner.lock().unwrap();
        if inner.closed {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        inner.pending.insert(call_id, tx);
        Some(rx)
    }

    /// Hands a `gate.result` to its waiter. False for an unknown or finished `callId`.
    pub fn complete(&self, result: GateResult) -> bool {
        let tx = self.inner.lock().unwrap().pending.remove(&result.call_id);
        match tx {
            Some(tx) => tx.send(result).is_ok(),
            None => false,
        }
    }

    /// Forgets a check that timed out.
    pub fn remove(&self, call_id: &str) {
        self.inner.lock().unwrap().pending.remove(call_id);
    }

    /// The provider left its session(s) (a rebind): pending checks are denied, as the
    /// spec's "Rebinding" cancels them; a late `gate.result` finds nothing.
    pub fn cancel_pending(&self) {
        self.inner.lock().unwrap().pending.clear();
    }

    /// The provider disconnected: every pending check is denied.
    pub fn close(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.closed = true;
        inner.pending.clear();
    }
}

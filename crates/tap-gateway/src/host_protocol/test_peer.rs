//! A host connection driven frame by frame, without a socket, for unit tests: what it
//! sends arrives on its outbound queue.

use super::HostConn;
use crate::socket::conn::Handler;
use crate::socket::kind::Kind;
use crate::socket::outbound::OutReceiver;
use crate::state::Core;
use serde_json::Value;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// A new host connection on `core` and the queue of what it sends.
pub(crate) fn connect(core: &Arc<Core>) -> (HostConn, OutReceiver) {
    let kill = core.stopping.child_token();
    let (out, rx) = core.outbound_queue(Kind::Host, kill.clone());
    let remote = SocketAddr::from((Ipv4Addr::LOCALHOST, 40000));
    (HostConn::new(core.clone(), remote, out, kill), rx)
}

/// The next message of type `kind` the connection sent (earlier ones of other types are
/// skipped).
pub(crate) async fn next(rx: &mut OutReceiver, kind: &str) -> Value {
    loop {
        let m = rx.recv().await.expect("the queue is open");
        let v: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
        if v["type"] == kind {
            return v;
        }
    }
}

/// Hands `v` to the connection as a frame read from its socket.
pub(crate) fn frame(conn: &mut HostConn, v: Value) {
    conn.on_frame(v.to_string().as_bytes());
}

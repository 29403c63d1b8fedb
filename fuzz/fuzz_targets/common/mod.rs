//! What the gateway targets share: a paused-clock runtime per input, frame splitting, and
//! a gateway with a session, a bound provider and a tool already in place.
#![allow(dead_code)] // each target uses part of it

use std::future::Future;
use tap_gateway::fuzzing::{Peer, World, SETTLE};

/// Runs one input on a fresh current-thread runtime with a paused clock, then sleeps
/// `SETTLE` (virtually) so the timers the input started fire. The runtime is dropped with
/// whatever tasks are left, so no input leaks into the next.
pub fn block<F: Future<Output = ()>>(f: impl FnOnce() -> F) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    rt.block_on(async {
        f().await;
        tokio::time::sleep(SETTLE).await;
    });
}

/// An input is a sequence of frames separated by `\n` (JSON never needs a raw newline).
pub fn frames(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|b| *b == b'\n').filter(|f| !f.is_empty())
}

pub const HOST_AUTH: &str =
    r#"{"type":"auth","token":"htk-fuzz","protocolVersion":1,"hostName":"fuzz"}"#;
pub const REGISTER_S1: &str = r#"{"type":"session.register","requestId":"r1","sessionId":"s1","cwd":"/nonexistent/fuzz","foreground":true}"#;
pub const HELLO_S1: &str = r#"{"type":"hello","name":"fz","protocolVersion":2,"session":"s1","tools":[{"name":"echo","description":"echoes","parameters":{"type":"object","properties":{"text":{"type":"string"}}},"timeout":1000}],"hooks":{"onPreToolUse":[{"match":{"tool":"echo","args":"deny"},"action":"deny","reason":"no"}]}}"#;
pub const CONTROL_AUTH: &str = r#"{"id":"a","method":"auth","params":{"token":"ctk-fuzz"}}"#;

/// A gateway with session `s1` registered by an authenticated host, and provider `fz`
/// (in-process, trust internal) bound to it with tool `echo`.
pub struct Bound {
    pub world: World,
    pub host: Peer,
    pub provider: Peer,
}

pub async fn bound() -> Bound {
    let world = World::new();
    let mut host = world.host();
    host.feed(HOST_AUTH.as_bytes()).await;
    host.feed(REGISTER_S1.as_bytes()).await;
    let mut provider = world.local_provider();
    provider.feed(HELLO_S1.as_bytes()).await;
    tokio::task::yield_now().await;
    host.drain();
    provider.drain();
    Bound {
        world,
        host,
        provider,
    }
}

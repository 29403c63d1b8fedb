//! Raw bytes as one HTTP/1 connection to the gateway's router (hyper's parser, then the
//! routes: the WebSocket upgrade checks, `POST /api/login` with its Origin check, the
//! panel's files, `/healthz`, the MCP facade's `/mcp/{session}`). A request that upgrades
//! to `/session` or `/` goes on as a WebSocket with the bytes after its head.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::block(|| async move {
        let b = common::bound().await;
        let _ = b.world.http(data).await;
    });
});

//! Session-host frames (`/session`) into the real host connection handler, on a gateway
//! where session `s1` exists with provider `fz` (tool `echo`) bound to it. The connection
//! starts unauthenticated; `auth` with `htk-fuzz` moves it on.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::block(|| async move {
        let b = common::bound().await;
        let mut h = b.world.host();
        for f in common::frames(data) {
            if !h.feed(f).await {
                break;
            }
            tokio::task::yield_now().await;
        }
        h.drain();
        drop(h);
        tokio::task::yield_now().await;
    });
});

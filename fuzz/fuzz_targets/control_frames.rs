//! Control-plane frames (`/control`) into the real control connection handler, on a
//! gateway with session `s1` and provider `fz` (tool `echo`). The connection starts
//! unauthenticated; `auth` with `ctk-fuzz` moves it on.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::block(|| async move {
        let b = common::bound().await;
        let mut c = b.world.control();
        for f in common::frames(data) {
            if !c.feed(f).await {
                break;
            }
            tokio::task::yield_now().await;
        }
        c.drain();
        drop(c);
        tokio::task::yield_now().await;
    });
});

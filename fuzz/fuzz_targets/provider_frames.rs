//! Provider frames (TAP Provider Interface v2) into the real provider connection handler.
//! The first byte picks the state the connection starts in: AwaitAuth (a socket provider;
//! `auth` with `ptk-fuzz` or `mode: "pair"` moves it on), AwaitHello (in-process, trust
//! internal), or Bound (to session `s1`, with a host attached).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&state, rest)) = data.split_first() else {
        return;
    };
    common::block(|| async move {
        let b = common::bound().await;
        let mut p = match state % 3 {
            0 => b.world.provider(),
            1 => b.world.local_provider(),
            _ => b.provider,
        };
        for f in common::frames(rest) {
            if !p.feed(f).await {
                break;
            }
            tokio::task::yield_now().await;
        }
        p.drain();
        drop(p);
        tokio::task::yield_now().await;
    });
});

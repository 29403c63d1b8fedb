//! Several peers at once on one gateway: each frame's first byte says who sends it (`h`
//! the session host of `s1`, `p` provider `fz` bound to `s1`, `q` a socket provider before
//! `auth`, `c` a control client before `auth`, `x` closes the host, `y` the provider).
//! `$CALL` in a frame is replaced by the id of the last `tool.call`, `gate.check` or
//! `transform.request` the provider got, so results, cancels, timeouts and disconnects
//! interleave with real calls.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fn last_call_id(frames: Vec<Vec<u8>>, last: &mut String) {
    for f in frames {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&f) else {
            continue;
        };
        let id = match v["type"].as_str() {
            Some("tool.call") => v["id"].as_str(),
            Some("gate.check" | "transform.request") => v["callId"].as_str(),
            _ => None,
        };
        if let Some(id) = id {
            *last = id.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    common::block(|| async move {
        let b = common::bound().await;
        let (mut host, mut provider) = (b.host, b.provider);
        let mut socket = b.world.provider();
        let mut control = b.world.control();
        let mut call = String::new();
        for f in common::frames(data) {
            let (&who, frame) = f.split_first().expect("frames are not empty");
            let frame = if frame.windows(5).any(|w| w == b"$CALL") {
                String::from_utf8_lossy(frame)
                    .replace("$CALL", &call)
                    .into_bytes()
            } else {
                frame.to_vec()
            };
            match who {
                b'h' => drop(host.feed(&frame).await),
                b'p' => drop(provider.feed(&frame).await),
                b'q' => drop(socket.feed(&frame).await),
                b'c' => drop(control.feed(&frame).await),
                b'x' => host.close(),
                b'y' => provider.close(),
                // Lets time pass: debounced tool sets go out, timeouts fire.
                b't' => {
                    tokio::time::sleep(std::time::Duration::from_millis(
                        u64::from(frame.len() as u8) * 20,
                    ))
                    .await
                }
                _ => continue,
            }
            tokio::task::yield_now().await;
            last_call_id(provider.drain(), &mut call);
        }
        drop((host, provider, socket, control));
        tokio::task::yield_now().await;
    });
});

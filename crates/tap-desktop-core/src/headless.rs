//! No display: run the gateway alone (as `tap gateway` would) until SIGINT/SIGTERM, so a
//! login item on a machine without a desktop session does no harm.

use crate::engine::{Engine, StartOptions};
use crate::signals::Signals;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Runs the gateway until SIGINT/SIGTERM; returns the exit code (2: it could not start).
pub fn run(home: PathBuf, listen: SocketAddr, logs: tap_gateway::logs::LogBuffer) -> i32 {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tap-desktop: cannot start the async runtime: {e}");
            return 2;
        }
    };
    runtime.block_on(async move {
        let signals = Signals::register();
        let engine = match Engine::start(StartOptions::desktop(home, listen, logs)).await {
            Ok(e) => e,
            Err(e) => {
                eprintln!("tap-desktop: {e}");
                return 2;
            }
        };
        tracing::info!(address = %engine.gateway().address(), "gateway running headless; Ctrl-C stops it");
        let name = signals.recv().await;
        tracing::info!("{name}: stopping");
        engine.stop().await;
        0
    })
}

//! What `tap-desktop` does before Tauri starts. Order matters for what a login costs: the
//! engine starts first, on a tokio runtime made here and lent to Tauri, so the gateway
//! answers before GTK and WebKit are even loaded.
//!
//! A second launch hands over to the first (the single-instance plugin) and must not start
//! an engine first: with another `TAP_HOME` or port it would bind and write its files only
//! to be cut short by the handover's exit. Its engine then waits for the app's setup
//! ([`Launch::engine`]), which runs only if the first instance went away meanwhile.

use crate::engine::{Engine, StartOptions};
use crate::failures::ProviderFailure;
use crate::notify::refuse_start;
use crate::signals::Signals;
use std::net::SocketAddr;
use std::path::PathBuf;
use tap_gateway::logs::LogBuffer;
use tokio::runtime::Runtime;
use tokio::sync::mpsc::UnboundedReceiver;

/// What the app's setup takes over from the launch.
pub struct Launch {
    /// One runtime for the engine and Tauri (which would otherwise make its own); it lives
    /// as long as the process (the event loop never returns).
    pub runtime: &'static Runtime,
    /// `TAP_HOME`.
    pub home: PathBuf,
    /// The provider failures picked out of the log.
    pub failures: UnboundedReceiver<ProviderFailure>,
    engine: Option<Engine>,
    start: Box<dyn Fn() -> StartOptions + Send>,
}

impl Launch {
    /// Makes the runtime, registers SIGINT and SIGTERM (before the engine writes its files,
    /// see [`crate::signals`]) and, unless `handing_over` (another instance runs in this
    /// session), starts the engine with the desktop's options. When the runtime or the
    /// engine cannot start, refuses to start ([`refuse_start`]: exit 2).
    pub fn desktop(
        home: PathBuf,
        listen: SocketAddr,
        logs: LogBuffer,
        failures: UnboundedReceiver<ProviderFailure>,
        handing_over: bool,
    ) -> (Self, Signals) {
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => Box::leak(Box::new(rt)),
            Err(e) => refuse_start(&home, &format!("cannot start the async runtime: {e}")),
        };
        let signals = runtime.block_on(async { Signals::register() });
        let options = home.clone();
        let mut launch = Self {
            runtime,
            home,
            failures,
            engine: None,
            start: Box::new(move || StartOptions::desktop(options.clone(), listen, logs.clone())),
        };
        if handing_over {
            tracing::debug!("another instance runs in this session: handing over");
        } else {
            match launch.engine() {
                Ok(engine) => launch.engine = Some(engine),
                Err(e) => refuse_start(&launch.home, &e),
            }
        }
        (launch, signals)
    }

    /// The engine started at launch. None was when another instance ran then; if the app
    /// gets this far, the handover did not exit it: that instance went away meanwhile, so
    /// this one serves after all and starts its engine now.
    pub fn engine(&mut self) -> Result<Engine, String> {
        match self.engine.take() {
            Some(engine) => Ok(engine),
            None => self.runtime.block_on(Engine::start((self.start)())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tap_secrets::MemoryBackend;

    #[test]
    fn an_instance_that_handed_over_starts_its_engine_when_it_serves_after_all() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Box::leak(Box::new(Runtime::new().unwrap()));
        let home = dir.path().to_path_buf();
        let (_failed, failures) = tokio::sync::mpsc::unbounded_channel();
        let mut launch = Launch {
            runtime,
            home: home.clone(),
            failures,
            engine: None,
            start: Box::new(move || StartOptions::for_tests(&home, Arc::new(MemoryBackend::new()))),
        };
        let engine = launch.engine().expect("started now");
        assert!(dir.path().join("gateway.json").exists());
        // Started once: a second call would start a second gateway for the same home.
        assert!(launch.engine().is_err(), "the first one runs");
        runtime.block_on(engine.stop());
    }
}

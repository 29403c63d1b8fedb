//! SIGINT and SIGTERM quit like the tray's Quit (the gateway stops gracefully). They are
//! registered before the engine writes `gateway.json`: a signal that follows at once must
//! still find the handler, not the default action that kills the process and leaves the
//! files behind.

/// The registered signals. Create inside the tokio runtime.
pub struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Registers the handlers now (a failure is logged; that signal then keeps its default).
    pub fn register() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let register = |kind: SignalKind, name: &str| match signal(kind) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for {name}");
                    None
                }
            };
            Self {
                term: register(SignalKind::terminate(), "SIGTERM"),
                int: register(SignalKind::interrupt(), "SIGINT"),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Waits for the first signal; returns its name.
    pub async fn recv(self) -> &'static str {
        #[cfg(unix)]
        {
            async fn next(s: Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                _ = next(self.term) => "SIGTERM",
                _ = next(self.int) => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

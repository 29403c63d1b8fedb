use tokio_util::sync::CancellationToken;

/// A token cancelled on the first SIGINT or SIGTERM. A second signal exits at once, for
/// the user whose graceful stop waits on a provider that does not answer.
///
/// The handlers are installed before this returns (not when a task first runs), so a
/// signal that arrives right after, e.g. just after `gateway.json` is written, is caught.
pub fn shutdown_token() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    let mut signals = Signals::install();
    tokio::spawn(async move {
        signals.next().await;
        t.cancel();
        signals.next().await;
        eprintln!("tap: second signal, exiting now");
        std::process::exit(130);
    });
    token
}

/// SIGINT and SIGTERM, registered with the runtime at creation.
#[cfg(unix)]
struct Signals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

#[cfg(unix)]
impl Signals {
    fn install() -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        Self(
            signal(SignalKind::interrupt())
                .and_then(|int| Ok((int, signal(SignalKind::terminate())?)))
                .ok(),
        )
    }

    async fn next(&mut self) {
        match &mut self.0 {
            Some((int, term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn install() -> Self {
        Self
    }

    async fn next(&mut self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

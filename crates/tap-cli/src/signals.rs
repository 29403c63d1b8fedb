use tokio_util::sync::CancellationToken;

/// A token cancelled on the first SIGINT or SIGTERM. A second signal exits at once, for
/// the user whose graceful stop waits on a provider that does not answer.
pub fn shutdown_token() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        wait_signal().await;
        t.cancel();
        wait_signal().await;
        eprintln!("tap: second signal, exiting now");
        std::process::exit(130);
    });
    token
}

#[cfg(unix)]
async fn wait_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(not(unix))]
async fn wait_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

//! What every scenario runs on and with: the runtime, a time bound, and the progress line.
//! Apart from main.rs so that the scenarios' files import down, never back up into it.

use std::future::Future;
use std::time::Duration;

/// The multi-thread runtime every mode runs on; `None` (said on stderr as `who`) when it
/// cannot start.
pub fn runtime(who: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("{who}: cannot start the runtime: {e}");
            None
        }
    }
}

/// Runs `fut` for at most `limit`.
pub async fn bounded<T>(
    limit: Duration,
    fut: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| Err(format!("did not finish within {} s", limit.as_secs())))
}

/// Progress goes to stderr so stdout is just the report.
pub fn progress(what: &str) {
    eprintln!("running {what} ...");
}

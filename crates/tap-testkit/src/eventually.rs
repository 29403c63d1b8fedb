//! Polling with a deadline: the one way tests wait for something that has no event to
//! await. The deadline is real time, so a real child process or socket gets its full
//! patience even when the test runs on tokio's paused clock (where sleeps auto-advance).

use crate::PATIENCE;
use std::future::Future;
use std::time::{Duration, Instant};

/// First and longest pause between two polls: fast for in-process state, and no more than
/// 20 polls a second for checks that run a process (`tap status`).
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// Polls `f` until it returns `Some`, failing the test (naming `what`) after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    eventually_within(PATIENCE, what, f).await
}

/// [`eventually`] with another deadline.
pub async fn eventually_within<T, F, Fut>(patience: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + patience;
    let mut pause = FIRST_PAUSE;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {patience:?} waiting for {what}"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// Polls `cond` until it holds, failing the test after [`PATIENCE`].
pub async fn wait_until<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually(what, || {
        let c = cond();
        async move { c.await.then_some(()) }
    })
    .await
}

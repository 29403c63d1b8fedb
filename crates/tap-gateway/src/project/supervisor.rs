//! One project provider of one session, from its first start to its stop: each run gets a
//! fresh token, failures are restarted with backoff, and the session's end stops it.

use super::config::ProjectProvider;
use super::warn::warn_session;
use super::ProjectToken;
use crate::limits::PROJECT_PROVIDER_CLOSE_WAIT;
use crate::processes::group::stop_group;
use crate::processes::spawn::forward_lines;
use crate::state::Core;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Runs `p` for `session_id` until the session's `cancel`, a clean exit, or giving up.
pub(crate) async fn run(
    core: Arc<Core>,
    session_id: String,
    p: ProjectProvider,
    cancel: CancellationToken,
) {
    let policy = core.config.project_restart.clone();
    let url = format!("ws://{}", core.address);
    let name = p.name.clone();
    let mut backoff = policy.backoff;
    let mut quick_failures = 0u32;
    loop {
        let token = crate::auth::tokens::generate("ptk-");
        if !issue_token(&core, &session_id, &name, &token) {
            return; // the session is ending or gone
        }
        let mut child = match p.spec.start(&token, &url, &core.config.child_env_remove) {
            Ok(child) => child,
            Err(e) => {
                let _ = revoke_token(&core, &session_id, &token);
                // The command cannot be run at all (missing program, bad cwd): retrying
                // would fail the same way until the config is fixed.
                warn_session(
                    &core,
                    &session_id,
                    format!(
                        "Project provider '{name}' cannot start ({}): {e}",
                        p.spec.label()
                    ),
                    None,
                    Some(name.clone()),
                );
                return;
            }
        };
        let pid = child.id();
        let started = Instant::now();
        tracing::info!(target: "tap::provider", provider = %name, session = %session_id, ?pid, command = %p.spec.label(), "project provider started");
        for (pipe, stream) in [
            (child.stdout.take().map(boxed), "stdout"),
            (child.stderr.take().map(boxed), "stderr"),
        ] {
            let Some(pipe) = pipe else { continue };
            let (name, session) = (name.clone(), session_id.clone());
            core.tasks.spawn(forward_lines(pipe, move |line| {
                tracing::info!(target: "tap::provider", provider = %name, session = %session, stream, "{line}")
            }));
        }
        let status = tokio::select! {
            status = child.wait() => status,
            _ = cancel.cancelled() => {
                let conns = revoke_token(&core, &session_id, &token);
                stop_group(&mut child, pid).await;
                if session_lives(&core, &session_id) {
                    // Its entry changed or left the file: what it registered goes now,
                    // not at the session's teardown, and before a new run says `hello`.
                    close_connections(&core, &conns).await;
                    tracing::info!(target: "tap::provider", provider = %name, session = %session_id, "project provider stopped (its entry in the config changed or was removed)");
                } else {
                    tracing::info!(target: "tap::provider", provider = %name, session = %session_id, "project provider stopped (session ended)");
                }
                return;
            }
        };
        let _ = revoke_token(&core, &session_id, &token);
        let ran = started.elapsed();
        let clean = status.as_ref().is_ok_and(|s| s.success());
        let status = match status {
            Ok(s) => s.to_string(),
            Err(e) => format!("lost ({e})"),
        };
        if clean {
            warn_session(
                &core,
                &session_id,
                format!("Project provider '{name}' exited ({status}); it is not restarted"),
                None,
                Some(name.clone()),
            );
            return;
        }
        if ran >= policy.stable_run {
            backoff = policy.backoff;
            quick_failures = 0;
        } else {
            quick_failures += 1;
        }
        if quick_failures >= policy.max_quick_failures {
            warn_session(
                &core,
                &session_id,
                format!(
                    "Project provider '{name}' failed {quick_failures} times in a row, each within {} s of starting ({status}); it is not restarted",
                    policy.stable_run.as_secs_f64()
                ),
                None,
                Some(name.clone()),
            );
            return;
        }
        tracing::warn!(target: "tap::provider", provider = %name, session = %session_id, %status, restart_in_ms = backoff.as_millis() as u64, "project provider exited; restarting");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = cancel.cancelled() => return,
        }
        backoff = next_backoff(backoff, policy.backoff_max);
    }
}

fn boxed(
    pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> Box<dyn tokio::io::AsyncRead + Unpin + Send> {
    Box::new(pipe)
}

fn next_backoff(current: Duration, max: Duration) -> Duration {
    current.saturating_mul(2).min(max)
}

/// Adds a token to a live session's project tokens; false if the session is ending or
/// gone (nothing may start for it any more).
fn issue_token(core: &Core, session_id: &str, provider: &str, token: &str) -> bool {
    let mut state = core.state();
    match state.sessions.get_mut(session_id) {
        Some(s) if !s.is_ending() => {
            s.project_tokens.push(ProjectToken {
                token: token.to_string(),
                provider: provider.to_string(),
                conns: Vec::new(),
            });
            true
        }
        _ => false,
    }
}

/// Revokes a run's token; returns the provider connections it authenticated.
fn revoke_token(core: &Core, session_id: &str, token: &str) -> Vec<String> {
    let mut conns = Vec::new();
    if let Some(s) = core.state().sessions.get_mut(session_id) {
        s.project_tokens.retain(|t| {
            if t.token == token {
                conns.extend(t.conns.iter().cloned());
            }
            t.token != token
        });
    }
    conns
}

fn session_lives(core: &Core, session_id: &str) -> bool {
    core.state()
        .sessions
        .get(session_id)
        .is_some_and(|s| !s.is_ending())
}

/// Closes a stopped run's provider connections and waits (at most
/// [`PROJECT_PROVIDER_CLOSE_WAIT`]) until the registry has let them go: their tools leave
/// the session and their name is free for the next run's `hello`.
async fn close_connections(core: &Core, conns: &[String]) {
    let mut events = core.events.subscribe();
    let deadline = tokio::time::sleep(PROJECT_PROVIDER_CLOSE_WAIT);
    tokio::pin!(deadline);
    loop {
        let left = {
            let state = core.state();
            let left: Vec<_> = conns
                .iter()
                .filter_map(|c| state.providers.get(c))
                .collect();
            for p in &left {
                p.link.kill.cancel();
            }
            left.len()
        };
        if left == 0 {
            return;
        }
        // A disconnect is announced (`StatusChanged`); any event is a reason to look.
        tokio::select! {
            _ = events.recv() => {}
            _ = &mut deadline => {
                tracing::warn!(target: "tap::provider", "a stopped project provider's connection is still open");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let max = Duration::from_secs(30);
        let mut d = Duration::from_millis(500);
        let mut seen = vec![d];
        for _ in 0..8 {
            d = next_backoff(d, max);
            seen.push(d);
        }
        let ms: Vec<u128> = seen.iter().map(Duration::as_millis).collect();
        assert_eq!(
            ms,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
    }
}

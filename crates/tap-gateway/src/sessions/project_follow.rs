//! A session's project config, followed while the session lives: read when it registers,
//! then looked at every [`PROJECT_CONFIG_POLL_INTERVAL`] and applied again once an edit
//! has settled, without a new session. One reading feeds every part the file configures:
//! project providers (here), emitters and stream injectors (`emitters/config.rs`) and
//! project MCP servers (the hub reads the [`Snapshot`] this publishes on the session).
//! It lives with the session's lifecycle because it drives rooms below it (project
//! providers, emitters) for one session.
//!
//! Polling, as `policy.json` is followed (`approvals/policy_watch.rs`): a `stat` of one
//! or two files per interval costs nothing, and it sees an editor's
//! rename-over-the-file, a file created where there was none (a nearer one too) and one
//! removed alike, where a file-system watch would have to watch every ancestor directory.
//!
//! An edit is applied once the file looks the same twice [`PROJECT_CONFIG_SETTLE`] apart:
//! an editor that writes in several steps is not read half-written. An edit that cannot
//! be used (not JSON, not the user's own file, a key of the wrong type) changes nothing:
//! the previous configuration stays in force and the session's host gets a
//! `session.warning` saying so.

use crate::limits::{PROJECT_CONFIG_POLL_INTERVAL, PROJECT_CONFIG_SETTLE};
use crate::project::config::{self, Located, ProjectProvider};
use crate::project::warn::warn_session;
use crate::state::project_config::Snapshot;
use crate::state::Core;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::project::start";

/// What tells one state of the session's config from the next without reading it: which
/// file governs, which is ignored, and each one's modification time and size.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    located: Option<Located>,
    stamp: Option<crate::time::FileStamp>,
    ignored_stamp: Option<crate::time::FileStamp>,
}

fn look(cwd: &Path) -> Look {
    let located = config::locate(cwd);
    let stamp = located
        .as_ref()
        .and_then(|l| crate::time::file_stamp(&l.path));
    let ignored_stamp = located
        .as_ref()
        .and_then(|l| l.ignored.as_deref())
        .and_then(crate::time::file_stamp);
    Look {
        located,
        stamp,
        ignored_stamp,
    }
}

/// A project provider the follower started: its entry, and how to stop it.
struct Running {
    provider: ProjectProvider,
    /// Cancelled to stop it (its entry changed or left the file); a child of the
    /// session's token, so the session's end stops it too.
    stop: CancellationToken,
    /// Cancelled once its supervisor has returned (process group gone, connections
    /// closed): a changed entry's new process starts only then, so its `hello` does not
    /// meet the old one's name.
    finished: CancellationToken,
}

/// Follows the config for a newly registered session working in `cwd` until its
/// `cancel` (its teardown, or the gateway's stop).
pub(crate) fn start(
    core: &Arc<Core>,
    session_id: String,
    cwd: Option<String>,
    cancel: CancellationToken,
) {
    let Some(cwd) = cwd.map(PathBuf::from).filter(|c| c.is_absolute()) else {
        return;
    };
    let core = core.clone();
    core.clone().tasks.spawn(async move {
        let mut follower = Follower {
            core,
            session_id,
            cancel,
            providers: HashMap::new(),
            revision: 0,
            warned_ignored: None,
        };
        let mut applied: Option<Look> = None;
        loop {
            let now = blocking(&cwd, look).await;
            if let Some(now) = now {
                if applied.as_ref() != Some(&now) {
                    let edited = applied.is_some();
                    // Settled: the same look again after a pause (not at registration,
                    // where the file is read as it is).
                    let settled = if edited {
                        tokio::select! {
                            _ = tokio::time::sleep(PROJECT_CONFIG_SETTLE) => {}
                            _ = follower.cancel.cancelled() => return,
                        }
                        blocking(&cwd, look).await.as_ref() == Some(&now)
                    } else {
                        true
                    };
                    if settled {
                        follower.apply(&now, edited).await;
                        applied = Some(now);
                    }
                    // Not settled: looked at again at once, without the poll's wait.
                    if !settled {
                        continue;
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(PROJECT_CONFIG_POLL_INTERVAL) => {}
                _ = follower.cancel.cancelled() => return,
            }
        }
    });
}

async fn blocking<T: Send + 'static>(cwd: &Path, f: fn(&Path) -> T) -> Option<T> {
    let cwd = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || f(&cwd)).await.ok()
}

struct Follower {
    core: Arc<Core>,
    session_id: String,
    cancel: CancellationToken,
    providers: HashMap<String, Running>,
    revision: u64,
    /// The `.github` file last named as ignored, so an unrelated edit does not repeat it.
    warned_ignored: Option<PathBuf>,
}

impl Follower {
    /// Applies one reading of the config; `edited`: not the first one.
    async fn apply(&mut self, now: &Look, edited: bool) {
        let Some(located) = &now.located else {
            if edited {
                tracing::info!(target: LOG_TARGET, session = %self.session_id, "project config removed; what it started stops");
                self.set(None, Value::Null, Vec::new(), true).await;
            }
            return;
        };
        if located.ignored != self.warned_ignored {
            self.warned_ignored = located.ignored.clone();
            if let Some(ignored) = &located.ignored {
                let message = format!(
                    "{} is not read: {} in the same directory is, and the two are not merged; move what you need into it",
                    ignored.display(),
                    located.path.display()
                );
                warn_session(
                    &self.core,
                    &self.session_id,
                    message,
                    Some(ignored.display().to_string()),
                    None,
                );
            }
        }
        let path = located.path.clone();
        let read = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || config::read_json(&path)).await
        };
        let Ok(read) = read else { return };
        let parsed = read.and_then(|json| {
            let (providers, problems) = config::parse_value(&json, config::base_dir(&path))?;
            config::streams_of(&json).map_err(crate::error::Error::invalid)?;
            Ok((json, providers, problems))
        });
        let file = path.display().to_string();
        match parsed {
            Ok((json, providers, problems)) => {
                if edited {
                    tracing::info!(target: LOG_TARGET, session = %self.session_id, config = %file, "project config changed; applying it");
                }
                for problem in problems {
                    let message = format!("{file}: {problem}");
                    warn_session(
                        &self.core,
                        &self.session_id,
                        message,
                        Some(file.clone()),
                        None,
                    );
                }
                self.set(Some(path), json, providers, edited).await;
            }
            Err(e) if edited => crate::emitters::config::warn_that(
                &self.core,
                &self.session_id,
                &file,
                e.message,
                "nothing was changed: the previous configuration stays in force",
            ),
            Err(e) => warn_session(
                &self.core,
                &self.session_id,
                format!("{file}: {}; nothing in it was started", e.message),
                Some(file.clone()),
                None,
            ),
        }
    }

    /// Puts a usable reading in force: providers, emitters and injectors here, MCP
    /// servers through the snapshot the hub follows.
    async fn set(
        &mut self,
        path: Option<PathBuf>,
        json: Value,
        providers: Vec<ProjectProvider>,
        edited: bool,
    ) {
        self.providers(providers);
        crate::emitters::config::reconcile(
            &self.core,
            &self.session_id,
            path.as_deref(),
            &json,
            edited,
        );
        self.revision += 1;
        let snapshot = Arc::new(Snapshot {
            revision: self.revision,
            path,
            json,
        });
        let published = match self.core.state().sessions.get_mut(&self.session_id) {
            Some(s) if !s.is_ending() => {
                s.project_config = Some(snapshot);
                true
            }
            _ => false,
        };
        if published {
            self.core
                .events
                .emit(crate::events::GatewayEvent::StatusChanged);
        }
    }

    /// Starts added providers, restarts changed ones (after the old run is gone) and
    /// stops those whose entry left the file.
    fn providers(&mut self, wanted: Vec<ProjectProvider>) {
        let mut waits: HashMap<String, CancellationToken> = HashMap::new();
        self.providers.retain(|name, running| {
            let keep = wanted
                .iter()
                .any(|w| &w.name == name && same(w, &running.provider));
            if !keep {
                tracing::info!(target: LOG_TARGET, provider = %name, "project provider's entry changed or was removed; stopping it");
                running.stop.cancel();
                waits.insert(name.clone(), running.finished.clone());
            }
            keep
        });
        for p in wanted {
            if self.providers.contains_key(&p.name) {
                continue;
            }
            let stop = self.cancel.child_token();
            let finished = CancellationToken::new();
            let after = waits.remove(&p.name);
            let run = {
                let (core, session) = (self.core.clone(), self.session_id.clone());
                let (p, stop, finished) = (p.clone(), stop.clone(), finished.clone());
                async move {
                    if let Some(old) = after {
                        old.cancelled().await;
                    }
                    if !stop.is_cancelled() {
                        crate::project::supervisor::run(core, session, p, stop).await;
                    }
                    finished.cancel();
                }
            };
            self.core.tasks.spawn(run);
            self.providers.insert(
                p.name.clone(),
                Running {
                    provider: p,
                    stop,
                    finished,
                },
            );
        }
    }
}

/// Whether two entries start the same process (program, arguments, directory, env).
fn same(a: &ProjectProvider, b: &ProjectProvider) -> bool {
    a.name == b.name
        && a.spec.program == b.spec.program
        && a.spec.args == b.spec.args
        && a.spec.cwd == b.spec.cwd
        && a.spec.env == b.spec.env
}

//! Emitter process groups a gateway that died without stopping (SIGKILL, a crash, power
//! cut) left running: the next gateway on the same `TAP_HOME` kills them at start.
//!
//! Each running command's group is recorded as a file `<TAP_HOME>/emitter-groups/<pgid>`
//! holding the leader's start time (`/proc/<pid>/stat`, field 22), removed when the run
//! ends. At start, a record whose group still exists is an orphan: its leader is alive
//! with the same start time, or the leader is gone but members remain (Linux never hands
//! out a pid that is still some group's id, so that group is ours). A leader alive with
//! another start time is a reused pid, left alone.

use super::alive::start_time;
use std::path::{Path, PathBuf};

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::emitters::orphans";

/// The directory under `TAP_HOME` holding the records.
const DIR: &str = "emitter-groups";

/// A recorded group; the record is removed when this is dropped.
pub(crate) struct GroupRecord {
    path: Option<PathBuf>,
}

impl Drop for GroupRecord {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Records the group led by `pid` (a failure to write is logged: the run goes on, only
/// the clean-up after a crash is lost).
pub(crate) fn record(data_dir: &Path, pid: Option<u32>) -> GroupRecord {
    let Some(pid) = pid else {
        return GroupRecord { path: None };
    };
    let dir = data_dir.join(DIR);
    let path = dir.join(pid.to_string());
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        let start = start_time(pid).unwrap_or_default();
        std::fs::write(&path, format!("{start}\n"))
    });
    match written {
        Ok(()) => GroupRecord { path: Some(path) },
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, pid, error = %e, "could not record an emitter's process group; a gateway crash would leave it running");
            GroupRecord { path: None }
        }
    }
}

/// Kills the groups earlier gateways left behind; how many were found alive.
pub(crate) fn reap_left_over(data_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(data_dir.join(DIR)) else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let pgid = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<i32>().ok());
        let recorded = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok());
        let _ = std::fs::remove_file(&path);
        let (Some(pgid), Some(recorded)) = (pgid, recorded) else {
            continue;
        };
        if pgid <= 1 {
            continue;
        }
        let ours = match start_time(pgid as u32) {
            Some(now) => now == recorded,
            None => true,
        };
        #[cfg(unix)]
        if ours {
            use nix::sys::signal::{killpg, Signal};
            if killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL).is_ok() {
                tracing::warn!(target: LOG_TARGET, pgid,
                    "killed an emitter's process group a previous gateway left running"
                );
                killed += 1;
            }
        }
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_removed_when_the_run_ends_and_a_stale_one_is_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let r = record(dir.path(), Some(std::process::id()));
        let file = dir.path().join(DIR).join(std::process::id().to_string());
        assert!(file.is_file());
        drop(r);
        assert!(!file.exists());
        // A record of a group that no longer exists (pid reused by nobody) is cleared.
        std::fs::create_dir_all(dir.path().join(DIR)).unwrap();
        std::fs::write(dir.path().join(DIR).join("999999999"), "1\n").unwrap();
        assert_eq!(reap_left_over(dir.path()), 0);
        assert!(std::fs::read_dir(dir.path().join(DIR))
            .unwrap()
            .next()
            .is_none());
    }
}

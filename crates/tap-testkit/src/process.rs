//! Child processes owned by the test: killed when dropped, so a failing test leaves no
//! processes behind, with their output in a log file that is printed when the test fails.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::process::{Child, Command};

/// How long a test waits for a child process: it covers a gateway's 10 s shutdown deadline
/// where a provider ignores `shutdown.pending`, on a loaded machine.
pub const CHILD_PATIENCE: Duration = Duration::from_secs(40);

/// Sends `sig` (e.g. "INT", "TERM") to `pid`, with the shell's `kill` builtin (a
/// `kill` binary is not on every minimal system; `sh` is).
pub fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("sh")
        .args(["-c", "kill -s \"$0\" \"$1\"", sig, &pid.to_string()])
        .status()
        .expect("run sh");
    assert!(status.success(), "kill -s {sig} {pid} failed");
}

/// Command lines of running processes that contain `needle` (Linux: from /proc).
pub fn processes_matching(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_name().to_str()?.parse::<u32>().ok()?;
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            line.contains(needle).then_some(line)
        })
        .collect()
}

/// A child process, killed when dropped; its output log is printed if the test fails.
pub struct Proc {
    /// What the log calls it.
    pub name: String,
    /// The process.
    pub child: Child,
    log: PathBuf,
}

impl Proc {
    /// Spawns `cmd` with stderr (and stdout unless `pipe_stdout`) appended to
    /// `<log_dir>/<name>.log`.
    pub fn spawn(name: &str, mut cmd: Command, log_dir: &Path, pipe_stdout: bool) -> Self {
        let log = log_dir.join(format!("{name}.log"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("open log");
        cmd.stderr(file.try_clone().expect("clone log"));
        if pipe_stdout {
            cmd.stdout(Stdio::piped());
        } else {
            cmd.stdout(file);
        }
        cmd.kill_on_drop(true);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Self {
            name: name.to_string(),
            child,
            log,
        }
    }

    /// Its process id (it must still be running).
    pub fn pid(&self) -> u32 {
        self.child.id().expect("child still running")
    }

    /// Sends it `sig`.
    pub fn signal(&self, sig: &str) {
        signal(self.pid(), sig);
    }

    /// Waits for the process to exit (fails the test after [`CHILD_PATIENCE`]).
    pub async fn wait(&mut self) -> ExitStatus {
        match tokio::time::timeout(CHILD_PATIENCE, self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!(
                "{} did not exit within {CHILD_PATIENCE:?}; log:\n{}",
                self.name,
                self.log()
            ),
        }
    }

    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// What the process wrote to its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if std::thread::panicking() {
            eprintln!("----- {} log -----\n{}", self.name, self.log());
        }
    }
}

/// The result of a one-shot command.
#[derive(Debug)]
pub struct CliOut {
    /// How it exited.
    pub status: ExitStatus,
    /// Its stdout, lossily decoded.
    pub stdout: String,
    /// Its stderr, lossily decoded.
    pub stderr: String,
}

impl CliOut {
    /// The exit code (`None` when killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:?}"))
    }
}

/// Runs `cmd` to completion (fails the test after [`CHILD_PATIENCE`]).
pub async fn run(mut cmd: Command) -> CliOut {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = tokio::time::timeout(CHILD_PATIENCE, cmd.output())
        .await
        .expect("command did not finish in time")
        .expect("run command");
    CliOut {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

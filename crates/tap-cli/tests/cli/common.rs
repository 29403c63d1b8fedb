//! Test support for the `tap` binary: a real `tap gateway` child on 127.0.0.1:0 with its
//! own TAP_HOME and COPILOT_HOME, `tap session open` children and one-shot `tap` commands.
//! The generic pieces (child processes, the raw provider socket, `eventually`) are the
//! test kit's (`tap-testkit`); what is here knows the `tap` binary.
//!
//! Every child process is owned by a [`Proc`], which kills it when dropped, so a failing
//! test leaves no processes behind; the child's output goes to a log file that is
//! printed when the test fails.

use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

pub use tap_testkit::{processes_matching, run, signal, tool, CliOut, Proc, Provider};

/// How long a test waits for something that should happen. Generous, so a loaded
/// machine does not fail tests; a hang still fails. It also covers the gateway's 10 s
/// shutdown deadline where a provider ignores `shutdown.pending`.
pub const PATIENCE: Duration = tap_testkit::CHILD_PATIENCE;

/// The `tap` binary under test.
pub fn tap_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tap")
}

/// The workspace root (where `tests/providers/` lives).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A `tap` command with TAP_HOME and COPILOT_HOME set and nothing inherited that
/// could change its behaviour.
pub fn tap_command(home: &Path, copilot_home: &Path) -> Command {
    let mut cmd = Command::new(tap_bin());
    cmd.env("TAP_HOME", home)
        .env("COPILOT_HOME", copilot_home)
        .env_remove("TAP_LISTEN")
        .env_remove("TAP_LOG")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// Polls `f` until it returns `Some`, failing the test after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    tap_testkit::eventually_within(PATIENCE, what, f).await
}

/// A `tap gateway --listen 127.0.0.1:0` child with a private TAP_HOME and COPILOT_HOME.
pub struct GatewayProcess {
    pub proc: Proc,
    pub home: PathBuf,
    pub copilot_home: PathBuf,
    /// `ws://127.0.0.1:PORT`, from `gateway.json`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Keep last: removed after the process is killed.
    pub dir: tempfile::TempDir,
}

impl GatewayProcess {
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// With extra `tap gateway` arguments (e.g. `--spawn CMD`).
    pub async fn start_with(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::start_in(dir, extra).await
    }

    /// A gateway on `dir/home`, which may hold an earlier gateway's files (its history).
    pub async fn start_in(dir: tempfile::TempDir, extra: &[&str]) -> Self {
        Self::start_in_with(dir, extra, |_, _| {}).await
    }

    /// As [`Gateway::start_in`], with `tweak` applied to the `tap gateway` command (given
    /// `dir`), e.g. to set its environment.
    pub async fn start_in_with(
        dir: tempfile::TempDir,
        extra: &[&str],
        tweak: impl FnOnce(&mut Command, &Path),
    ) -> Self {
        Self::start_at(dir, "127.0.0.1:0", extra, tweak).await
    }

    /// As [`Gateway::start_in_with`], listening on `listen` (`127.0.0.1:PORT`).
    pub async fn start_at(
        dir: tempfile::TempDir,
        listen: &str,
        extra: &[&str],
        tweak: impl FnOnce(&mut Command, &Path),
    ) -> Self {
        let home = dir.path().join("home");
        let copilot_home = dir.path().join("copilot");
        let mut cmd = tap_command(&home, &copilot_home);
        cmd.args(["gateway", "--listen", listen]).args(extra);
        tweak(&mut cmd, dir.path());
        let mut proc = Proc::spawn("gateway", cmd, dir.path(), false);
        let state_file = home.join("gateway.json");
        let pid = proc.pid();
        let state: Value = eventually("gateway.json", || {
            let exited = proc.exited();
            let state_file = &state_file;
            async move {
                if let Some(status) = exited {
                    panic!("the gateway exited early with {status}");
                }
                let text = std::fs::read_to_string(state_file).ok()?;
                let state: Value = serde_json::from_str(&text).ok()?;
                // An earlier gateway's file may still be there for a moment.
                (state["pid"] == pid).then_some(state)
            }
        })
        .await;
        let url = state["address"]
            .as_str()
            .expect("gateway.json has an address")
            .to_string();
        let addr = url
            .strip_prefix("ws://")
            .expect("address is ws://")
            .to_string();
        Self {
            proc,
            home,
            copilot_home,
            url,
            addr,
            dir,
        }
    }

    /// Stops this gateway gracefully (SIGTERM; it must exit 0) and starts a new one on the
    /// same TAP_HOME. Sessions must have ended (or their providers answer) first, or the
    /// stop waits for the 10 s provider deadline.
    pub async fn restart(self) -> Self {
        let Self { mut proc, dir, .. } = self;
        proc.signal("TERM");
        let exit = proc.wait().await;
        assert_eq!(exit.code(), Some(0), "gateway exit: {exit}: {}", proc.log());
        drop(proc);
        Self::start_in(dir, &[]).await
    }

    /// A `tap` command aimed at this gateway.
    pub fn tap(&self) -> Command {
        tap_command(&self.home, &self.copilot_home)
    }

    /// Runs `tap ARGS` against this gateway.
    pub async fn run(&self, args: &[&str]) -> CliOut {
        let mut cmd = self.tap();
        cmd.args(args);
        run(cmd).await
    }

    /// `tap status --json`, which must succeed.
    pub async fn status(&self) -> Value {
        let out = self.run(&["status", "--json"]).await;
        assert_eq!(out.code(), Some(0), "tap status --json: {out:?}");
        out.json()
    }

    /// Polls `tap status --json` until `session` lists `tool`; returns that status.
    pub async fn wait_for_tool(&self, session: &str, tool: &str) -> Value {
        eventually(&format!("tool {tool} in session {session}"), || async {
            let status = self.status().await;
            let has = status["sessions"].as_array()?.iter().any(|s| {
                s["id"] == session
                    && s["tools"]
                        .as_array()
                        .is_some_and(|t| t.iter().any(|n| n == tool))
            });
            has.then_some(status)
        })
        .await
    }

    /// The token in `$TAP_HOME/provider-token`.
    pub fn provider_token(&self) -> String {
        read_token(&self.home.join("provider-token"))
    }

    /// The token in `$COPILOT_HOME/extensions/tap/.provider-token`.
    pub fn copilot_token(&self) -> String {
        read_token(&self.copilot_token_file())
    }

    pub fn copilot_token_file(&self) -> PathBuf {
        self.copilot_home
            .join("extensions")
            .join("tap")
            .join(".provider-token")
    }

    /// Every file the running gateway writes.
    pub fn token_files(&self) -> Vec<PathBuf> {
        vec![
            self.home.join("provider-token"),
            self.home.join("host-token"),
            self.home.join("gateway.json"),
            self.copilot_token_file(),
        ]
    }

    /// SIGTERM, then the exit status.
    pub async fn terminate(&mut self) -> ExitStatus {
        self.proc.signal("TERM");
        self.proc.wait().await
    }

    /// Asserts that a stopped gateway removed every file it wrote.
    pub fn assert_files_removed(&self) {
        for f in self.token_files() {
            assert!(!f.exists(), "{} still exists after stop", f.display());
        }
    }

    /// A provider past `auth` with the provider token; returns `sessions` too.
    pub async fn authed(&self) -> (Provider, Value) {
        let (p, sessions) = Provider::authed_at(&self.url, &self.provider_token()).await;
        (p.with_patience(PATIENCE), sessions)
    }

    /// A provider bound to `session` with `tools`; `hello.ack` and `session.lifecycle
    /// started` consumed.
    pub async fn bound(&self, name: &str, session: &str, tools: Value) -> Provider {
        let (mut p, _) = self.authed().await;
        p.send(json!({"type": "hello", "name": name, "protocolVersion": 2,
                      "session": session, "tools": tools}))
            .await;
        let ack = p.expect_next("hello.ack").await;
        assert_eq!(ack["sessionId"], session, "hello.ack: {ack}");
        let started = p.expect_next("session.lifecycle").await;
        assert_eq!(started["state"], "started", "{started}");
        p
    }

    /// A log file directory for other children of this test.
    pub fn log_dir(&self) -> &Path {
        self.dir.path()
    }
}

fn read_token(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .to_string()
}

/// A `tap session open` child: its session id (first stdout line) and its event lines.
pub struct SessionOpen {
    pub proc: Proc,
    pub id: String,
    /// The first stdout line, parsed.
    pub first_line: Value,
    lines: Lines<BufReader<ChildStdout>>,
}

impl SessionOpen {
    pub async fn open(gw: &GatewayProcess, extra: &[&str]) -> Self {
        let mut cmd = gw.tap();
        cmd.args(["session", "open"]).args(extra);
        let mut proc = Proc::spawn("session-open", cmd, gw.log_dir(), true);
        let stdout = proc.child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("no first line from tap session open")
            .expect("read stdout")
            .expect("tap session open printed nothing");
        let first_line: Value = serde_json::from_str(&first)
            .unwrap_or_else(|e| panic!("first line is not JSON ({e}): {first}"));
        let id = first_line["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("first line has no sessionId: {first}"))
            .to_string();
        Self {
            proc,
            id,
            first_line,
            lines,
        }
    }

    /// The next stdout line as JSON; `None` at end of output.
    pub async fn next_line(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("tap session open printed nothing in time")
            .expect("read stdout")?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("event line is not JSON ({e}): {line}")),
        )
    }

    /// Reads lines until one satisfies `pred`.
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.next_line().await {
                Some(v) if pred(&v) => return v,
                Some(_) => {}
                None => panic!("tap session open ended before {what}"),
            }
        }
    }

    /// SIGINT (Ctrl-C): the session ends. Returns the exit status and the lines printed
    /// after the interrupt.
    pub async fn interrupt(mut self) -> (ExitStatus, Vec<Value>) {
        self.proc.signal("INT");
        let mut rest = Vec::new();
        while let Some(v) = self.next_line().await {
            rest.push(v);
        }
        let status = self.proc.wait().await;
        (status, rest)
    }

    /// After the gateway stopped: the remaining lines (ending with the DISCONNECTED
    /// failure) and the exit status.
    pub async fn interrupt_after_gateway_stop(mut self) -> (ExitStatus, Vec<Value>) {
        let mut rest = Vec::new();
        while let Some(v) = self.next_line().await {
            rest.push(v);
        }
        (self.proc.wait().await, rest)
    }

    /// SIGINT now; the caller sends the second signal to `pid`. Returns the exit status and
    /// the log (stderr).
    pub async fn interrupt_twice(mut self, pid: u32) -> (ExitStatus, String) {
        signal(pid, "INT");
        while self.next_line().await.is_some() {}
        let status = self.proc.wait().await;
        (status, self.proc.log())
    }
}

//! Test support for the `tap` binary: a real `tap gateway` child on 127.0.0.1:0 with its
//! own TAP_HOME and COPILOT_HOME, `tap session open` children, one-shot `tap` commands,
//! the spec's example providers as children, and a raw provider socket for scripted
//! providers.
//!
//! Every child process is owned by a [`Proc`], which kills it when dropped, so a failing
//! test leaves no processes behind; the child's output goes to a log file that is
//! printed when the test fails.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdout, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for something that should happen. Generous, so a loaded
/// machine does not fail tests; a hang still fails. It also covers the gateway's 10 s
/// shutdown deadline where a provider ignores `shutdown.pending`.
pub const PATIENCE: Duration = Duration::from_secs(40);

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

/// Polls `f` every 50 ms until it returns `Some`, failing the test after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A child process, killed when dropped; its output log is printed if the test fails.
pub struct Proc {
    pub name: String,
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

    pub fn pid(&self) -> u32 {
        self.child.id().expect("child still running")
    }

    pub fn signal(&self, sig: &str) {
        signal(self.pid(), sig);
    }

    /// Waits for the process to exit (fails the test after [`PATIENCE`]).
    pub async fn wait(&mut self) -> ExitStatus {
        match tokio::time::timeout(PATIENCE, self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!(
                "{} did not exit within {PATIENCE:?}; log:\n{}",
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

/// The result of a one-shot `tap` command.
#[derive(Debug)]
pub struct CliOut {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl CliOut {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:?}"))
    }
}

/// Runs `cmd` to completion (fails the test after [`PATIENCE`]).
pub async fn run(mut cmd: Command) -> CliOut {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = tokio::time::timeout(PATIENCE, cmd.output())
        .await
        .expect("command did not finish in time")
        .expect("run command");
    CliOut {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A `tap gateway --listen 127.0.0.1:0` child with a private TAP_HOME and COPILOT_HOME.
pub struct Gateway {
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

impl Gateway {
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// With extra `tap gateway` arguments (e.g. `--spawn CMD`).
    pub async fn start_with(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let copilot_home = dir.path().join("copilot");
        let mut cmd = tap_command(&home, &copilot_home);
        cmd.args(["gateway", "--listen", "127.0.0.1:0"]).args(extra);
        let mut proc = Proc::spawn("gateway", cmd, dir.path(), false);
        let state_file = home.join("gateway.json");
        let state: Value = eventually("gateway.json", || {
            let exited = proc.exited();
            let state_file = &state_file;
            async move {
                if let Some(status) = exited {
                    panic!("the gateway exited early with {status}");
                }
                let text = std::fs::read_to_string(state_file).ok()?;
                serde_json::from_str(&text).ok()
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
        assert_eq!(state["pid"], json!(proc.pid()), "gateway.json pid");
        Self {
            proc,
            home,
            copilot_home,
            url,
            addr,
            dir,
        }
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
    pub async fn open(gw: &Gateway, extra: &[&str]) -> Self {
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

/// A raw provider socket speaking the Provider Interface, for scripted providers.
pub struct WsProvider {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl WsProvider {
    /// Connected and past `auth`; returns the `sessions` message too.
    pub async fn authed(gw: &Gateway) -> (Self, Value) {
        let (ws, _) = tokio_tungstenite::connect_async(gw.url.as_str())
            .await
            .expect("connect provider");
        let mut p = Self { ws };
        p.send(json!({"type": "auth", "token": gw.provider_token()}))
            .await;
        let sessions = p.expect("sessions").await;
        (p, sessions)
    }

    /// Bound to `session` with `tools`; `hello.ack` and `session.lifecycle started` consumed.
    pub async fn bound(gw: &Gateway, name: &str, session: &str, tools: Value) -> Self {
        let (mut p, _) = Self::authed(gw).await;
        p.send(json!({"type": "hello", "name": name, "protocolVersion": 2,
                      "session": session, "tools": tools}))
            .await;
        let ack = p.expect("hello.ack").await;
        assert_eq!(ack["sessionId"], session, "hello.ack: {ack}");
        let started = p.expect("session.lifecycle").await;
        assert_eq!(started["state"], "started", "{started}");
        p
    }

    pub async fn send(&mut self, v: Value) {
        self.ws
            .send(Message::text(v.to_string()))
            .await
            .expect("send");
    }

    /// The next JSON message (fails on close or after [`PATIENCE`]).
    pub async fn recv(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("no message from the gateway in time")
                .expect("socket closed")
                .expect("socket error");
            match msg {
                Message::Text(t) => return serde_json::from_str(&t).expect("JSON from gateway"),
                Message::Close(c) => panic!("gateway closed the socket: {c:?}"),
                _ => {}
            }
        }
    }

    /// The next message of type `ty`; other types (`sessions.updated`, ...) are skipped,
    /// but an `error` fails the test.
    pub async fn expect(&mut self, ty: &str) -> Value {
        loop {
            let v = self.recv().await;
            if v["type"] == ty {
                return v;
            }
            assert_ne!(v["type"], "error", "expected {ty}, got an error: {v}");
        }
    }
}

/// A tool definition.
pub fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("test tool {name}"),
           "parameters": {"type": "object", "properties": {}}})
}

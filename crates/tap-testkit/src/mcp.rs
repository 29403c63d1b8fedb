//! Real MCP clients as child processes, driven one JSON line at a time: the PyPI `mcp`
//! client (`tests/mcp/py_client.py`, both MCP generations, HTTP or `tap mcp` on stdio)
//! and the npm `@modelcontextprotocol/sdk` client (`tests/mcp/node_client.mjs`). A test
//! writes commands (`{"op": "call", …}`) and reads what the client observed
//! (`{"op": "result", …}`); see the scripts for the vocabulary.

use crate::process::Proc;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// How long a test waits for an MCP client's next observation: a Python client's start
/// (imports) takes a second or two on a loaded machine.
pub const MCP_PATIENCE: Duration = Duration::from_secs(30);

/// The workspace root, where `tests/mcp/` lives.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The Python that has the `mcp` package: `TAP_TEST_PYTHON` (scripts/test.sh sets it), else
/// `python3`.
pub fn test_python() -> String {
    std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `python tests/mcp/servers/<script> ARGS…`: a fixture server that prints `PORT <n>` on
/// stdout once it listens on 127.0.0.1. The child (killed when dropped) and its port.
pub async fn fixture_server(script: &str, args: &[&str]) -> (tokio::process::Child, u16) {
    let path = workspace_root().join("tests/mcp/servers").join(script);
    let mut child = Command::new(test_python())
        .arg(path)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {script}: {e}"));
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let first = tokio::time::timeout(MCP_PATIENCE, lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("{script} printed no PORT line in time"))
        .expect("read its stdout")
        .unwrap_or_else(|| panic!("{script} ended before its PORT line"));
    let port = first
        .strip_prefix("PORT ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("{script}: not a PORT line: {first}"));
    (child, port)
}

/// One MCP client process.
pub struct McpClient {
    /// The process (its stderr is in its log, printed when a test fails).
    pub proc: Proc,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Observations read while waiting for another kind.
    pending: VecDeque<Value>,
}

impl McpClient {
    /// Spawns `cmd` (one of the driver scripts) with its pipes; waits for `ready`.
    pub async fn spawn(name: &str, mut cmd: Command, log_dir: &Path) -> (Self, Value) {
        cmd.stdin(Stdio::piped());
        let mut proc = Proc::spawn(name, cmd, log_dir, true);
        let stdin = proc.child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(proc.child.stdout.take().expect("piped stdout")).lines();
        let mut client = Self {
            proc,
            stdin,
            stdout,
            pending: VecDeque::new(),
        };
        let ready = client.expect("ready").await;
        (client, ready)
    }

    /// The Python client on Streamable HTTP at `url` with `token` as bearer; `mode` is
    /// `legacy`, `2026-07-28` or `auto`.
    pub async fn python_http(url: &str, token: &str, mode: &str, log_dir: &Path) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["http", url, mode])
            .env("TAP_HOST_TOKEN", token);
        Self::spawn(&format!("mcp-python-{mode}"), cmd, log_dir).await
    }

    /// [`McpClient::python_http`] asking for the profile `profile` (the `tap-profile`
    /// header): the tools of its session are that profile's.
    pub async fn python_http_profile(
        url: &str,
        token: &str,
        mode: &str,
        profile: &str,
        log_dir: &Path,
    ) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["http", url, mode])
            .env("TAP_HOST_TOKEN", token)
            .env("TAP_PY_CLIENT_PROFILE", profile);
        Self::spawn(&format!("mcp-python-{mode}-{profile}"), cmd, log_dir).await
    }

    /// [`McpClient::python_http`] (legacy generation) with a client that declares sampling
    /// and elicitation and answers them: sampling with "sampled: <the prompt>",
    /// elicitation by accepting `{"name": "Ada Lovelace"}`.
    pub async fn python_http_answering(url: &str, token: &str, log_dir: &Path) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["http", url, "legacy"])
            .env("TAP_HOST_TOKEN", token)
            .env("TAP_PY_CLIENT_ANSWERS", "1");
        Self::spawn("mcp-python-answering", cmd, log_dir).await
    }

    /// [`McpClient::python_http`] (legacy generation, asking for `profile` if given) with a
    /// client that declares elicitation and shows each request to the test as an
    /// `elicitation` observation; the test answers with `{"op": "elicit_answer", "action",
    /// "content"}` (or never does).
    pub async fn python_http_eliciting(
        url: &str,
        token: &str,
        profile: Option<&str>,
        log_dir: &Path,
    ) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["http", url, "legacy"])
            .env("TAP_HOST_TOKEN", token)
            .env("TAP_PY_CLIENT_ELICIT", "1");
        if let Some(p) = profile {
            cmd.env("TAP_PY_CLIENT_PROFILE", p);
        }
        Self::spawn("mcp-python-eliciting", cmd, log_dir).await
    }

    /// [`McpClient::python_stdio`] launching `tap mcp --session SESSION --profile PROFILE`.
    pub async fn python_stdio_profile(
        tap: &Path,
        home: &Path,
        session: &str,
        profile: &str,
        log_dir: &Path,
    ) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["stdio", session, "legacy"])
            .env("TAP_BIN", tap)
            .env("TAP_HOME", home)
            .env("TAP_PY_CLIENT_PROFILE", profile);
        Self::spawn(&format!("mcp-python-stdio-{profile}"), cmd, log_dir).await
    }

    /// The Python client launching `tap mcp --session SESSION` (`tap` and `TAP_HOME` given).
    pub async fn python_stdio(
        tap: &Path,
        home: &Path,
        session: &str,
        mode: &str,
        log_dir: &Path,
    ) -> (Self, Value) {
        let mut cmd = Command::new(test_python());
        cmd.arg(workspace_root().join("tests/mcp/py_client.py"))
            .args(["stdio", session, mode])
            .env("TAP_BIN", tap)
            .env("TAP_HOME", home);
        Self::spawn(&format!("mcp-python-stdio-{mode}"), cmd, log_dir).await
    }

    /// The TypeScript SDK's client launching `tap mcp --session SESSION`.
    pub async fn node_stdio(
        tap: &Path,
        home: &Path,
        session: &str,
        log_dir: &Path,
    ) -> (Self, Value) {
        let mut cmd = Command::new("node");
        cmd.arg(workspace_root().join("tests/mcp/node_client.mjs"))
            .args(["stdio", session])
            .env("TAP_BIN", tap)
            .env("TAP_HOME", home);
        Self::spawn("mcp-node-stdio", cmd, log_dir).await
    }

    /// The TypeScript SDK's client on Streamable HTTP.
    pub async fn node_http(url: &str, token: &str, log_dir: &Path) -> (Self, Value) {
        let mut cmd = Command::new("node");
        cmd.arg(workspace_root().join("tests/mcp/node_client.mjs"))
            .args(["http", url])
            .env("TAP_HOST_TOKEN", token);
        Self::spawn("mcp-node-http", cmd, log_dir).await
    }

    /// Sends one command.
    pub async fn send(&mut self, command: Value) {
        let mut line = command.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to the MCP client");
        self.stdin.flush().await.expect("flush to the MCP client");
    }

    /// The next observation of kind `op` (others are kept for later).
    pub async fn expect(&mut self, op: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|v| v["op"] == op) {
            return self.pending.remove(i).expect("found");
        }
        loop {
            let line = match tokio::time::timeout(MCP_PATIENCE, self.stdout.next_line()).await {
                Ok(Ok(Some(line))) => line,
                Ok(Ok(None)) | Ok(Err(_)) => panic!(
                    "{} ended while a test waited for '{op}'; log:\n{}",
                    self.proc.name,
                    self.proc.log()
                ),
                Err(_) => panic!(
                    "{} observed no '{op}' within {MCP_PATIENCE:?}; seen: {:?}",
                    self.proc.name, self.pending
                ),
            };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", self.proc.name));
            if v["op"] == op {
                return v;
            }
            self.pending.push_back(v);
        }
    }

    /// How many observations of kind `op` were read while waiting for others and not
    /// taken yet (a test that must not see one looks here after a later observation).
    pub fn held(&self, op: &str) -> usize {
        self.pending.iter().filter(|v| v["op"] == op).count()
    }

    /// `tools` → the tool names.
    pub async fn tool_names(&mut self) -> Vec<String> {
        self.send(serde_json::json!({"op": "tools"})).await;
        let v = self.expect("tools").await;
        serde_json::from_value(v["names"].clone()).expect("names")
    }

    /// `tools` → each listed tool's input schema, by name (as the client parsed it).
    pub async fn tool_schemas(&mut self) -> Value {
        self.send(serde_json::json!({"op": "tools"})).await;
        self.expect("tools").await["schemas"].clone()
    }

    /// Calls `tool` with `args` as call `id` and waits for its outcome (`result` or
    /// `error`).
    pub async fn call(&mut self, id: &str, tool: &str, args: Value) -> Value {
        self.start_call(id, tool, args, false).await;
        self.outcome(id).await
    }

    /// Starts a call without waiting for it.
    pub async fn start_call(&mut self, id: &str, tool: &str, args: Value, progress: bool) {
        self.send(
            serde_json::json!({"op": "call", "id": id, "tool": tool, "args": args,
                                     "progress": progress}),
        )
        .await;
    }

    /// The outcome of call `id`: a `result`, an `error` (JSON-RPC) or `cancelled`.
    pub async fn outcome(&mut self, id: &str) -> Value {
        let deadline = tokio::time::Instant::now() + MCP_PATIENCE;
        loop {
            if let Some(i) = self.pending.iter().position(|v| {
                v["id"] == id && matches!(v["op"].as_str(), Some("result" | "error" | "cancelled"))
            }) {
                return self.pending.remove(i).expect("found");
            }
            let line = match tokio::time::timeout_at(deadline, self.stdout.next_line()).await {
                Ok(Ok(Some(line))) => line,
                _ => panic!(
                    "{}: no outcome for call {id}; seen: {:?}; log:\n{}",
                    self.proc.name,
                    self.pending,
                    self.proc.log()
                ),
            };
            self.pending
                .push_back(serde_json::from_str(&line).expect("JSON line"));
        }
    }
}

//! `tap mcp logs NAME --follow` against a real `tap gateway` child running the fixture
//! `tests/mcp/servers/stderr_say.py`: the tail first, then each line the server writes to
//! stderr as it writes it, until Ctrl-C (exit 0) or the gateway's end (exit 1,
//! `DISCONNECTED`).

use crate::common::{GatewayProcess, Proc, SessionOpen, PATIENCE};
use crate::mcp_servers_cli::{fixture, listed_when, live, live_ok};
use serde_json::{json, Value};
use tap_testkit::{eventually, test_python};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::ChildStdout;

/// A `tap mcp logs NAME --follow` child and its stdout lines.
struct Follower {
    proc: Proc,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Follower {
    fn start(gw: &GatewayProcess, name: &str, log: &str) -> Self {
        let mut cmd = gw.tap();
        cmd.current_dir(gw.dir.path())
            .args(["mcp", "logs", name, "--follow"]);
        let mut proc = Proc::spawn(log, cmd, gw.log_dir(), true);
        let stdout = proc.child.stdout.take().expect("piped stdout");
        Self {
            proc,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// The next line; `None` at the end of its output.
    async fn line(&mut self) -> Option<String> {
        tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("{} printed nothing in time", self.proc.name))
            .expect("read stdout")
    }

    /// Reads lines until `text`.
    async fn until(&mut self, text: &str) {
        while let Some(line) = self.line().await {
            if line == text {
                return;
            }
        }
        panic!(
            "{} ended before '{text}': {}",
            self.proc.name,
            self.proc.log()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_follow_prints_new_lines_until_ctrl_c_or_the_gateways_end() {
    let mut gw = GatewayProcess::start().await;
    let say = fixture("stderr_say.py");
    live_ok(&gw, &["mcp", "add", "say", "--", &test_python(), &say]).await;
    listed_when(&gw, "say", |s| s["state"] == "ready").await;
    eventually("say's first stderr line", || async {
        let out = live_ok(&gw, &["mcp", "logs", "say"]).await;
        out.stdout.contains("say: ready").then_some(())
    })
    .await;

    // The tail is printed once the log is followed: lines written after it are new.
    let mut follower = Follower::start(&gw, "say", "logs-follow");
    follower.until("say: ready").await;
    let mut interrupted = Follower::start(&gw, "say", "logs-follow-int");
    interrupted.until("say: ready").await;

    let session = SessionOpen::open(&gw, &["--label", "logs"]).await;
    gw.wait_for_tool(&session.id, "say__say").await;
    for text in ["first line", "second line"] {
        let args = json!({ "text": text }).to_string();
        let out = live_ok(&gw, &["call", "--session", &session.id, "say__say", &args]).await;
        assert_eq!(out.json(), json!("said"), "{out:?}");
    }
    follower.until("first line").await;
    assert_eq!(follower.line().await.as_deref(), Some("second line"));
    interrupted.until("second line").await;

    // Ctrl-C ends it quietly.
    interrupted.proc.signal("INT");
    assert_eq!(interrupted.line().await, None);
    assert_eq!(interrupted.proc.wait().await.code(), Some(0));

    // The gateway's end ends it with the contract's failure.
    drop(session);
    gw.terminate().await;
    let last = follower.line().await.expect("a failure line");
    let v: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(v["errorCode"], "DISCONNECTED", "{last}");
    assert!(v["error"].as_str().unwrap().contains("'say'"), "{last}");
    assert_eq!(follower.proc.wait().await.code(), Some(1));

    // Without a gateway there is nothing to follow.
    let out = live(&gw, &["mcp", "logs", "say", "--follow"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert_eq!(out.json()["errorCode"], "DISCONNECTED", "{out:?}");
}

//! The spec's own example providers (tests/providers/, copied from the Provider Interface
//! v2 and Core Profile documents) against the real `tap` binary: a gateway, a session
//! opened with `tap session open`, the example provider as a child process, a
//! `tap call`, the end of the session, and the gateway's stop.
//!
//! Needs `node` with `npm install --prefix tests/providers/node` done, and a Python with
//! `websockets` (`TAP_TEST_PYTHON`, else `python3`); scripts/test.sh provides both.

use crate::common;
use crate::common::{eventually, GatewayProcess, Proc, SessionOpen};
use serde_json::{json, Value};
use tokio::process::Command;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Lang {
    Node,
    Python,
}

struct Example {
    lang: Lang,
    /// File under tests/providers/node or tests/providers/python.
    file: &'static str,
    /// The provider's `hello` name in the spec text.
    provider: &'static str,
    tool: &'static str,
    description: &'static str,
    args: &'static str,
    expected: Value,
    /// Core Profile examples answer `shutdown.pending` with `goodbye` and disconnect;
    /// the v2 minimal examples ignore it.
    core: bool,
}

fn spawn_example(ex: &Example, gw: &GatewayProcess, token: &str) -> Proc {
    let root = common::repo_root().join("tests").join("providers");
    let mut cmd = match ex.lang {
        Lang::Node => {
            let dir = root.join("node");
            assert!(
                dir.join("node_modules").join("ws").is_dir(),
                "the Node examples need `ws`: run `npm install --prefix tests/providers/node` \
                 (scripts/test.sh does)"
            );
            let mut cmd = Command::new("node");
            cmd.arg(dir.join(ex.file));
            cmd
        }
        Lang::Python => {
            let python = std::env::var("TAP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
            let mut cmd = Command::new(python);
            // -u: unbuffered output, so the log shows what the example printed.
            cmd.arg("-u").arg(root.join("python").join(ex.file));
            cmd
        }
    };
    cmd.env("TAP_GATEWAY_URL", &gw.url)
        .env("TAP_PROVIDER_TOKEN", token)
        .stdin(std::process::Stdio::null());
    Proc::spawn(ex.file, cmd, gw.log_dir(), false)
}

/// The entry for `name` in `status.providers`, if listed.
fn provider_entry(status: &Value, name: &str) -> Option<Value> {
    status["providers"]
        .as_array()
        .expect("providers array")
        .iter()
        .find(|p| p["name"] == name)
        .cloned()
}

async fn exercise(ex: Example) {
    let mut gw = GatewayProcess::start().await;
    let token = gw.provider_token();
    assert!(token.starts_with("ptk-"), "provider token: {token}");
    // Spec providers find the token under COPILOT_HOME; it is the same gateway token.
    assert_eq!(gw.copilot_token(), token);
    let provider_token = if ex.core { gw.copilot_token() } else { token };

    let mut session = SessionOpen::open(&gw, &["--label", "x"]).await;
    let sid = session.id.clone();
    let mut provider = spawn_example(&ex, &gw, &provider_token);

    // The tool reaches the session host (a `session.tools` line from `tap session open`)...
    let tools_line = session
        .wait_for("the example's tool", |v| {
            v["type"] == "session.tools"
                && v["tools"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["name"] == ex.tool))
        })
        .await;
    assert_eq!(tools_line["sessionId"], sid.as_str());
    // The example's one tool, beside the gateway's built-in `tap_*` ones.
    let theirs: Vec<&Value> = tools_line["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["provider"] != tap_gateway::BUILTIN_PROVIDER)
        .collect();
    assert_eq!(theirs.len(), 1, "{tools_line}");
    let entry = theirs[0];
    assert_eq!(entry["name"], ex.tool);
    assert_eq!(entry["description"], ex.description);
    assert_eq!(entry["provider"], ex.provider);
    assert_eq!(entry["parameters"]["required"], json!([ex.args_key()]));
    assert_eq!(entry["timeoutMs"], 120_000);

    // ... and `tap status` shows the provider bound to the session.
    let status = gw.wait_for_tool(&sid, ex.tool).await;
    let p = provider_entry(&status, ex.provider).expect("provider listed");
    assert_eq!(p["state"], "bound", "{p}");
    assert_eq!(p["session"], sid.as_str());
    assert_eq!(p["trust"], "project");
    assert_eq!(p["tools"], json!([ex.tool]));

    // The call goes through the example's handler.
    let out = gw.run(&["call", "--session", &sid, ex.tool, ex.args]).await;
    assert_eq!(out.code(), Some(0), "tap call: {out:?}");
    assert_eq!(out.json(), ex.expected, "tap call: {out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "one JSON line: {out:?}");

    // It fails soft: a call without its argument is answered with an error, and the
    // provider is still there to answer the next call.
    let out = gw.run(&["call", "--session", &sid, ex.tool, "{}"]).await;
    assert_eq!(out.code(), Some(1), "a call without arguments: {out:?}");
    let code = out.json()["errorCode"].clone();
    assert!(
        code.is_string() && code != "DISCONNECTED",
        "answered with an error, not a crash: {out:?}"
    );
    let out = gw.run(&["call", "--session", &sid, ex.tool, ex.args]).await;
    assert_eq!(out.json(), ex.expected, "the call after a bad one: {out:?}");

    // Ctrl-C on `tap session open` ends the session.
    let (status, _) = session.interrupt().await;
    assert!(status.success(), "tap session open exit: {status}");

    if ex.core {
        // The Core examples answer shutdown.pending with goodbye and close their socket.
        if ex.lang == Lang::Python {
            // The Python example returns from connect(): the process ends cleanly.
            let exit = provider.wait().await;
            assert!(exit.success(), "python example exit: {exit}");
        }
        // (The Node example reconnects after 5 s, sees no session and closes again; its
        // `example-provider` connection is gone either way. Had it ignored
        // shutdown.pending, it would stay listed, unbound, after the deadline.)
        eventually("the example's connection to go away", || async {
            let status = gw.status().await;
            provider_entry(&status, ex.provider).is_none().then_some(())
        })
        .await;
    } else {
        // The v2 minimal examples ignore shutdown.pending: the session was torn down at
        // the deadline and the provider stays connected, unbound.
        let status = gw.status().await;
        let p = provider_entry(&status, ex.provider).expect("still connected");
        assert_eq!(p["state"], "unbound", "{p}");
        assert!(p.get("session").is_none(), "{p}");
        assert!(provider.exited().is_none(), "the example exited early");
    }
    let status = gw.status().await;
    assert_eq!(status["sessions"], json!([]));

    // SIGTERM stops the gateway cleanly and removes its token files.
    let exit = gw.terminate().await;
    assert_eq!(exit.code(), Some(0), "gateway exit: {exit}");
    gw.assert_files_removed();
    if !ex.core {
        // The v2 examples have no reconnect loop: the closed socket ends them.
        let exit = provider.wait().await;
        assert!(exit.success(), "{} exit: {exit}", ex.file);
    }
}

impl Example {
    fn args_key(&self) -> &'static str {
        if self.tool == "compute" {
            "expr"
        } else {
            "name"
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_profile_node_example() {
    exercise(Example {
        lang: Lang::Node,
        file: "core-example.mjs",
        provider: "example-provider",
        tool: "greet",
        description: "Greet someone by name",
        args: r#"{"name":"Ada"}"#,
        expected: json!("Hello, Ada!"),
        core: true,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_profile_python_example() {
    exercise(Example {
        lang: Lang::Python,
        file: "core_example.py",
        provider: "example-provider-python",
        tool: "greet",
        description: "Greet someone by name",
        args: r#"{"name":"Ada"}"#,
        expected: json!("Hello, Ada!"),
        core: true,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_minimal_node_example() {
    exercise(Example {
        lang: Lang::Node,
        file: "minimal-v2.mjs",
        provider: "hello-provider",
        tool: "say_hello",
        description: "Says hello to someone",
        args: r#"{"name":"Ada"}"#,
        expected: json!("Hello, Ada!"),
        core: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_minimal_python_example() {
    exercise(Example {
        lang: Lang::Python,
        file: "minimal_v2.py",
        provider: "python-provider",
        tool: "compute",
        description: "Evaluate a Python expression",
        args: r#"{"expr":"6*7"}"#,
        expected: json!(42),
        core: false,
    })
    .await;
}

/// `tap gateway --spawn` runs the Node Core example unchanged (token and URL from the
/// environment). If it connects before the session exists it closes and retries every
/// 5 s, as the spec's reconnect loop says; either way it binds once a session is open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_profile_node_example_spawned_by_the_gateway() {
    let script = common::repo_root()
        .join("tests")
        .join("providers")
        .join("node")
        .join("core-example.mjs");
    assert!(
        script.with_file_name("node_modules").join("ws").is_dir(),
        "run `npm install --prefix tests/providers/node`"
    );
    // A unique, ignored extra argument finds the process later.
    let marker = format!("tap-spawn-test-{}", std::process::id());
    let command = format!("exec node '{}' {marker}", script.display());
    let mut gw = GatewayProcess::start_with(&["--spawn", &command]).await;
    let mut session = SessionOpen::open(&gw, &["--label", "x"]).await;
    session
        .wait_for("greet", |v| {
            v["type"] == "session.tools"
                && v["tools"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["name"] == "greet"))
        })
        .await;
    let out = gw
        .run(&[
            "call",
            "--session",
            &session.id,
            "greet",
            r#"{"name":"Ada"}"#,
        ])
        .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(out.json(), json!("Hello, Ada!"));

    // Stopping the gateway ends the session (the example says goodbye), then kills the
    // spawned process before exiting: nothing is left running. (Checked at once: left
    // alone, the example would only die at its next reconnect, 5 s later.)
    let running = common::processes_matching(&marker);
    assert!(
        running.iter().any(|l| l.starts_with("node ")),
        "the spawned example is not found running: {running:?}"
    );
    let exit = gw.terminate().await;
    assert_eq!(exit.code(), Some(0), "gateway exit: {exit}");
    gw.assert_files_removed();
    let left = common::processes_matching(&marker);
    assert!(left.is_empty(), "the spawned example still runs: {left:?}");
    let (status, rest) = session.interrupt_after_gateway_stop().await;
    assert_eq!(status.code(), Some(1), "{rest:?}");
    assert_eq!(
        rest.last().unwrap()["errorCode"],
        "DISCONNECTED",
        "{rest:?}"
    );
}

//! `tap mcp` with real MCP clients launching it, as Claude Desktop, Claude Code or Cursor
//! would: the PyPI `mcp` client in both generations, the TypeScript SDK's client, the
//! Inspector's CLI, and a pydantic-ai agent loop; plus `tap mcp` without a gateway and
//! `tap mcp config`. Real `tap gateway` child, raw providers on real sockets.

use crate::common::{eventually, repo_root, run, tap_bin, GatewayProcess, Provider};
use serde_json::{json, Value};
use std::path::Path;
use tap_testkit::{test_python, McpClient};
use tokio::process::Command;

/// The id of the session `tap mcp --session LABEL` registered.
async fn session_labelled(gw: &GatewayProcess, label: &str) -> String {
    eventually(&format!("session {label}"), || async {
        let status = gw.status().await;
        status["sessions"]
            .as_array()?
            .iter()
            .find(|s| s["label"] == label)
            .map(|s| s["id"].as_str().unwrap().to_string())
    })
    .await
}

/// A provider with a `greet` tool bound to the session `tap mcp --session LABEL` made.
async fn greeter(gw: &GatewayProcess, label: &str) -> (Provider, String) {
    let session = session_labelled(gw, label).await;
    let greet = json!({"name": "greet", "description": "Greets someone", "parameters": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}});
    let p = gw.bound("greeter", &session, json!([greet])).await;
    gw.wait_for_tool(&session, "greet").await;
    (p, session)
}

/// Answers the next `tool.call` with a greeting of its `name`.
async fn answer_greeting(p: &mut Provider) -> Value {
    let call = p.expect_next("tool.call").await;
    let name = call["args"]["name"].as_str().unwrap_or("?").to_string();
    p.send(json!({"type": "tool.result", "id": call["id"], "data": format!("Hello, {name}!")}))
        .await;
    call
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_uses_a_provider_through_tap_mcp_in_both_generations() {
    let gw = GatewayProcess::start().await;
    for mode in ["legacy", "2026-07-28"] {
        let label = format!("stdio-{mode}");
        let (mut c, _) =
            McpClient::python_stdio(Path::new(tap_bin()), &gw.home, &label, mode, gw.log_dir())
                .await;
        c.tool_names().await; // names the session
        let (mut p, session) = greeter(&gw, &label).await;
        assert!(
            c.tool_names().await.contains(&"greet".to_string()),
            "{mode}"
        );
        c.start_call("1", "greet", json!({"name": "Ada"}), false)
            .await;
        let call = answer_greeting(&mut p).await;
        assert_eq!(call["sessionId"], session.as_str());
        let r = c.outcome("1").await;
        assert_eq!(r["content"][0]["text"], "Hello, Ada!", "{mode}: {r}");
    }
}

/// Through `tap mcp` as over HTTP: progress before the result and an explicit cancel in
/// both generations, and a stream read as a resource (the `initialize` generation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_cancel_and_stream_resources_work_through_tap_mcp() {
    let gw = GatewayProcess::start().await;
    for mode in ["legacy", "2026-07-28"] {
        let label = format!("more-{mode}");
        let (mut c, _) =
            McpClient::python_stdio(Path::new(tap_bin()), &gw.home, &label, mode, gw.log_dir())
                .await;
        c.tool_names().await; // names the session
        let (mut p, _) = greeter(&gw, &label).await;
        // `greeter` waited for the gateway to publish the tool.
        assert!(
            c.tool_names().await.contains(&"greet".to_string()),
            "{mode}"
        );

        c.start_call("p", "greet", json!({"name": "Ada"}), true)
            .await;
        let call = p.expect_next("tool.call").await;
        p.send(json!({"type": "tool.progress", "id": call["id"], "message": "halfway"}))
            .await;
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "done"}))
            .await;
        assert_eq!(c.expect("progress").await["message"], "halfway", "{mode}");
        assert_eq!(c.outcome("p").await["content"][0]["text"], "done", "{mode}");

        c.start_call("c", "greet", json!({"name": "Bo"}), false)
            .await;
        let call = p.expect_next("tool.call").await;
        c.send(json!({"op": "cancel", "id": "c"})).await;
        let cancel = p.expect_next("tool.cancel").await;
        assert_eq!(cancel["id"], call["id"], "{mode}");
        assert_eq!(c.outcome("c").await["op"], "cancelled", "{mode}");

        if mode == "legacy" {
            p.send(json!({"type": "push", "level": "keep", "event": "noted", "stream": "notes"}))
                .await;
            // Once the gateway answered a later frame of this provider, the push is stored
            // (a read before that finds no stream yet: an error, not a read).
            tap_testkit::until_fence(&mut p).await;
            c.send(json!({"op": "read", "uri": "tap://streams/greeter/notes"}))
                .await;
            let r = c.expect("read").await;
            let text = r["text"]
                .as_str()
                .filter(|t| t.contains("noted"))
                .expect("the pushed event in the stream resource");
            let event: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            assert_eq!(event["event"], "noted");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_call_cancels_it_at_the_provider() {
    let gw = GatewayProcess::start().await;
    let (mut c, _) = McpClient::python_stdio(
        Path::new(tap_bin()),
        &gw.home,
        "vanish",
        "legacy",
        gw.log_dir(),
    )
    .await;
    let (mut p, _) = greeter(&gw, "vanish").await;
    c.start_call("1", "greet", json!({"name": "Ada"}), false)
        .await;
    let call = p.expect_next("tool.call").await;
    // The client dies: `tap mcp` sees its stdin close and hangs up.
    c.proc.signal("KILL");
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_lists_and_calls_through_tap_mcp_and_http() {
    let gw = GatewayProcess::start().await;
    let (mut c, _) =
        McpClient::node_stdio(Path::new(tap_bin()), &gw.home, "ts", gw.log_dir()).await;
    c.tool_names().await;
    let (mut p, _) = greeter(&gw, "ts").await;
    assert!(c.tool_names().await.contains(&"greet".to_string()));
    c.start_call("1", "greet", json!({"name": "Grace"}), false)
        .await;
    answer_greeting(&mut p).await;
    let r = c.outcome("1").await;
    assert_eq!(r["content"][0]["text"], "Hello, Grace!", "{r}");

    // The same session over Streamable HTTP, by its label.
    let url = format!("{}/mcp/ts", gw.url.replacen("ws://", "http://", 1));
    let token = std::fs::read_to_string(gw.home.join("host-token")).unwrap();
    let (mut h, _) = McpClient::node_http(&url, token.trim(), gw.log_dir()).await;
    h.start_call("2", "greet", json!({"name": "Linus"}), false)
        .await;
    answer_greeting(&mut p).await;
    assert_eq!(h.outcome("2").await["content"][0]["text"], "Hello, Linus!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_cli_lists_and_calls_through_tap_mcp() {
    let gw = GatewayProcess::start().await;
    // The Inspector starts `tap mcp` itself for each command; a first one makes the session.
    let inspector = |args: &[&str]| {
        let mut cmd = Command::new(repo_root().join("tests/mcp/node_modules/.bin/mcp-inspector"));
        cmd.arg("--cli")
            .args(["-e", &format!("TAP_HOME={}", gw.home.display())])
            .args(args)
            .args(["--", tap_bin(), "mcp", "--session", "inspected"])
            .env("HOME", gw.dir.path());
        cmd
    };
    let out = run(inspector(&["--method", "tools/list"])).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("tap_stream_history"), "{out:?}");
    let (mut p, _) = greeter(&gw, "inspected").await;
    let call = tokio::spawn(run(inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "greet",
        "--tool-arg",
        "name=Inspector",
    ])));
    answer_greeting(&mut p).await;
    let out = call.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("Hello, Inspector!"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pydantic_ai_agent_calls_a_provider_tool_through_tap_mcp() {
    let gw = GatewayProcess::start().await;
    let mut cmd = Command::new(test_python());
    cmd.arg(repo_root().join("tests/mcp/pydantic_agent.py"))
        .args(["agent", "greet"])
        .env("TAP_BIN", tap_bin())
        .env("TAP_HOME", &gw.home);
    // Another MCP client holds the session open so the provider can bind before the agent
    // starts: the agent's first tool list then has the tool.
    let (mut holder, _) = McpClient::python_stdio(
        Path::new(tap_bin()),
        &gw.home,
        "agent",
        "legacy",
        gw.log_dir(),
    )
    .await;
    holder.tool_names().await;
    let (mut p, _) = greeter(&gw, "agent").await;
    let agent = tokio::spawn(run(cmd));
    let call = answer_greeting(&mut p).await;
    assert!(call["args"]["name"].is_string(), "{call}");
    let out = agent.await.unwrap();
    assert_eq!(out.code(), Some(0), "{out:?}");
    let output = out.json()["output"].as_str().unwrap().to_string();
    assert!(output.contains("Hello, "), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gateway_tap_mcp_says_so_on_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(tap_bin());
    cmd.arg("mcp").env("TAP_HOME", dir.path());
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert_eq!(out.stdout, "", "stdout is the MCP channel");
    assert!(out.stderr.contains("no running gateway"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_mcp_config_prints_each_clients_form() {
    let gw = GatewayProcess::start().await;
    let tap = std::fs::canonicalize(tap_bin())
        .unwrap()
        .display()
        .to_string();
    let args = json!(["mcp", "--session", "work"]);
    for (client, want) in [
        (
            None,
            json!({"mcpServers": {"tap": {"command": tap, "args": args}}}),
        ),
        (
            Some("claude-desktop"),
            json!({"mcpServers": {"tap": {"command": tap, "args": args}}}),
        ),
        (
            Some("cursor"),
            json!({"mcpServers": {"tap": {"command": tap, "args": args}}}),
        ),
        (
            Some("vscode"),
            json!({"servers": {"tap": {"type": "stdio", "command": tap, "args": args}}}),
        ),
    ] {
        let mut a = vec!["mcp", "config", "--session", "work"];
        if let Some(c) = client {
            a.extend(["--client", c]);
        }
        let out = gw.run(&a).await;
        assert_eq!(out.code(), Some(0), "{out:?}");
        assert_eq!(out.json(), want, "{client:?}");
    }
    let out = gw
        .run(&[
            "mcp",
            "config",
            "--client",
            "claude-code",
            "--session",
            "work",
        ])
        .await;
    assert_eq!(
        out.stdout.trim(),
        format!("claude mcp add tap -- {tap} mcp --session work")
    );
    let out = gw
        .run(&["mcp", "config", "--http", "--session", "my work"])
        .await;
    assert!(
        out.stdout.contains(&format!(
            "{}/mcp/my%20work",
            gw.url.replacen("ws://", "http://", 1)
        )),
        "{out:?}"
    );
    let token = std::fs::read_to_string(gw.home.join("host-token")).unwrap();
    assert!(!out.stdout.contains(token.trim()), "never prints the token");
}

/// Writes one line to `tap mcp`'s stdin and reads its answer.
async fn exchange(
    stdin: &mut tokio::process::ChildStdin,
    out: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    line: &[u8],
    log: &Path,
) -> Value {
    use tokio::io::AsyncWriteExt;
    stdin.write_all(line).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    let text = tokio::time::timeout(tap_testkit::MCP_PATIENCE, out.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .unwrap_or_else(|| {
            panic!(
                "tap mcp ended: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            )
        });
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_lines_on_stdin_get_json_rpc_errors_and_tap_mcp_serves_on() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let gw = GatewayProcess::start().await;
    let log = gw.log_dir().join("tap-mcp.log");
    let mut cmd = gw.tap();
    cmd.args(["mcp", "--session", "raw"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let e = exchange(&mut stdin, &mut out, b"{not json", &log).await;
    assert_eq!(e["error"]["code"], -32700, "{e}");
    let e = exchange(
        &mut stdin,
        &mut out,
        br#"{"jsonrpc":"2.0","id":7,"method":42}"#,
        &log,
    )
    .await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{e}"
    );
    let huge = [
        b"\"".as_slice(),
        &vec![b'x'; tap_protocol::limits::MAX_MCP_REQUEST_BYTES],
        b"\"",
    ]
    .concat();
    let e = exchange(&mut stdin, &mut out, &huge, &log).await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("limit"),
        "{e}"
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let r = exchange(&mut stdin, &mut out, init.to_string().as_bytes(), &log).await;
    assert_eq!(r["result"]["serverInfo"]["name"], "tap-gateway", "{r}");
    drop(stdin);
    let status = tokio::time::timeout(tap_testkit::MCP_PATIENCE, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "stdin closed: a clean exit");
}

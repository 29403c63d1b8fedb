//! `tap mcp add|list|get|remove|enable|disable|tools` (docs/mcp-servers.md) on real files:
//! the real `tap` binary with a temporary TAP_HOME (the user scope's `mcp.json`) run in a
//! temporary workspace (the project scope's `tap.config.json`); then against a real
//! `tap gateway` child running the MCP server fixtures of `tests/mcp/servers/`.

use crate::common::{eventually, repo_root, run, tap_command, CliOut, GatewayProcess, SessionOpen};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tap_testkit::test_python;

/// A TAP_HOME and a workspace directory to run `tap` in.
struct Workspace {
    home: PathBuf,
    project: PathBuf,
    /// Keep last: removed after the rest.
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("work");
        std::fs::create_dir(&project).unwrap();
        Self {
            home: dir.path().join("home"),
            project,
            dir,
        }
    }

    /// `tap ARGS` in the workspace.
    async fn tap(&self, args: &[&str]) -> CliOut {
        let mut cmd = tap_command(&self.home, &self.dir.path().join("copilot"));
        cmd.current_dir(&self.project).args(args);
        run(cmd).await
    }

    /// `tap ARGS`, which must succeed.
    async fn ok(&self, args: &[&str]) -> CliOut {
        let out = self.tap(args).await;
        assert_eq!(out.code(), Some(0), "tap {args:?}: {out:?}");
        out
    }

    /// `tap ARGS`, which must fail with `code`; returns the message.
    async fn refused(&self, args: &[&str], code: &str) -> String {
        let out = self.tap(args).await;
        assert_eq!(out.code(), Some(1), "tap {args:?}: {out:?}");
        let v = out.json();
        assert_eq!(v["errorCode"], code, "tap {args:?}: {out:?}");
        v["error"].as_str().unwrap().to_string()
    }

    fn user_file(&self) -> PathBuf {
        self.home.join("mcp.json")
    }

    fn project_file(&self) -> PathBuf {
        self.project.join("tap.config.json")
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_get_and_remove_round_trip_in_both_scopes() {
    let w = Workspace::new();
    let out = w
        .ok(&[
            "mcp",
            "add",
            "-e",
            "API_KEY=k1",
            "-e",
            "MODE=fast",
            "everything",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything",
            "--flag",
        ])
        .await;
    assert!(
        out.stdout.contains("Added MCP server 'everything'"),
        "{out:?}"
    );
    assert!(out.stdout.contains("No gateway is running"), "{out:?}");
    assert_eq!(
        read(&w.user_file()),
        json!({"mcpServers": {"everything": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-everything", "--flag"],
            "env": {"API_KEY": "k1", "MODE": "fast"}}}})
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.user_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the user file may hold secrets");
    }

    w.ok(&[
        "mcp",
        "add",
        "--scope",
        "project",
        "-H",
        "X-Team: core",
        "remote",
        "https://example.com/mcp",
    ])
    .await;
    w.ok(&[
        "mcp",
        "add",
        "-s",
        "project",
        "--transport",
        "sse",
        "legacy",
        "http://127.0.0.1:9/sse",
    ])
    .await;
    assert_eq!(
        read(&w.project_file()),
        json!({"mcpServers": {
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "core"}},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}})
    );

    // No gateway: the files, each server "not running".
    let list = w.ok(&["mcp", "list", "--json"]).await.json();
    let rows: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["scope"].as_str().unwrap(),
                s["transport"].as_str().unwrap(),
                s["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("everything", "user", "stdio", "notRunning"),
            ("remote", "project", "http", "notRunning"),
            ("legacy", "project", "sse", "notRunning")
        ]
    );
    assert_eq!(list[0]["secretNames"], json!(["API_KEY", "MODE"]));
    let table = w.ok(&["mcp", "list"]).await.stdout;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("not running"), "{table}");

    let got = w.ok(&["mcp", "get", "remote", "--json"]).await.json();
    assert_eq!(got["configured"][0]["scope"], "project");
    assert_eq!(
        got["configured"][0]["entry"],
        json!({"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "(hidden)"}})
    );
    let text = w.ok(&["mcp", "get", "everything"]).await.stdout;
    assert!(
        text.contains("user scope") && text.contains("@modelcontextprotocol/server-everything"),
        "{text}"
    );

    // enable/disable set "enabled"; doing it twice changes nothing.
    w.ok(&["mcp", "disable", "everything"]).await;
    assert_eq!(
        read(&w.user_file())["mcpServers"]["everything"]["enabled"],
        false
    );
    let again = w.ok(&["mcp", "disable", "everything"]).await;
    assert!(again.stdout.contains("already disabled"), "{again:?}");
    let list = w.ok(&["mcp", "list", "--json"]).await.json();
    assert_eq!(list[0]["state"], "disabled");
    w.ok(&["mcp", "enable", "everything"]).await;
    assert_eq!(
        read(&w.user_file())["mcpServers"]["everything"]["enabled"],
        true
    );

    // tools --disable/--enable edit disabledTools (a prefixed name is taken as the tool's).
    w.ok(&[
        "mcp",
        "tools",
        "everything",
        "--disable",
        "everything__echo",
    ])
    .await;
    w.ok(&["mcp", "tools", "everything", "--disable", "add"])
        .await;
    assert_eq!(
        read(&w.user_file())["mcpServers"]["everything"]["disabledTools"],
        json!(["echo", "add"])
    );
    let tools = w.ok(&["mcp", "tools", "everything", "--json"]).await.json();
    assert_eq!(
        tools,
        json!({"tools": null, "disabledTools": ["echo", "add"]})
    );
    w.ok(&["mcp", "tools", "everything", "--enable", "echo"])
        .await;
    w.ok(&["mcp", "tools", "everything", "--enable", "add"])
        .await;
    assert!(read(&w.user_file())["mcpServers"]["everything"]
        .get("disabledTools")
        .is_none());

    // remove: the entry goes, the file and its key stay.
    w.ok(&["mcp", "remove", "everything"]).await;
    assert_eq!(read(&w.user_file()), json!({"mcpServers": {}}));
    w.ok(&["mcp", "remove", "remote", "--scope", "project"])
        .await;
    assert_eq!(keys(&read(&w.project_file())["mcpServers"]), ["legacy"]);
    let msg = w
        .refused(&["mcp", "remove", "everything"], "NOT_FOUND")
        .await;
    assert!(msg.contains("everything"), "{msg}");
    w.refused(&["mcp", "get", "nope"], "NOT_FOUND").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_keys_their_order_and_the_indentation_are_kept() {
    let w = Workspace::new();
    std::fs::create_dir_all(&w.home).unwrap();
    let user = r#"{
    "$schema": "https://example.com/schema.json",
    "mcpServers": {
        "zeta": {"command": "z", "x-note": "mine", "startup": "lazy", "args": []},
        "alpha": {"url": "https://a.example/mcp", "sessions": ["work"]}
    },
    "zz-other": [1, 2]
}
"#;
    std::fs::write(w.user_file(), user).unwrap();
    let project = json!({
        "providers": [{"name": "ci", "command": "node", "args": ["ci.mjs"]}],
        "emitters": [{"name": "build", "command": "make"}],
        "mcpServers": {"p": {"command": "p"}},
        "custom": {"b": 1, "a": 2}
    });
    std::fs::write(w.project_file(), serde_json::to_string(&project).unwrap()).unwrap();

    w.ok(&["mcp", "add", "mid", "--", "m"]).await;
    w.ok(&["mcp", "disable", "zeta"]).await;
    w.ok(&["mcp", "tools", "alpha", "--disable", "t"]).await;
    w.ok(&["mcp", "add", "--force", "zeta", "--", "z2", "--v"])
        .await;
    let doc = read(&w.user_file());
    assert_eq!(keys(&doc), ["$schema", "mcpServers", "zz-other"]);
    assert_eq!(keys(&doc["mcpServers"]), ["zeta", "alpha", "mid"]);
    // --force replaced how it is reached and kept the rest of the entry, in its order.
    assert_eq!(
        doc["mcpServers"]["zeta"],
        json!({"command": "z2", "args": ["--v"], "x-note": "mine", "startup": "lazy", "enabled": false})
    );
    assert_eq!(
        keys(&doc["mcpServers"]["zeta"]),
        ["command", "args", "x-note", "startup", "enabled"]
    );
    assert_eq!(
        keys(&doc["mcpServers"]["alpha"]),
        ["url", "sessions", "disabledTools"]
    );
    let text = std::fs::read_to_string(w.user_file()).unwrap();
    assert!(
        text.contains("\n    \"$schema\""),
        "four-space indentation kept: {text}"
    );

    w.ok(&["mcp", "add", "-s", "project", "q", "http://127.0.0.1:1/mcp"])
        .await;
    w.ok(&["mcp", "remove", "p", "-s", "project"]).await;
    let doc = read(&w.project_file());
    assert_eq!(
        keys(&doc),
        ["providers", "emitters", "mcpServers", "custom"]
    );
    assert_eq!(doc["providers"], project["providers"]);
    assert_eq!(doc["emitters"], project["emitters"]);
    assert_eq!(keys(&doc["custom"]), ["b", "a"]);
    assert_eq!(keys(&doc["mcpServers"]), ["q"]);

    // A name in both scopes needs --scope to edit.
    w.ok(&["mcp", "add", "-s", "project", "mid", "--", "m"])
        .await;
    let msg = w.refused(&["mcp", "disable", "mid"], "INVALID_ARGS").await;
    assert!(msg.contains("--scope"), "{msg}");
    w.ok(&["mcp", "disable", "mid", "--scope", "project"]).await;
    assert_eq!(
        read(&w.project_file())["mcpServers"]["mid"]["enabled"],
        false
    );
    assert!(read(&w.user_file())["mcpServers"]["mid"]
        .get("enabled")
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_valid_json_is_never_written() {
    let w = Workspace::new();
    std::fs::create_dir_all(&w.home).unwrap();
    let broken = "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\"},}\n";
    std::fs::write(w.user_file(), broken).unwrap();
    for args in [
        &["mcp", "add", "b", "--", "y"][..],
        &["mcp", "remove", "a"],
        &["mcp", "disable", "a"],
        &["mcp", "tools", "a", "--disable", "t"],
    ] {
        let msg = w.refused(args, "INVALID_JSON").await;
        assert!(
            msg.contains(&w.user_file().display().to_string()),
            "names the file: {msg}"
        );
        assert!(msg.contains("not valid JSON"), "{msg}");
        assert_eq!(
            std::fs::read_to_string(w.user_file()).unwrap(),
            broken,
            "{args:?}"
        );
    }
    // The project scope is still usable, and `list` says what is wrong with the other.
    w.ok(&["mcp", "add", "-s", "project", "b", "--", "y"]).await;
    let out = w.ok(&["mcp", "list", "--json"]).await;
    assert_eq!(out.json().as_array().unwrap().len(), 1, "{out:?}");
    assert!(out.stderr.contains("mcp.json"), "{out:?}");

    // A file whose mcpServers is not an object, or which is not an object at all.
    std::fs::write(w.user_file(), r#"{"mcpServers": ["a"]}"#).unwrap();
    let msg = w
        .refused(&["mcp", "add", "b", "--", "y"], "INVALID_JSON")
        .await;
    assert!(msg.contains("'mcpServers'"), "{msg}");
    std::fs::write(w.project_file(), "[]").unwrap();
    let msg = w
        .refused(
            &["mcp", "add", "-s", "project", "c", "--", "y"],
            "INVALID_JSON",
        )
        .await;
    assert!(msg.contains("tap.config.json"), "{msg}");
    assert_eq!(std::fs::read_to_string(w.project_file()).unwrap(), "[]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_flags_names_and_entries_are_refused_and_nothing_is_written() {
    let w = Workspace::new();
    for (args, needle) in [
        (
            &["mcp", "add", "-e", "NOEQUALS", "a", "--", "x"][..],
            "-e number 1",
        ),
        (&["mcp", "add", "-e", "=v", "a", "--", "x"], "-e number 1"),
        (
            &["mcp", "add", "-e", "A=1", "-e", "A=2", "a", "--", "x"],
            "A is given twice",
        ),
        (
            &["mcp", "add", "-H", "no colon", "a", "https://h/mcp"],
            "-H number 1",
        ),
        (
            &["mcp", "add", "-H", "Bad Name: v", "a", "https://h/mcp"],
            "-H number 1",
        ),
        (
            &["mcp", "add", "-e", "A=1", "a", "https://h/mcp"],
            "-e sets",
        ),
        (&["mcp", "add", "-H", "A: 1", "a", "--", "x"], "-H sets"),
        (&["mcp", "add", "bad/name", "--", "x"], "bad/name"),
        (&["mcp", "add", "-t", "http", "a", "ftp://h"], "'url'"),
        (
            &["mcp", "add", "-t", "http", "a", "https://h", "extra"],
            "one URL",
        ),
    ] {
        let msg = w.refused(args, "INVALID_ARGS").await;
        assert!(msg.contains(needle), "{args:?}: {msg}");
        assert!(!w.user_file().exists(), "{args:?} wrote the file");
    }
    // A usage error is clap's (exit 2): no name, no command.
    let out = w.tap(&["mcp", "add", "a"]).await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    let out = w
        .tap(&["mcp", "add", "--scope", "global", "a", "--", "x"])
        .await;
    assert_eq!(out.code(), Some(2), "{out:?}");

    // An existing name needs --force.
    w.ok(&["mcp", "add", "a", "--", "x"]).await;
    let before = std::fs::read_to_string(w.user_file()).unwrap();
    let msg = w
        .refused(&["mcp", "add", "a", "--", "y"], "ALREADY_EXISTS")
        .await;
    assert!(msg.contains("--force"), "{msg}");
    assert_eq!(std::fs::read_to_string(w.user_file()).unwrap(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_and_header_values_are_never_printed() {
    let w = Workspace::new();
    let mut outputs = Vec::new();
    let mut keep = |out: CliOut| outputs.push(format!("{}\n{}", out.stdout, out.stderr));
    keep(
        w.ok(&["mcp", "add", "-e", "TOKEN=s3cret-env", "local", "--", "srv"])
            .await,
    );
    keep(
        w.ok(&[
            "mcp",
            "add",
            "-H",
            "Authorization: Bearer s3cret-hdr",
            "remote",
            "https://h/mcp",
        ])
        .await,
    );
    keep(
        w.tap(&["mcp", "add", "-e", "s3cret-bare", "x", "--", "srv"])
            .await,
    );
    keep(
        w.tap(&[
            "mcp",
            "add",
            "-H",
            "s3cret-bare-header",
            "x",
            "https://h/mcp",
        ])
        .await,
    );
    keep(
        w.tap(&["mcp", "add", "-e", "TOKEN=s3cret-env", "local", "--", "srv"])
            .await,
    );
    for args in [
        &["mcp", "list"][..],
        &["mcp", "list", "--json"],
        &["mcp", "get", "local"],
        &["mcp", "get", "local", "--json"],
        &["mcp", "get", "remote"],
        &["mcp", "get", "remote", "--json"],
        &["mcp", "tools", "local"],
        &["mcp", "disable", "remote"],
        &["mcp", "enable", "remote"],
        &[
            "mcp",
            "add",
            "--force",
            "-H",
            "Authorization: Bearer s3cret-hdr2",
            "remote",
            "https://h/mcp",
        ],
    ] {
        keep(w.tap(args).await);
    }
    let all = outputs.join("\n");
    assert!(!all.contains("s3cret"), "a secret was printed:\n{all}");
    assert!(
        all.contains("TOKEN") && all.contains("Authorization"),
        "names are shown:\n{all}"
    );
    // They are in the file, which only its owner can read.
    let text = std::fs::read_to_string(w.user_file()).unwrap();
    assert!(text.contains("s3cret-env") && text.contains("s3cret-hdr2"));
}

// ------------------------------------------------------------------ with a gateway running

/// `tap ARGS` against `gw`, run in its directory (no workspace's `tap.config.json`).
pub(crate) async fn live(gw: &GatewayProcess, args: &[&str]) -> CliOut {
    let mut cmd = gw.tap();
    cmd.current_dir(gw.dir.path()).args(args);
    run(cmd).await
}

pub(crate) async fn live_ok(gw: &GatewayProcess, args: &[&str]) -> CliOut {
    let out = live(gw, args).await;
    assert_eq!(out.code(), Some(0), "tap {args:?}: {out:?}");
    out
}

/// The server `name` in `tap mcp list --json`, once `pred` holds for it.
pub(crate) async fn listed_when(
    gw: &GatewayProcess,
    name: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(&format!("{name} in tap mcp list"), || async {
        let list = live_ok(gw, &["mcp", "list", "--json"]).await.json();
        list.as_array()?
            .iter()
            .find(|s| s["name"] == name && pred(s))
            .cloned()
    })
    .await
}

pub(crate) fn fixture(file: &str) -> String {
    repo_root()
        .join("tests/mcp/servers")
        .join(file)
        .display()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_reach_the_running_gateway_and_list_shows_what_it_runs() {
    let gw = GatewayProcess::start().await;
    let python = test_python();
    let good = fixture("good.py");
    let mut printed = Vec::new();

    let out = live_ok(&gw, &["mcp", "list"]).await;
    assert!(out.stdout.contains("No MCP servers"), "{out:?}");
    let out = live_ok(
        &gw,
        &[
            "mcp",
            "add",
            "-e",
            "GOOD_SECRET=s3cret",
            "good",
            "--",
            &python,
            &good,
        ],
    )
    .await;
    assert!(out.stdout.contains("The gateway: good is ready"), "{out:?}");
    printed.push(out);

    let info = listed_when(&gw, "good", |s| s["state"] == "ready").await;
    assert_eq!(info["scope"], "user");
    assert_eq!(info["transport"], "stdio");
    assert_eq!(info["secretNames"], json!(["GOOD_SECRET"]));
    assert!(info["pid"].is_u64(), "{info}");
    assert!(
        info["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("good__echo")),
        "{info}"
    );
    let table = live_ok(&gw, &["mcp", "list"]).await.stdout;
    assert!(table.contains("ready") && table.contains("good"), "{table}");
    // The process's resident memory (a Python process holds a few MiB).
    assert!(
        table.contains("MEMORY") && table.contains(" MiB"),
        "{table}"
    );
    let got = live_ok(&gw, &["mcp", "get", "good"]).await;
    assert!(
        got.stdout.contains("memory:") && got.stdout.contains(" MiB"),
        "{got:?}"
    );
    printed.push(got);
    printed.push(live_ok(&gw, &["mcp", "get", "good", "--json"]).await);

    // Its stderr, as the gateway keeps it.
    eventually("good's stderr line", || async {
        let out = live_ok(&gw, &["mcp", "logs", "good"]).await;
        out.stdout.contains("good: ready").then_some(())
    })
    .await;

    // A tool turned off leaves the sessions' list; restart gives a new process.
    printed.push(live_ok(&gw, &["mcp", "tools", "good", "--disable", "good__fails"]).await);
    let info = listed_when(&gw, "good", |s| {
        s["state"] == "ready"
            && !s["tools"]
                .as_array()
                .unwrap()
                .contains(&json!("good__fails"))
    })
    .await;
    let tools = live_ok(&gw, &["mcp", "tools", "good", "--json"])
        .await
        .json();
    assert_eq!(tools["disabledTools"], json!(["fails"]));
    assert_eq!(tools["tools"], info["tools"]);
    let out = live_ok(&gw, &["mcp", "restart", "good"]).await;
    assert!(
        out.stdout.contains("Restarted MCP server 'good'"),
        "{out:?}"
    );
    let pid = info["pid"].clone();
    listed_when(&gw, "good", |s| s["state"] == "ready" && s["pid"] != pid).await;

    // disable stops it, enable starts it again, remove takes it away.
    printed.push(live_ok(&gw, &["mcp", "disable", "good"]).await);
    listed_when(&gw, "good", |s| s["state"] == "disabled").await;
    printed.push(live_ok(&gw, &["mcp", "enable", "good"]).await);
    listed_when(&gw, "good", |s| s["state"] == "ready").await;
    let out = live_ok(&gw, &["mcp", "remove", "good"]).await;
    assert!(out.stdout.contains("The gateway stopped it"), "{out:?}");
    assert_eq!(
        live_ok(&gw, &["mcp", "list", "--json"]).await.json(),
        json!([])
    );
    let out = live(&gw, &["mcp", "logs", "good"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert_eq!(out.json()["errorCode"], "NOT_FOUND");

    let all: String = printed
        .iter()
        .map(|o| format!("{}\n{}", o.stdout, o.stderr))
        .collect();
    assert!(!all.contains("s3cret"), "a secret was printed:\n{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_shows_its_error_and_stderr() {
    let gw = GatewayProcess::start().await;
    let out = live_ok(
        &gw,
        &[
            "mcp",
            "add",
            "exits",
            "--",
            &test_python(),
            &fixture("exits.py"),
        ],
    )
    .await;
    assert!(out.stdout.contains("last error"), "{out:?}");
    let info = listed_when(&gw, "exits", |s| s["lastError"].is_string()).await;
    assert_ne!(info["state"], "ready");
    let table = live_ok(&gw, &["mcp", "list"]).await.stdout;
    assert!(
        table.contains("exit"),
        "the last error is in the table: {table}"
    );
    eventually("exits' stderr", || async {
        let out = live_ok(&gw, &["mcp", "logs", "exits"]).await;
        out.stdout.contains("failing on purpose").then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_and_logs_need_a_running_gateway() {
    let w = Workspace::new();
    w.ok(&["mcp", "add", "a", "--", "x"]).await;
    for args in [&["mcp", "restart", "a"][..], &["mcp", "logs", "a"]] {
        let msg = w.refused(args, "DISCONNECTED").await;
        assert!(msg.contains("no gateway is running"), "{msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_call_calls_an_mcp_servers_tool_in_a_session() {
    // good.py in the user's mcp.json before the gateway starts: its tools are in every session.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("home")).unwrap();
    let servers =
        json!({"mcpServers": {"good": {"command": test_python(), "args": [fixture("good.py")]}}});
    std::fs::write(dir.path().join("home/mcp.json"), servers.to_string()).unwrap();
    let gw = GatewayProcess::start_in(dir, &[]).await;
    listed_when(&gw, "good", |s| s["state"] == "ready").await;
    let session = SessionOpen::open(&gw, &["--label", "mcp"]).await;
    gw.wait_for_tool(&session.id, "good__echo").await;

    // An all-text result is its text, as for any session host.
    let out = live_ok(
        &gw,
        &[
            "call",
            "--session",
            &session.id,
            "good__echo",
            r#"{"message":"hi"}"#,
        ],
    )
    .await;
    assert_eq!(out.json(), json!("hi"), "{out:?}");

    // A result with `isError: true` is a failure with the server's text.
    let out = live(
        &gw,
        &["call", "--session", &session.id, "good__fails", "{}"],
    )
    .await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let v = out.json();
    assert_eq!(v["errorCode"], "TOOL_ERROR", "{out:?}");
    assert!(
        v["error"].as_str().unwrap().contains("it failed"),
        "{out:?}"
    );
}

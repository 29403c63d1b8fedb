//! `tap mcp import` (docs/mcp-servers.md, "Import"): a fake HOME with one configuration
//! file per client at its real place on Linux (VS Code's with comments and a trailing
//! comma, Codex's in TOML), and a workspace with Claude Code's `.mcp.json`. The preview
//! names what is added and skipped and never shows a value; `--dry-run` writes nothing; a
//! name already configured is skipped unless `--force`.

use crate::common::tap_command;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tap_testkit::{run, CliOut};

struct Machine {
    home: PathBuf,
    tap_home: PathBuf,
    work: PathBuf,
    _dir: tempfile::TempDir,
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Machine {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("me");
        let work = home.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let m = Self {
            tap_home: dir.path().join("tap"),
            home,
            work,
            _dir: dir,
        };
        let h = &m.home;
        write(
            h.join(".config/Claude/claude_desktop_config.json"),
            r#"{"mcpServers": {"desktop": {"command": "npx", "args": ["-y", "srv-desktop"], "env": {"DESKTOP_KEY": "s3cret-desktop"}}}}"#,
        );
        write(
            h.join(".claude.json"),
            &json!({
                "numStartups": 3,
                "mcpServers": {"code-user": {"type": "stdio", "command": "uvx", "args": ["srv-code"]}},
                "projects": {
                    m.work.display().to_string(): {"mcpServers": {"code-local": {"type": "http", "url": "https://local.example/mcp", "headers": {"Authorization": "Bearer s3cret-local"}}}},
                    "/elsewhere": {"mcpServers": {"not-here": {"command": "x"}}}
                }
            })
            .to_string(),
        );
        write(
            m.work.join(".mcp.json"),
            r#"{"mcpServers": {"code-project": {"type": "sse", "url": "https://project.example/sse"}}}"#,
        );
        write(
            h.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"cursor-remote": {"url": "https://cursor.example/mcp", "headers": {"X-Api-Key": "s3cret-cursor"}}, "taken": {"command": "cursor-taken"}}}"#,
        );
        write(
            h.join(".config/Code/User/mcp.json"),
            r#"{
  // VS Code's file is JSONC
  "servers": {
    "vscode-stdio": {
      "type": "stdio",
      "command": "node",
      "args": ["vs.js"], /* a comment */
      "env": {"VS_TOKEN": "s3cret-vscode"},
    },
    "prompted": {"type": "stdio", "command": "x", "env": {"KEY": "${input:key}"}},
  },
  "inputs": [],
}"#,
        );
        write(
            h.join(".codeium/windsurf/mcp_config.json"),
            r#"{"mcpServers": {"windsurf-remote": {"serverUrl": "https://windsurf.example/mcp"}, "bad": {"command": ""}}}"#,
        );
        write(
            h.join(".codex/config.toml"),
            r#"model = "o3"

[mcp_servers.codex-stdio]
command = "codex-srv"
args = ["--flag"]
env = { CODEX_TOKEN = "s3cret-codex" }

[mcp_servers.codex-off]
command = "other"
enabled = false
"#,
        );
        write(
            h.join(".gemini/settings.json"),
            r#"{"theme": "x", "mcpServers": {"gemini-http": {"httpUrl": "https://gemini.example/mcp"}, "gemini-sse": {"url": "https://gemini.example/sse"}}}"#,
        );
        m
    }

    async fn tap(&self, args: &[&str]) -> CliOut {
        let mut cmd = tap_command(&self.tap_home, &self.home.join(".copilot"));
        cmd.env("HOME", &self.home)
            .env("TAP_KEYRING", "off")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .current_dir(&self.work)
            .args(args);
        let out = run(cmd).await;
        assert_eq!(out.code(), Some(0), "tap {args:?}: {out:?}");
        out
    }

    fn user_file(&self) -> PathBuf {
        self.tap_home.join("mcp.json")
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_of_every_client_are_previewed_then_imported_without_showing_values() {
    let m = Machine::new();
    // A server of the same name is already configured.
    write(
        m.user_file(),
        r#"{"mcpServers": {"taken": {"command": "mine", "prefix": "t"}}}"#,
    );
    let before = std::fs::read_to_string(m.user_file()).unwrap();
    let mut printed = Vec::new();

    let dry = m.tap(&["mcp", "import", "--dry-run"]).await;
    printed.push(format!("{dry:?}"));
    assert_eq!(std::fs::read_to_string(m.user_file()).unwrap(), before);
    assert!(
        dry.stdout.contains("Would add") && dry.stdout.contains("Dry run"),
        "{dry:?}"
    );
    for name in [
        "desktop",
        "code-user",
        "code-local",
        "code-project",
        "cursor-remote",
        "vscode-stdio",
        "windsurf-remote",
        "codex-stdio",
        "codex-off",
        "gemini-http",
        "gemini-sse",
    ] {
        assert!(dry.stdout.contains(name), "{name} in {}", dry.stdout);
    }
    assert!(!dry.stdout.contains("not-here"), "{}", dry.stdout);
    // Names of env and headers are shown; the skipped say why.
    assert!(
        dry.stdout.contains("DESKTOP_KEY") && dry.stdout.contains("X-Api-Key"),
        "{}",
        dry.stdout
    );
    let skipped = dry.stdout.split("Skipped:").nth(1).unwrap_or_default();
    assert!(
        skipped.contains("taken (cursor") && skipped.contains("already in"),
        "{}",
        dry.stdout
    );
    assert!(
        skipped.contains("prompted (vscode") && skipped.contains("${input:"),
        "{}",
        dry.stdout
    );
    assert!(
        skipped.contains("bad (windsurf") && skipped.contains("command"),
        "{}",
        dry.stdout
    );

    let out = m.tap(&["mcp", "import"]).await;
    printed.push(format!("{out:?}"));
    assert!(out.stdout.contains("Imported 11 MCP servers"), "{out:?}");
    let servers = read(&m.user_file())["mcpServers"].clone();
    assert_eq!(servers["taken"], json!({"command": "mine", "prefix": "t"}));
    assert_eq!(
        servers["desktop"],
        json!({"command": "npx", "args": ["-y", "srv-desktop"], "env": {"DESKTOP_KEY": "s3cret-desktop"}})
    );
    assert_eq!(
        servers["code-user"],
        json!({"command": "uvx", "args": ["srv-code"]})
    );
    assert_eq!(
        servers["code-local"],
        json!({"type": "http", "url": "https://local.example/mcp", "headers": {"Authorization": "Bearer s3cret-local"}})
    );
    assert_eq!(
        servers["code-project"],
        json!({"type": "sse", "url": "https://project.example/sse"})
    );
    assert_eq!(servers["cursor-remote"]["type"], "http");
    assert_eq!(
        servers["vscode-stdio"],
        json!({"command": "node", "args": ["vs.js"], "env": {"VS_TOKEN": "s3cret-vscode"}})
    );
    assert_eq!(
        servers["windsurf-remote"],
        json!({"type": "http", "url": "https://windsurf.example/mcp"})
    );
    assert_eq!(
        servers["codex-stdio"],
        json!({"command": "codex-srv", "args": ["--flag"], "env": {"CODEX_TOKEN": "s3cret-codex"}})
    );
    assert_eq!(
        servers["codex-off"],
        json!({"command": "other", "enabled": false})
    );
    assert_eq!(servers["gemini-http"]["type"], "http");
    assert_eq!(servers["gemini-sse"]["type"], "sse");
    assert!(servers.get("prompted").is_none() && servers.get("bad").is_none());

    // Again: everything is there now, so everything is skipped; --force replaces how
    // 'taken' is reached and keeps its prefix.
    let again = m.tap(&["mcp", "import", "--from", "cursor"]).await;
    printed.push(format!("{again:?}"));
    assert!(again.stdout.contains("Nothing to add"), "{again:?}");
    let forced = m
        .tap(&["mcp", "import", "--from", "cursor", "--force"])
        .await;
    printed.push(format!("{forced:?}"));
    let servers = read(&m.user_file())["mcpServers"].clone();
    assert_eq!(
        servers["taken"],
        json!({"command": "cursor-taken", "prefix": "t"})
    );

    let all = printed.join("\n");
    assert!(!all.contains("s3cret"), "a value was printed:\n{all}");
}

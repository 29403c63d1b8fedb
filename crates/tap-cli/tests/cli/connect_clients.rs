//! `tap connect CLIENT` / `tap disconnect CLIENT` for each client, on a realistic existing
//! configuration (other servers, comments where the format has them, unknown keys): the file
//! still parses in the client's format, holds the entry, keeps everything else exactly; a
//! backup is kept; `--dry-run` writes nothing; a drifted entry (another tap path) is reported
//! by `tap connect` and `tap doctor` and repaired; `tap disconnect` gives back the original
//! bytes.

use crate::connect_support::{parse, tap_path, Home, Syntax};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;

struct Fixture {
    client: &'static str,
    /// The file, relative to HOME.
    rel: &'static str,
    syntax: Syntax,
    /// The object the servers are in.
    key: &'static str,
    original: &'static str,
    /// The entry `tap connect` must write, given the tap path.
    entry: fn(&str, &str) -> Value,
}

fn command_args(tap: &str, session: &str) -> Value {
    json!({ "command": tap, "args": ["mcp", "--session", session] })
}

fn typed_stdio(tap: &str, session: &str) -> Value {
    json!({ "type": "stdio", "command": tap, "args": ["mcp", "--session", session] })
}

fn opencode_local(tap: &str, session: &str) -> Value {
    json!({ "type": "local", "command": [tap, "mcp", "--session", session], "enabled": true })
}

async fn scenario(f: Fixture) {
    let h = Home::new();
    let tap = tap_path();
    let file = h.write(f.rel, f.original);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let c = f.client;
    assert_eq!(h.state_of(c).await["state"], "installed");

    // --dry-run: a diff, nothing written.
    let dry = h.tap(&["connect", c, "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .starts_with(&format!("--- {}\n+++ {}\n", file.display(), file.display())),
        "{dry:?}"
    );
    assert!(
        dry.stdout
            .lines()
            .any(|l| l.starts_with('+') && l.contains(&tap)),
        "{dry:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), f.original);
    assert!(h.backups(&file).is_empty());

    // connect: parses, holds the entry, keeps everything else, backup, mode.
    let out = h.tap(&["connect", c]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let connected = std::fs::read_to_string(&file).unwrap();
    let mut data = parse(f.syntax, &connected);
    assert_eq!(data[f.key]["tap"], (f.entry)(&tap, c), "{connected}");
    data[f.key].as_object_mut().unwrap().remove("tap");
    assert_eq!(data, parse(f.syntax, f.original), "the rest is unchanged");
    let backups = h.backups(&file);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), f.original);
    assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(h.state_of(c).await["state"], "connected");
    assert_eq!(h.tap(&["doctor"]).await.code(), Some(0));

    // Again: nothing to do, no new backup.
    let again = h.tap(&["connect", c]).await;
    assert_eq!(again.code(), Some(0), "{again:?}");
    assert!(again.stdout.contains("already connected"), "{again:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), connected);
    assert_eq!(h.backups(&file).len(), 1);

    // The tap binary moved: drifted, reported, repaired.
    std::fs::write(&file, connected.replace(&tap, "/opt/old/tap")).unwrap();
    let state = h.state_of(c).await;
    assert_eq!(state["state"], "drifted", "{state}");
    assert!(
        state["detail"].as_str().unwrap().contains("/opt/old/tap"),
        "{state}"
    );
    let listed = h.tap(&["connect"]).await;
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with(c) && l.contains("drifted")),
        "{listed:?}"
    );
    let doctor = h.tap(&["doctor"]).await;
    assert_eq!(doctor.code(), Some(1), "{doctor:?}");
    assert!(
        doctor.stdout.contains(&format!("`tap connect {c}`")),
        "{doctor:?}"
    );
    let repaired = h.tap(&["connect", c]).await;
    assert_eq!(repaired.code(), Some(0), "{repaired:?}");
    assert!(repaired.stdout.starts_with("Repaired"), "{repaired:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(parse(f.syntax, &text), parse(f.syntax, &connected));
    assert_eq!(h.state_of(c).await["state"], "connected");

    // disconnect: --dry-run writes nothing; then the original bytes come back.
    let dry = h.tap(&["disconnect", c, "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .lines()
            .any(|l| l.starts_with('-') && l.contains(&tap)),
        "{dry:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let out = h.tap(&["disconnect", c]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), f.original);
    assert_eq!(h.state_of(c).await["state"], "installed");
    let none = h.tap(&["disconnect", c]).await;
    assert_eq!(none.code(), Some(0), "{none:?}");
    assert!(none.stdout.contains("no tap entry"), "{none:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), f.original);
}

#[tokio::test]
async fn connect_claude_desktop() {
    scenario(Fixture {
        client: "claude-desktop",
        rel: ".config/Claude/claude_desktop_config.json",
        syntax: Syntax::Json,
        key: "mcpServers",
        original: r#"{
  "globalShortcut": "Ctrl+Alt+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/Desktop"]
    },
    "weather": {
      "command": "uv",
      "args": ["--directory", "/home/ada/weather", "run", "weather.py"],
      "env": { "API_KEY": "s3cret" }
    }
  }
}
"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_claude_code() {
    scenario(Fixture {
        client: "claude-code",
        rel: ".claude.json",
        syntax: Syntax::Json,
        key: "mcpServers",
        original: r#"{
  "numStartups": 42,
  "installMethod": "npm-global",
  "autoUpdates": true,
  "tipsHistory": {
    "memory-command": 3
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_s3cret"
      }
    }
  },
  "projects": {
    "/home/ada/code/app": {
      "allowedTools": [],
      "mcpServers": {
        "local-db": { "type": "stdio", "command": "pg-mcp", "args": [] }
      },
      "hasTrustDialogAccepted": true
    }
  },
  "userID": "0123abcd"
}
"#,
        entry: typed_stdio,
    })
    .await;
}

#[tokio::test]
async fn connect_cursor() {
    scenario(Fixture {
        client: "cursor",
        rel: ".cursor/mcp.json",
        syntax: Syntax::Json,
        key: "mcpServers",
        original: r#"{
    "mcpServers": {
        "context7": {
            "url": "https://mcp.context7.com/mcp",
            "headers": { "CONTEXT7_API_KEY": "s3cret" }
        },
        "postgres": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"]
        }
    }
}
"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_vscode() {
    scenario(Fixture {
        client: "vscode",
        rel: ".config/Code/User/mcp.json",
        syntax: Syntax::Jsonc,
        key: "servers",
        original: r#"{
	// Servers for every workspace.
	"servers": {
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
		},
		/* local files */
		"fs": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-filesystem", "${userHome}"],
			"env": { "TOKEN": "${input:token}" },
		},
	},
	"inputs": [
		{ "type": "promptString", "id": "token", "description": "Token", "password": true },
	],
}
"#,
        entry: typed_stdio,
    })
    .await;
}

#[tokio::test]
async fn connect_windsurf() {
    scenario(Fixture {
        client: "windsurf",
        rel: ".codeium/windsurf/mcp_config.json",
        syntax: Syntax::Json,
        key: "mcpServers",
        original: r#"{
  "mcpServers": {
    "ollama": {
      "command": "python3",
      "args": ["-m", "mcp_ollama_python"],
      "disabled": false,
      "env": {}
    },
    "zapier": {
      "serverUrl": "https://actions.zapier.com/mcp/KEY/sse"
    }
  }
}"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_zed() {
    scenario(Fixture {
        client: "zed",
        rel: ".config/zed/settings.json",
        syntax: Syntax::Jsonc,
        key: "context_servers",
        original: r#"// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "theme": {
    "mode": "system",
    "light": "One Light",
    "dark": "One Dark",
  },
  "ui_font_size": 16,
  "buffer_font_size": 15,
  "context_servers": {
    // a local server
    "local-mcp-server": {
      "command": "some-command",
      "args": ["arg-1", "arg-2"],
      "env": {},
    },
    "remote-mcp-server": {
      "url": "https://example.com/mcp",
      "headers": { "Authorization": "Bearer s3cret" },
    },
  },
  "vim_mode": true,
}
"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_codex() {
    scenario(Fixture {
        client: "codex",
        rel: ".codex/config.toml",
        syntax: Syntax::Toml,
        key: "mcp_servers",
        original: r#"# Codex CLI configuration
model = "gpt-5-codex"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[mcp_servers.docs]
command = "npx"   # the docs server
args = ["-y", "@acme/docs-mcp"]
startup_timeout_sec = 20

[mcp_servers.docs.env]
DOCS_TOKEN = "s3cret"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"

[profiles.fast]
model = "gpt-5-mini"
"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_gemini() {
    scenario(Fixture {
        client: "gemini",
        rel: ".gemini/settings.json",
        syntax: Syntax::Json,
        key: "mcpServers",
        original: r#"{
  "theme": "Dracula",
  "selectedAuthType": "gemini-api-key",
  "preferredEditor": "vscode",
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git"],
      "trust": false,
      "excludeTools": ["git_reset"]
    },
    "github": {
      "httpUrl": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "s3cret" },
      "timeout": 5000
    }
  }
}
"#,
        entry: command_args,
    })
    .await;
}

#[tokio::test]
async fn connect_opencode() {
    scenario(Fixture {
        client: "opencode",
        rel: ".config/opencode/opencode.json",
        syntax: Syntax::Json,
        key: "mcp",
        original: r#"{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "theme": "opencode",
  "mcp": {
    "everything": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
      "enabled": true,
      "environment": { "LOG": "debug" }
    },
    "jira": {
      "type": "remote",
      "url": "https://jira.example.com/mcp",
      "enabled": false
    }
  },
  "permission": { "edit": "ask" }
}
"#,
        entry: opencode_local,
    })
    .await;
}

//! The clients `tap connect` knows: where each keeps its MCP servers on Linux, in which
//! format, and how to tell whether it is installed. The locations of the clients
//! `tap mcp import` also reads come from there (`mcp_servers_import_clients::sources`), so
//! both commands agree on where a client's file is. docs/clients.md has the table.

use crate::mcp_servers_import_clients::{self as import, Dirs};
use std::path::{Path, PathBuf};

/// `CLIENT` of `tap connect` / `tap disconnect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Zed,
    Codex,
    Gemini,
    Opencode,
    Copilot,
}

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON or JSONC (comments, trailing commas): the entry is `<key>.tap`.
    Json { key: &'static str },
    /// Codex's TOML: `[mcp_servers.tap]`.
    Toml,
    /// The Copilot CLI extension (`tap install copilot`), not a server entry.
    CopilotExtension,
}

impl Client {
    pub const ALL: [Client; 10] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
        Client::Zed,
        Client::Codex,
        Client::Gemini,
        Client::Opencode,
        Client::Copilot,
    ];

    /// As the command line spells it; also the gateway session the entry names.
    pub fn word(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Zed => "zed",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Opencode => "opencode",
            Client::Copilot => "copilot",
        }
    }

    /// The client's name for people.
    pub fn title(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Zed => "Zed",
            Client::Codex => "Codex CLI",
            Client::Gemini => "Gemini CLI",
            Client::Opencode => "opencode",
            Client::Copilot => "GitHub Copilot CLI",
        }
    }

    pub fn format(self) -> Format {
        match self {
            Client::Vscode => Format::Json { key: "servers" },
            Client::Zed => Format::Json {
                key: "context_servers",
            },
            Client::Opencode => Format::Json { key: "mcp" },
            Client::Codex => Format::Toml,
            Client::Copilot => Format::CopilotExtension,
            _ => Format::Json { key: "mcpServers" },
        }
    }

    /// The same client in `tap mcp import`'s list, whose locations are reused.
    fn import_client(self) -> Option<import::Client> {
        Some(match self {
            Client::ClaudeDesktop => import::Client::ClaudeDesktop,
            Client::ClaudeCode => import::Client::ClaudeCode,
            Client::Cursor => import::Client::Cursor,
            Client::Vscode => import::Client::Vscode,
            Client::Windsurf => import::Client::Windsurf,
            Client::Codex => import::Client::Codex,
            Client::Gemini => import::Client::Gemini,
            Client::Zed | Client::Opencode | Client::Copilot => return None,
        })
    }

    /// The user-level file `tap connect` edits.
    pub fn file(self, d: &Dirs) -> PathBuf {
        if let Some(c) = self.import_client() {
            // `sources` lists the user file first, then project files.
            if let Some(user) = import::sources(c, d).into_iter().next() {
                return user.path;
            }
        }
        match self {
            Client::Zed => d.config.join("zed/settings.json"),
            Client::Opencode => d.config.join("opencode/opencode.json"),
            _ => copilot_home(d).join("extensions/tap/extension.mjs"),
        }
    }

    /// Directories whose presence means the client is (or was) installed.
    fn config_dirs(self, d: &Dirs) -> Vec<PathBuf> {
        match self {
            Client::ClaudeDesktop => vec![d.config.join("Claude")],
            Client::ClaudeCode => vec![d.home.join(".claude")],
            Client::Cursor => vec![d.home.join(".cursor")],
            Client::Vscode => vec![d.config.join("Code")],
            Client::Windsurf => vec![d.home.join(".codeium/windsurf")],
            Client::Zed => vec![d.config.join("zed")],
            Client::Codex => vec![d.codex.clone()],
            Client::Gemini => vec![d.home.join(".gemini")],
            Client::Opencode => vec![d.config.join("opencode")],
            Client::Copilot => vec![copilot_home(d)],
        }
    }

    /// Commands on `PATH` that mean the client is installed.
    fn binaries(self) -> &'static [&'static str] {
        match self {
            Client::ClaudeDesktop => &["claude-desktop"],
            Client::ClaudeCode => &["claude"],
            Client::Cursor => &["cursor"],
            Client::Vscode => &["code"],
            Client::Windsurf => &["windsurf"],
            Client::Zed => &["zed", "zeditor"],
            Client::Codex => &["codex"],
            Client::Gemini => &["gemini"],
            Client::Opencode => &["opencode"],
            Client::Copilot => &["copilot"],
        }
    }

    /// Its configuration directory, its file, or one of its commands on `PATH` exists.
    pub fn installed(self, d: &Dirs) -> bool {
        self.file(d).exists()
            || self.config_dirs(d).iter().any(|p| p.is_dir())
            || self.binaries().iter().any(|b| on_path(b))
    }
}

/// `$COPILOT_HOME`, else `~/.copilot` (under the `HOME` that `d` was made from).
pub fn copilot_home(d: &Dirs) -> PathBuf {
    std::env::var_os("COPILOT_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| d.home.join(".copilot"))
}

/// An executable file named `name` in a directory of `PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        let p: &Path = &dir.join(name);
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_has_its_own_file() {
        let d = Dirs {
            home: "/h".into(),
            config: "/h/.config".into(),
            codex: "/h/.codex".into(),
            cwd: "/w".into(),
        };
        let files: Vec<PathBuf> = Client::ALL.iter().map(|c| c.file(&d)).collect();
        assert_eq!(
            Client::ClaudeCode.file(&d),
            PathBuf::from("/h/.claude.json")
        );
        assert_eq!(
            Client::Vscode.file(&d),
            PathBuf::from("/h/.config/Code/User/mcp.json")
        );
        assert_eq!(
            Client::Zed.file(&d),
            PathBuf::from("/h/.config/zed/settings.json")
        );
        assert_eq!(
            Client::Codex.file(&d),
            PathBuf::from("/h/.codex/config.toml")
        );
        let mut unique = files.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), files.len());
    }
}

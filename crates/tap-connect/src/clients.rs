//! The clients whose files `tap connect` edits: where each keeps its MCP servers on Linux,
//! in which format, and how to tell whether it is installed. `tap mcp import` reads its
//! files from [`Client::files`] too, so both commands agree on where a client's file is.
//! docs/clients.md has the table.

use std::path::{Path, PathBuf};

/// A client with an MCP servers file (the Copilot CLI, connected through an extension, is
/// [`crate::copilot`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
}

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON or JSONC (comments, trailing commas): the entry is `<key>.tap`.
    Json { key: &'static str },
    /// Codex's TOML: `[mcp_servers.tap]`.
    Toml,
}

/// The directories the locations are under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    pub home: PathBuf,
    pub config: PathBuf,
    pub codex: PathBuf,
    /// The Copilot CLI's home, where tap's extension goes ([`crate::copilot`]).
    pub copilot: PathBuf,
    /// Where project files are looked for (`tap mcp import`).
    pub cwd: PathBuf,
}

impl Dirs {
    /// `$HOME`, `$XDG_CONFIG_HOME` (`~/.config`), `$CODEX_HOME` (`~/.codex`),
    /// `$COPILOT_HOME` (`~/.copilot`, any non-empty value as the Copilot CLI takes it), the
    /// current directory: those of the process asking (the CLI's, or the gateway's).
    pub fn from_env() -> Option<Self> {
        let home = dirs::home_dir()?;
        let absolute_var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        Some(Self {
            config: absolute_var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex: absolute_var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            copilot: std::env::var_os("COPILOT_HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".copilot")),
            cwd: std::env::current_dir()
                .ok()
                .and_then(|d| std::path::absolute(d).ok())
                .unwrap_or_else(|| PathBuf::from(".")),
            home,
        })
    }
}

impl Client {
    pub const ALL: [Client; 9] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::Vscode,
        Client::Windsurf,
        Client::Zed,
        Client::Codex,
        Client::Gemini,
        Client::Opencode,
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
        }
    }

    /// The client [`Client::word`] names.
    pub fn from_word(word: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.word() == word)
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
            _ => Format::Json { key: "mcpServers" },
        }
    }

    /// Every file the client reads servers from: the user file (the one `tap connect`
    /// edits) first, then project files under `d.cwd`.
    pub fn files(self, d: &Dirs) -> Vec<PathBuf> {
        match self {
            Client::ClaudeDesktop => vec![d.config.join("Claude/claude_desktop_config.json")],
            Client::ClaudeCode => vec![d.home.join(".claude.json"), d.cwd.join(".mcp.json")],
            Client::Cursor => vec![
                d.home.join(".cursor/mcp.json"),
                d.cwd.join(".cursor/mcp.json"),
            ],
            Client::Vscode => vec![
                d.config.join("Code/User/mcp.json"),
                d.cwd.join(".vscode/mcp.json"),
            ],
            Client::Windsurf => vec![d.home.join(".codeium/windsurf/mcp_config.json")],
            Client::Zed => vec![d.config.join("zed/settings.json")],
            Client::Codex => vec![d.codex.join("config.toml")],
            Client::Gemini => vec![
                d.home.join(".gemini/settings.json"),
                d.cwd.join(".gemini/settings.json"),
            ],
            Client::Opencode => vec![d.config.join("opencode/opencode.json")],
        }
    }

    /// The user-level file `tap connect` edits.
    pub fn file(self, d: &Dirs) -> PathBuf {
        self.files(d).swap_remove(0)
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
        }
    }

    /// Its configuration directory, its file, or one of its commands on `PATH` exists.
    pub fn installed(self, d: &Dirs) -> bool {
        self.file(d).exists()
            || self.config_dirs(d).iter().any(|p| p.is_dir())
            || self.binaries().iter().any(|b| on_path(b).is_some())
    }
}

/// The executable file named `name` in the first directory of `PATH` that has one.
pub fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let p: PathBuf = dir.join(name);
        let m = Path::new(&p).metadata().ok()?;
        (m.is_file() && m.permissions().mode() & 0o111 != 0).then_some(p)
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
            copilot: "/h/.copilot".into(),
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
        assert!(Client::ALL
            .iter()
            .all(|c| Client::from_word(c.word()) == Some(*c)));
    }
}

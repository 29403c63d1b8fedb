//! `CLIENT` of `tap connect` / `tap disconnect`: the clients whose MCP servers file
//! `tap_connect` edits, and the Copilot CLI, which is connected through `tap install
//! copilot`'s extension instead (kept here, beside that command).

use std::path::PathBuf;
use tap_connect::Dirs;

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

impl Client {
    /// The client with a servers file, `None` for the Copilot CLI.
    pub fn with_file(self) -> Option<tap_connect::Client> {
        Some(match self {
            Client::ClaudeDesktop => tap_connect::Client::ClaudeDesktop,
            Client::ClaudeCode => tap_connect::Client::ClaudeCode,
            Client::Cursor => tap_connect::Client::Cursor,
            Client::Vscode => tap_connect::Client::Vscode,
            Client::Windsurf => tap_connect::Client::Windsurf,
            Client::Zed => tap_connect::Client::Zed,
            Client::Codex => tap_connect::Client::Codex,
            Client::Gemini => tap_connect::Client::Gemini,
            Client::Opencode => tap_connect::Client::Opencode,
            Client::Copilot => return None,
        })
    }
}

/// The Copilot CLI's word and title, as `tap connect`'s list shows them.
pub const COPILOT_WORD: &str = "copilot";
pub const COPILOT_TITLE: &str = "GitHub Copilot CLI";

/// `$COPILOT_HOME`, else `~/.copilot` (under the `HOME` that `d` was made from).
pub fn copilot_home(d: &Dirs) -> PathBuf {
    std::env::var_os("COPILOT_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| d.home.join(".copilot"))
}

/// The extension file that connects the Copilot CLI.
pub fn copilot_file(d: &Dirs) -> PathBuf {
    copilot_home(d).join("extensions/tap/extension.mjs")
}

/// Its extension or home directory exists, or `copilot` is on `PATH`.
pub fn copilot_installed(d: &Dirs) -> bool {
    copilot_file(d).exists()
        || copilot_home(d).is_dir()
        || tap_connect::on_path("copilot").is_some()
}

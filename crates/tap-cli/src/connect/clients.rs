//! `CLIENT` of `tap connect` / `tap disconnect`: the clients whose MCP servers file
//! `tap_connect` edits, and the Copilot CLI, which is connected through `tap install
//! copilot`'s extension instead (`tap_connect::copilot`).

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
